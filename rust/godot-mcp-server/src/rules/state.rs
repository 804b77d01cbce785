//! The mutable half of the safety model every session shares: the approval
//! configuration, the enabled toolsets, the calls parked for approval.

use std::collections::{BTreeSet, HashMap};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use rmcp::RoleServer;
use rmcp::model::JsonObject;
use rmcp::service::Peer;
use serde_json::json;

use super::toolsets::{Toolset, ToolsetSelection};
use crate::error::{ErrorCode, ToolError};

// ---------------------------------------------------------------------------------
// Safety state: configuration, enabled toolsets, pending approvals
// ---------------------------------------------------------------------------------

pub(crate) use crate::config::{ApprovalConfig, ENV_FAIL_OPEN, ENV_REQUIRE, ENV_TOOLSETS};

/// A gated call waiting for the client's answer (protocol 2026-07-28 and later). The
/// call is kept here; the `requestState` the client echoes is only an opaque handle
/// to it, never trusted as data.
#[derive(Debug, Clone)]
pub(crate) struct PendingCall {
    pub(crate) tool: String,
    pub(crate) arguments: JsonObject,
    pub(crate) webhook_approved: bool,
    pub(crate) created: Instant,
}

pub(super) const PENDING_TTL: Duration = Duration::from_secs(600);
pub(super) const MAX_PENDING: usize = 256;

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
    /// `tools` is the toolset of every registered tool.
    pub fn summary(&self, tools: impl Iterator<Item = Toolset>) -> String {
        let enabled = self.enabled();
        let (mut total, mut listed) = (0, 0);
        for t in tools {
            total += 1;
            listed += usize::from(enabled.contains(&t));
        }
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

    pub(crate) fn park(&self, call: PendingCall) -> Result<String, ToolError> {
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
    pub(crate) fn unpark(&self, id: &str) -> Option<PendingCall> {
        let call = self.pending.lock().remove(id)?;
        (call.created.elapsed() < PENDING_TTL).then_some(call)
    }

    /// Whether the toolset of tool `name` is enabled, as a structured refusal: outside
    /// the operator's ceiling (naming it), or within it but not enabled.
    pub fn check_enabled(&self, name: &str, toolset: Toolset) -> Result<(), ToolError> {
        if self.is_enabled(toolset) {
            return Ok(());
        }
        if !self.allows(toolset) {
            let mut e = self.outside_ceiling(toolset);
            e.message = format!(
                "{} is unreachable: its toolset `{}` is outside the operator's ceiling ({ENV_TOOLSETS}={})",
                name,
                toolset.as_str(),
                self.ceiling_text()
            );
            return Err(e);
        }
        Err(ToolError::new(
            ErrorCode::ToolDisabled,
            format!(
                "{} is disabled: its toolset `{}` is not enabled in this server",
                name,
                toolset.as_str()
            ),
        )
        .required(toolset.as_str())
        .hint(format!(
            "Call manage_toolsets {{\"enable\":[\"{}\"]}}, then {name} again.",
            toolset.as_str()
        )))
    }
}
