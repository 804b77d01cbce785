//! The MCP face of the server: an rmcp `ServerHandler` over the tool registry.

use std::sync::Arc;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, Implementation, ListToolsResult,
    PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData as McpError, RoleServer, ServerHandler};
use serde_json::json;

use crate::safety::{CallContext, CallOutcome, run_call};
use crate::state::AppState;

/// One MCP session's handler. Cheap to clone; all state is shared.
#[derive(Debug, Clone)]
pub struct McpServer {
    state: Arc<AppState>,
    /// tools/list is the hottest read-only request; it is built once.
    tools: Arc<Vec<Tool>>,
}

impl McpServer {
    pub fn new(state: Arc<AppState>) -> Self {
        let tools = Arc::new(state.registry.iter().map(|t| t.to_mcp()).collect());
        Self { state, tools }
    }
}

const INSTRUCTIONS: &str = "godot-mcp reads and edits one Godot 4 project. File paths are \
res:// paths inside the project. Every tool carries _meta.safety_class: read_only tools change \
nothing; mutating tools take dry_run; destructive tools need confirm=true. Tool families can be \
enabled or disabled with manage_toolsets.";

impl ServerHandler for McpServer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(
            ServerCapabilities::builder()
                .enable_tools()
                .enable_tool_list_changed()
                .build(),
        )
        .with_server_info(
            Implementation::new("godot-mcp", env!("CARGO_PKG_VERSION")).with_title("godot-mcp"),
        )
        .with_instructions(INSTRUCTIONS)
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        // Tools of disabled toolsets are not offered.
        let enabled = self.state.safety.enabled();
        let tools = self
            .tools
            .iter()
            .filter(|t| {
                self.state
                    .registry
                    .get(&t.name)
                    .is_some_and(|d| enabled.contains(&d.meta.toolset))
            })
            .cloned()
            .collect();
        Ok(ListToolsResult::with_all_items(tools))
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        self.tools.iter().find(|t| t.name == name).cloned()
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        let Some(def) = self.state.registry.get(&request.name) else {
            return Err(McpError::invalid_params(
                format!("unknown tool: {}", request.name),
                Some(json!({
                    "code": "UNKNOWN_TOOL",
                    "tool": request.name,
                    "hint": "tools/list names every tool this server offers"
                })),
            ));
        };
        // Every call passes the safety policy; see safety.rs for the order of gates.
        let ctx = CallContext::from_request(&request, &context);
        let generation = self.state.safety.generation();
        let outcome = run_call(&self.state, def, request.arguments, &ctx).await;
        if self.state.safety.generation() != generation
            && let Err(e) = context.peer.notify_tool_list_changed().await
        {
            tracing::debug!(error = %e, "could not send tools/list_changed");
        }
        let result = match outcome {
            CallOutcome::InputRequired(input) => return Ok(input.into()),
            CallOutcome::Done(Ok(value)) => CallToolResult::structured(value),
            CallOutcome::Done(Err(err)) => {
                tracing::debug!(tool = def.meta.name, error = %err, "tool error");
                err.into_call_result()
            }
        };
        Ok(result.into())
    }
}
