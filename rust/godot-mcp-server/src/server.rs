//! The MCP face of the server: an rmcp `ServerHandler` over the tool registry.

use std::sync::Arc;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, Implementation, ListToolsResult,
    PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData as McpError, RoleServer, ServerHandler};
use serde_json::json;

use crate::state::AppState;
use crate::transport::counters::Counters;
use crate::transport::{Principal, TransportKind};

/// One MCP session's handler. Cheap to clone; all state is shared.
#[derive(Debug, Clone)]
pub struct McpServer {
    state: Arc<AppState>,
    /// tools/list is the hottest read-only request; it is built once.
    tools: Arc<Vec<Tool>>,
    /// Where calls come from; decides how each call's [`Principal`] is found.
    transport: TransportKind,
    /// HTTP only: what the transport's tests read to prove what reached a handler.
    counters: Option<Arc<Counters>>,
}

impl McpServer {
    /// The handler for the stdio client (principal `local`).
    pub fn new(state: Arc<AppState>) -> Self {
        let tools = Arc::new(state.registry.iter().map(|t| t.to_mcp()).collect());
        Self {
            state,
            tools,
            transport: TransportKind::Stdio,
            counters: None,
        }
    }

    /// A handler for one HTTP session (or one stateless request).
    pub fn for_http(state: Arc<AppState>, counters: Arc<Counters>) -> Self {
        Self {
            transport: TransportKind::Http,
            counters: Some(counters),
            ..Self::new(state)
        }
    }
}

const INSTRUCTIONS: &str = "godot-mcp reads and edits one Godot 4 project. File paths are \
res:// paths inside the project. Every tool carries _meta.safety_class: read_only tools change \
nothing; mutating tools take dry_run; destructive tools need confirm=true.";

impl ServerHandler for McpServer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
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
        if let Some(counters) = &self.counters {
            Counters::bump(&counters.handler_calls);
        }
        Ok(ListToolsResult::with_all_items(self.tools.as_ref().clone()))
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        self.tools.iter().find(|t| t.name == name).cloned()
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        let principal = Principal::of(self.transport, &context);
        if let Some(counters) = &self.counters {
            counters.record_tool_call(&principal.id);
        }
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
        let call = self
            .state
            .registry
            .call(self.state.clone(), def, request.arguments);
        let result = match crate::transport::with_principal(principal, call).await {
            Ok(value) => CallToolResult::structured(value),
            Err(err) => {
                tracing::debug!(tool = def.meta.name, error = %err, "tool error");
                err.into_call_result()
            }
        };
        Ok(result.into())
    }
}
