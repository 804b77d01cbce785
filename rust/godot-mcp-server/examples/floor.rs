//! The floor for start-up and memory: a bare rmcp stdio server with two tools and
//! nothing else (no journal, no lease, no bridge), built from the same rmcp, tokio
//! runtime flavour and release profile as `godot-mcp serve`. scripts/bench-startup.py
//! runs it side by side with `godot-mcp serve` and prints the ratios
//! (docs/performance.md).
//!
//!   cargo build --release -p godot-mcp-server --example floor

use rmcp::handler::server::{router::tool::ToolRouter, wrapper::Parameters};
use rmcp::model::{ServerCapabilities, ServerConfig};
use rmcp::{ServerHandler, ServiceExt, tool, tool_handler, tool_router};

/// Two numbers.
#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Pair {
    /// First operand.
    a: i64,
    /// Second operand.
    b: i64,
}

/// Some text.
#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Text {
    /// The text to return.
    text: String,
}

#[derive(Debug, Clone)]
struct Floor {
    tool_router: ToolRouter<Self>,
}

#[tool_router(router = tool_router)]
impl Floor {
    #[tool(description = "Add two integers.")]
    async fn add(&self, Parameters(p): Parameters<Pair>) -> String {
        p.a.saturating_add(p.b).to_string()
    }

    #[tool(description = "Return the text unchanged.")]
    async fn echo(&self, Parameters(t): Parameters<Text>) -> String {
        t.text
    }
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for Floor {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
    }
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    runtime.block_on(async {
        let service = Floor {
            tool_router: Floor::tool_router(),
        }
        .serve(rmcp::transport::stdio())
        .await?;
        service.waiting().await?;
        Ok(())
    })
}
