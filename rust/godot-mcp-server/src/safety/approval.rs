//! The approval gate: the webhook and elicitation guards, and [`approve`]. Its
//! configuration is `crate::config`'s; the calls it parks for a human are kept in the
//! shared `crate::rules::SafetyState`.

use super::webhook;
use crate::rules::{ApprovalConfig, ENV_FAIL_OPEN, ENV_REQUIRE, PendingCall, SafetyClass};

use std::time::Instant;

use rmcp::RoleServer;
use rmcp::model::{
    CallToolRequestParams, ElicitRequest, ElicitRequestParams, ElicitationAction,
    ElicitationSchema, InputRequest, InputRequests, InputRequiredResult, InputResponses,
    JsonObject, ProtocolVersion,
};
use rmcp::service::{ElicitationMode, Peer, RequestContext};
use serde::Serialize;
use serde_json::Value;

use crate::error::{ErrorCode, ToolError};
use crate::state::AppState;

// ---------------------------------------------------------------------------------
// The approval gate
// ---------------------------------------------------------------------------------

/// Who is calling: the transport's [`Principal`](crate::caller::Principal) (its
/// `id`, `session_id`, `transport` and `admission`, which idempotency scopes keys by),
/// and what the client said about itself at initialize (informative, not
/// authenticated). Sent to the webhook as `principal`.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct Caller {
    #[serde(flatten)]
    pub principal: crate::caller::Principal,
    pub client_name: Option<String>,
    pub client_version: Option<String>,
    pub protocol_version: Option<String>,
}

impl Caller {
    /// A call made by the server itself, with no client (tests).
    #[cfg(test)]
    pub(crate) fn detached() -> Self {
        Self {
            principal: crate::caller::Principal::local(),
            client_name: None,
            client_version: None,
            protocol_version: None,
        }
    }
}

/// How the elicitation guard can reach the human behind this call.
#[derive(Clone)]
pub(crate) enum ElicitChannel {
    /// Protocols before 2026-07-28: a server-to-client `elicitation/create` request.
    Request {
        peer: Peer<RoleServer>,
        supported: bool,
    },
    /// 2026-07-28 and later: answer with an input-required result; the retry carries
    /// the handle and the answers.
    InputRequired {
        supported: bool,
        request_state: Option<String>,
        responses: Option<InputResponses>,
    },
    /// No client to ask (made by the unit tests' detached context).
    #[cfg_attr(not(test), allow(dead_code))]
    None,
}

impl std::fmt::Debug for ElicitChannel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Request { supported, .. } => write!(f, "Request {{ supported: {supported} }}"),
            Self::InputRequired {
                supported,
                request_state,
                ..
            } => {
                write!(
                    f,
                    "InputRequired {{ supported: {supported}, request_state: {request_state:?} }}"
                )
            }
            Self::None => f.write_str("None"),
        }
    }
}

/// Everything about the caller the policy needs.
#[derive(Debug, Clone)]
pub(crate) struct CallContext {
    pub principal: Caller,
    pub elicit: ElicitChannel,
    /// The MCP session the call came in (keys its open change, `begin_change`).
    pub session: u64,
}

impl CallContext {
    /// No client to ask (unit tests).
    #[cfg(test)]
    pub(crate) fn detached() -> Self {
        Self {
            principal: Caller::detached(),
            elicit: ElicitChannel::None,
            session: DETACHED_SESSION,
        }
    }

    /// The same context in MCP session `session`.
    pub(crate) fn in_session(self, session: u64) -> Self {
        Self { session, ..self }
    }

    /// From an MCP request, on behalf of the transport's principal.
    pub(crate) fn from_request(
        request: &CallToolRequestParams,
        ctx: &RequestContext<RoleServer>,
        caller: &crate::caller::Principal,
    ) -> Self {
        let version = ctx.protocol_version();
        let client = ctx.client_info();
        let principal = Caller {
            principal: caller.clone(),
            client_name: client.as_ref().map(|c| c.name.clone()),
            client_version: client.as_ref().map(|c| c.version.clone()),
            protocol_version: version.as_ref().map(|v| v.as_str().to_string()),
        };
        let modern = version.is_some_and(|v| v.as_str() >= ProtocolVersion::V_2026_07_28.as_str());
        let elicit = if modern {
            ElicitChannel::InputRequired {
                supported: ctx
                    .client_capabilities()
                    .is_some_and(|c| c.elicitation.is_some()),
                request_state: request.request_state.clone(),
                responses: request.input_responses.clone(),
            }
        } else {
            ElicitChannel::Request {
                peer: ctx.peer.clone(),
                supported: ctx
                    .peer
                    .supported_elicitation_modes()
                    .contains(&ElicitationMode::Form),
            }
        };
        Self {
            principal,
            elicit,
            session: DETACHED_SESSION,
        }
    }
}

/// The session of a call with no MCP session (unit tests, internal calls).
pub(crate) const DETACHED_SESSION: u64 = u64::MAX;

/// One entry of a batch, as the approval gate sees it.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct BatchEntryView {
    pub tool: String,
    pub class: SafetyClass,
    pub arguments: JsonObject,
}

/// The JSON description of a call POSTed to the webhook.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct ApprovalRequest {
    pub tool: String,
    /// The class the call is judged as (for a batch, its most dangerous entry's).
    pub class: SafetyClass,
    pub arguments: JsonObject,
    /// The entries of a run_commands batch; `null` for a single call.
    pub batch: Option<Vec<BatchEntryView>>,
    pub principal: Caller,
}

/// The gate's answer when it does not deny.
#[derive(Debug)]
pub(crate) enum Approval {
    Granted,
    /// Ask the client (2026-07-28): return this result; the retry completes the call.
    InputRequired(InputRequiredResult),
}

fn denied(message: impl Into<String>) -> ToolError {
    ToolError::new(ErrorCode::ApprovalDenied, message).hint(
        "The call was not run and nothing changed. Ask the human operator, or change the request.",
    )
}

/// The webhook's verdict on an HTTP answer: approve only on an explicit approval
/// (`{"approved": true}` or `{"decision": "approve"}`) in a 2xx answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum WebhookVerdict {
    Approve,
    /// The webhook answered and said no (or said nothing recognisable in a 2xx or 4xx).
    Deny(String),
    /// The webhook did not work: unreachable, timed out, 5xx, not HTTP. Denies unless
    /// fail-open is set.
    Failed(String),
}

pub(crate) fn webhook_verdict(answer: Result<(u16, Vec<u8>), String>) -> WebhookVerdict {
    let (status, body) = match answer {
        Ok(a) => a,
        Err(e) => return WebhookVerdict::Failed(e),
    };
    if status >= 500 {
        return WebhookVerdict::Failed(format!("the approval webhook answered HTTP {status}"));
    }
    let json: Option<Value> = serde_json::from_slice(&body).ok();
    let reason = json
        .as_ref()
        .and_then(|j| j.get("reason"))
        .and_then(Value::as_str)
        .map(|r| format!(": {r}"))
        .unwrap_or_default();
    if !(200..300).contains(&status) {
        return WebhookVerdict::Deny(format!(
            "the approval webhook answered HTTP {status}{reason}"
        ));
    }
    let explicit = json.as_ref().is_some_and(|j| {
        j.get("approved") == Some(&Value::Bool(true))
            || j.get("decision").and_then(Value::as_str) == Some("approve")
    });
    if explicit {
        WebhookVerdict::Approve
    } else {
        WebhookVerdict::Deny(format!(
            "the approval webhook did not approve the call{reason}"
        ))
    }
}

/// Ask the webhook; the decision rule (fail-closed unless fail-open) is here.
pub(crate) async fn ask_webhook(
    config: &ApprovalConfig,
    request: &ApprovalRequest,
) -> Result<(), ToolError> {
    let Some(url) = &config.webhook else {
        return Ok(());
    };
    let body = serde_json::to_vec(request).map_err(|e| ToolError::internal(e.to_string()))?;
    let answer = webhook::post_json(url, &body, config.webhook_timeout).await;
    match webhook_verdict(answer) {
        WebhookVerdict::Approve => Ok(()),
        WebhookVerdict::Deny(why) => Err(denied(format!("{} was denied: {why}", request.tool))),
        WebhookVerdict::Failed(why) if config.fail_open => {
            tracing::warn!(tool = %request.tool, "approval webhook failed ({why}); allowing because {ENV_FAIL_OPEN}=true");
            Ok(())
        }
        WebhookVerdict::Failed(why) => Err(denied(format!(
            "{} was denied: {why}, and the gate fails closed",
            request.tool
        ))
        .hint(format!(
            "Make the approval webhook reachable, or (accepting the risk) set {ENV_FAIL_OPEN}=true."
        ))),
    }
}

const ELICIT_KEY: &str = "approval";

fn elicit_params(request: &ApprovalRequest) -> ElicitRequestParams {
    let what = match &request.batch {
        Some(entries) => format!(
            "run_commands with {} entries ({})",
            entries.len(),
            entries
                .iter()
                .map(|e| format!("{} [{}]", e.tool, e.class.as_str()))
                .collect::<Vec<_>>()
                .join(", ")
        ),
        None => request.tool.clone(),
    };
    let args = serde_json::to_string(&request.arguments).unwrap_or_default();
    let args: String = args.chars().take(2000).collect();
    let schema = ElicitationSchema::builder()
        .required_bool("approve")
        .description("Set approve to true to let this call run; anything else refuses it.")
        .build()
        .unwrap_or_else(|_| ElicitationSchema::new(Default::default()));
    ElicitRequestParams::FormElicitationParams {
        meta: None,
        message: format!(
            "godot-mcp asks to run {what} ({} call) with arguments {args}. Approve?",
            request.class.as_str()
        ),
        requested_schema: schema,
    }
}

/// Approve only an accept whose form says `approve: true`.
fn elicit_answer_approves(action: &ElicitationAction, content: Option<&Value>) -> bool {
    matches!(action, ElicitationAction::Accept)
        && content.and_then(|c| c.get("approve")) == Some(&Value::Bool(true))
}

/// The approval gate: the webhook (when configured), then the elicitation guard (when
/// required). Called only for real (not dry) runs of gated calls.
pub(crate) async fn approve(
    state: &AppState,
    ctx: &CallContext,
    request: &ApprovalRequest,
) -> Result<Approval, ToolError> {
    let config = &state.safety.approval;
    if !config.require_elicitation {
        ask_webhook(config, request).await?;
        return Ok(Approval::Granted);
    }
    let cannot_elicit = || {
        denied(format!(
            "{} needs the human's approval ({ENV_REQUIRE} is set), but this client cannot answer \
             elicitation requests",
            request.tool
        ))
        .hint("Use an MCP client that supports elicitation, or ask the operator to unset GODOT_MCP_APPROVAL_REQUIRE.")
    };
    match &ctx.elicit {
        ElicitChannel::None => Err(cannot_elicit()),
        ElicitChannel::Request {
            supported: false, ..
        }
        | ElicitChannel::InputRequired {
            supported: false, ..
        } => Err(cannot_elicit()),
        ElicitChannel::Request { peer, .. } => {
            ask_webhook(config, request).await?;
            let answer = peer
                .create_elicitation(elicit_params(request))
                .await
                .map_err(|e| {
                    denied(format!(
                        "{} was not approved: the elicitation failed ({e})",
                        request.tool
                    ))
                })?;
            if elicit_answer_approves(&answer.action, answer.content.as_ref()) {
                Ok(Approval::Granted)
            } else {
                Err(denied(format!("{} was declined by the user", request.tool)))
            }
        }
        ElicitChannel::InputRequired {
            request_state: None,
            ..
        } => {
            ask_webhook(config, request).await?;
            let handle = state.safety.park(PendingCall {
                tool: request.tool.clone(),
                arguments: request.arguments.clone(),
                webhook_approved: config.webhook.is_some(),
                created: Instant::now(),
            })?;
            let mut requests = InputRequests::new();
            requests.insert(
                ELICIT_KEY.to_string(),
                InputRequest::Elicitation(ElicitRequest::new(elicit_params(request))),
            );
            Ok(Approval::InputRequired(InputRequiredResult::new(
                Some(requests),
                Some(handle),
            )))
        }
        ElicitChannel::InputRequired {
            request_state: Some(handle),
            responses,
            ..
        } => {
            // The handle names a call parked server-side; the retry must be that very call.
            let Some(parked) = state.safety.unpark(handle) else {
                return Err(denied(format!(
                    "{} was not approved: the approval handle is unknown, expired or already used",
                    request.tool
                )));
            };
            if parked.tool != request.tool || parked.arguments != request.arguments {
                return Err(denied(format!(
                    "{} was not approved: the retried call differs from the call that was approved",
                    request.tool
                )));
            }
            if !parked.webhook_approved {
                ask_webhook(config, request).await?;
            }
            let answer = responses.as_ref().and_then(|r| r.get(ELICIT_KEY));
            let action = answer
                .and_then(|a| a.get("action"))
                .and_then(|a| serde_json::from_value::<ElicitationAction>(a.clone()).ok());
            let content = answer.and_then(|a| a.get("content"));
            match action {
                Some(action) if elicit_answer_approves(&action, content) => Ok(Approval::Granted),
                _ => Err(denied(format!("{} was declined by the user", request.tool))),
            }
        }
    }
}
