//! The approval gate: its configuration (environment), the session state that parks
//! calls waiting for a human, the webhook and elicitation guards, and [`approve`].

use super::*;

use std::collections::{BTreeSet, HashMap};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use rmcp::RoleServer;
use rmcp::model::{
    CallToolRequestParams, ElicitRequest, ElicitRequestParams, ElicitationAction,
    ElicitationSchema, InputRequest, InputRequests, InputRequiredResult, InputResponses,
    JsonObject, ProtocolVersion,
};
use rmcp::service::{ElicitationMode, Peer, RequestContext};
use serde::Serialize;
use serde_json::{Value, json};

use crate::error::{ErrorCode, ToolError};
use crate::state::AppState;
use crate::tools::ToolDef;

// ---------------------------------------------------------------------------------
// Safety state: configuration, enabled toolsets, pending approvals
// ---------------------------------------------------------------------------------

pub use crate::config::{
    ApprovalConfig, ENV_FAIL_OPEN, ENV_REQUIRE, ENV_TOOLSETS, ENV_WEBHOOK, ENV_WEBHOOK_TIMEOUT_MS,
};

/// A gated call waiting for the client's answer (protocol 2026-07-28 and later). The
/// call is kept here; the `requestState` the client echoes is only an opaque handle
/// to it, never trusted as data.
#[derive(Debug, Clone)]
struct PendingCall {
    tool: String,
    arguments: JsonObject,
    webhook_approved: bool,
    created: Instant,
}

const PENDING_TTL: Duration = Duration::from_secs(600);
const MAX_PENDING: usize = 256;

/// The mutable half of the safety model, shared by all sessions of a server.
#[derive(Debug)]
pub struct SafetyState {
    pub approval: ApprovalConfig,
    /// The operator's ceiling: toolsets outside it are unreachable, whatever an agent asks.
    ceiling: BTreeSet<Toolset>,
    toolsets: parking_lot::RwLock<BTreeSet<Toolset>>,
    /// Bumped on every toolset change, so the server knows to send tools/list_changed.
    generation: AtomicU64,
    pending: parking_lot::Mutex<HashMap<String, PendingCall>>,
    /// The sessions to tell when the toolsets change (the enabled set is shared by
    /// every session of this server), by the session's key.
    listeners: parking_lot::Mutex<Vec<(u64, Peer<RoleServer>)>>,
}

impl SafetyState {
    /// A state whose ceiling and start set are both `toolsets` (an operator who named them).
    pub fn new(approval: ApprovalConfig, toolsets: BTreeSet<Toolset>) -> Self {
        Self::with_selection(
            approval,
            ToolsetSelection {
                ceiling: toolsets.clone(),
                enabled: toolsets,
            },
        )
    }

    pub fn with_selection(approval: ApprovalConfig, selection: ToolsetSelection) -> Self {
        let ToolsetSelection {
            mut ceiling,
            enabled,
        } = selection;
        // Discovery is always reachable: it is how an agent finds the rest.
        ceiling.insert(Toolset::Toolsets);
        let mut enabled: BTreeSet<Toolset> = enabled.intersection(&ceiling).copied().collect();
        enabled.insert(Toolset::Toolsets);
        Self {
            approval,
            ceiling,
            toolsets: parking_lot::RwLock::new(enabled),
            generation: AtomicU64::new(0),
            pending: parking_lot::Mutex::new(HashMap::new()),
            listeners: parking_lot::Mutex::new(Vec::new()),
        }
    }

    pub fn is_enabled(&self, toolset: Toolset) -> bool {
        self.toolsets.read().contains(&toolset)
    }

    pub fn enabled(&self) -> BTreeSet<Toolset> {
        self.toolsets.read().clone()
    }

    /// One line for the operator at start: what is listed, and what may be enabled.
    pub fn summary(&self, registry: &crate::tools::Registry) -> String {
        let enabled = self.enabled();
        let total = registry.iter().count();
        let listed = registry
            .iter()
            .filter(|d| enabled.contains(&d.meta.toolset))
            .count();
        let ceiling = if self.ceiling.len() == Toolset::ALL.len() {
            "all".to_string()
        } else {
            self.ceiling_text()
        };
        format!(
            "{listed} of {total} tools listed (toolsets {}); agents may enable: {ceiling}",
            enabled
                .iter()
                .map(|t| t.as_str())
                .collect::<Vec<_>>()
                .join(",")
        )
    }

    /// Whether the operator's ceiling lets an agent enable `toolset`.
    pub fn allows(&self, toolset: Toolset) -> bool {
        self.ceiling.contains(&toolset)
    }

    fn ceiling_text(&self) -> String {
        self.ceiling
            .iter()
            .map(|t| t.as_str())
            .collect::<Vec<_>>()
            .join(",")
    }

    /// The refusal for a toolset outside the operator's ceiling; it names the ceiling.
    pub fn outside_ceiling(&self, toolset: Toolset) -> ToolError {
        ToolError::new(
            ErrorCode::ToolDisabled,
            format!(
                "toolset `{}` is outside the operator's ceiling ({ENV_TOOLSETS}={}): it cannot be enabled in this server",
                toolset.as_str(),
                self.ceiling_text()
            ),
        )
        .required(toolset.as_str())
        .details(json!({
            "toolset": toolset.as_str(),
            "ceiling": self.ceiling.iter().map(|t| t.as_str()).collect::<Vec<_>>(),
        }))
        .hint(format!(
            "Only the operator can widen it: restart the server with --toolsets (or {ENV_TOOLSETS}) naming {}.",
            toolset.as_str()
        ))
    }

    /// Enable and disable toolsets; returns whether anything changed. The
    /// `toolsets` family cannot be disabled (it is how one turns things back on), and
    /// nothing outside the operator's ceiling can be enabled. Checked whole before
    /// anything changes.
    pub fn set_toolsets(&self, enable: &[Toolset], disable: &[Toolset]) -> Result<bool, ToolError> {
        let mut current = self.toolsets.write();
        let set = self.toolsets_after(&current, enable, disable)?;
        let changed = set != *current;
        if changed {
            *current = set;
            self.generation.fetch_add(1, Ordering::SeqCst);
        }
        Ok(changed)
    }

    /// The enabled set after enabling and disabling; changes nothing (a dry run of
    /// [`Self::set_toolsets`]).
    pub fn preview_toolsets(
        &self,
        enable: &[Toolset],
        disable: &[Toolset],
    ) -> Result<BTreeSet<Toolset>, ToolError> {
        self.toolsets_after(&self.toolsets.read(), enable, disable)
    }

    fn toolsets_after(
        &self,
        current: &BTreeSet<Toolset>,
        enable: &[Toolset],
        disable: &[Toolset],
    ) -> Result<BTreeSet<Toolset>, ToolError> {
        if disable.contains(&Toolset::Toolsets) {
            return Err(ToolError::invalid_params(
                "disable",
                "the toolsets toolset cannot be disabled: it is how toolsets are turned back on",
            ));
        }
        if let Some(t) = enable.iter().find(|t| !self.allows(**t)) {
            return Err(self.outside_ceiling(*t).param("enable"));
        }
        let mut set = current.clone();
        set.extend(enable.iter().copied());
        for t in disable {
            set.remove(t);
        }
        Ok(set)
    }

    pub fn generation(&self) -> u64 {
        self.generation.load(Ordering::SeqCst)
    }

    /// Tell session `key` (its peer) when the toolsets change.
    pub fn listen(&self, key: u64, peer: Peer<RoleServer>) {
        let mut listeners = self.listeners.lock();
        listeners.retain(|(_, p)| !p.is_transport_closed());
        listeners.push((key, peer));
    }

    /// The live sessions other than `key`, to tell of a toolset change `key` made.
    pub fn other_listeners(&self, key: u64) -> Vec<Peer<RoleServer>> {
        let mut listeners = self.listeners.lock();
        listeners.retain(|(_, p)| !p.is_transport_closed());
        listeners
            .iter()
            .filter(|(k, _)| *k != key)
            .map(|(_, p)| p.clone())
            .collect()
    }

    fn park(&self, call: PendingCall) -> Result<String, ToolError> {
        let mut id = [0u8; 16];
        getrandom::fill(&mut id).map_err(|e| ToolError::internal(format!("getrandom: {e}")))?;
        let id = hex::encode(id);
        let mut pending = self.pending.lock();
        pending.retain(|_, p| p.created.elapsed() < PENDING_TTL);
        while pending.len() >= MAX_PENDING {
            let oldest = pending
                .iter()
                .min_by_key(|(_, p)| p.created)
                .map(|(k, _)| k.clone());
            match oldest {
                Some(k) => pending.remove(&k),
                None => break,
            };
        }
        pending.insert(id.clone(), call);
        Ok(id)
    }

    /// Take (single use) a parked call that has not expired.
    fn unpark(&self, id: &str) -> Option<PendingCall> {
        let call = self.pending.lock().remove(id)?;
        (call.created.elapsed() < PENDING_TTL).then_some(call)
    }

    /// Whether the toolset of `def` is enabled, as a structured refusal: outside the
    /// operator's ceiling (naming it), or within it but not enabled.
    pub fn check_enabled(&self, def: &ToolDef) -> Result<(), ToolError> {
        let toolset = def.meta.toolset;
        if self.is_enabled(toolset) {
            return Ok(());
        }
        if !self.allows(toolset) {
            let mut e = self.outside_ceiling(toolset);
            e.message = format!(
                "{} is unreachable: its toolset `{}` is outside the operator's ceiling ({ENV_TOOLSETS}={})",
                def.meta.name,
                toolset.as_str(),
                self.ceiling_text()
            );
            return Err(e);
        }
        Err(ToolError::new(
            ErrorCode::ToolDisabled,
            format!(
                "{} is disabled: its toolset `{}` is not enabled in this server",
                def.meta.name,
                toolset.as_str()
            ),
        )
        .required(toolset.as_str())
        .hint(format!(
            "Enable it with manage_toolsets (enable: [\"{}\"]); list_toolsets shows every toolset.",
            toolset.as_str()
        )))
    }
}

// ---------------------------------------------------------------------------------
// The approval gate
// ---------------------------------------------------------------------------------

/// Who is calling: the transport's [`Principal`](crate::caller::Principal) (its
/// `id`, `session_id`, `transport` and `admission`, which idempotency scopes keys by),
/// and what the client said about itself at initialize (informative, not
/// authenticated). Sent to the webhook as `principal`.
#[derive(Debug, Clone, Serialize)]
pub struct Caller {
    #[serde(flatten)]
    pub principal: crate::caller::Principal,
    pub client_name: Option<String>,
    pub client_version: Option<String>,
    pub protocol_version: Option<String>,
}

impl Caller {
    /// A call made by the server itself, with no client (tests, detached work).
    pub fn detached() -> Self {
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
pub enum ElicitChannel {
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
    /// No client to ask.
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
pub struct CallContext {
    pub principal: Caller,
    pub elicit: ElicitChannel,
}

impl CallContext {
    /// No client to ask (unit tests, internal calls).
    pub fn detached() -> Self {
        Self {
            principal: Caller::detached(),
            elicit: ElicitChannel::None,
        }
    }

    /// From an MCP request, on behalf of the transport's principal.
    pub fn from_request(
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
        Self { principal, elicit }
    }
}

/// One entry of a batch, as the approval gate sees it.
#[derive(Debug, Clone, Serialize)]
pub struct BatchEntryView {
    pub tool: String,
    pub class: SafetyClass,
    pub arguments: JsonObject,
}

/// The JSON description of a call POSTed to the webhook.
#[derive(Debug, Clone, Serialize)]
pub struct ApprovalRequest {
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
pub enum Approval {
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
pub enum WebhookVerdict {
    Approve,
    /// The webhook answered and said no (or said nothing recognisable in a 2xx or 4xx).
    Deny(String),
    /// The webhook did not work: unreachable, timed out, 5xx, not HTTP. Denies unless
    /// fail-open is set.
    Failed(String),
}

pub fn webhook_verdict(answer: Result<(u16, Vec<u8>), String>) -> WebhookVerdict {
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
pub async fn ask_webhook(
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
pub async fn approve(
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
