//! Counts of what crossed each boundary of the HTTP transport.
//!
//! They exist so that a test can prove a refused request reached nothing: the guard
//! counts what it refused and what it let through to rmcp, and the MCP handler counts
//! the calls it ran and who made them. Counting is always on (a relaxed atomic add);
//! *reading* the counts over HTTP is a debug-build-only route that exists only when
//! `GODOT_MCP_TEST_COUNTERS=1` (see `crate::transport::http`), sits behind the same guard as
//! `/mcp`, and reveals numbers and session-derived principal ids, nothing else.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};

use parking_lot::Mutex;
use serde_json::{Value, json};

/// The env var that turns the counters route on (debug builds only).
pub(crate) const TEST_COUNTERS_ENV: &str = "GODOT_MCP_TEST_COUNTERS";

/// Most distinct principals tracked; beyond it calls are counted under `"(other)"`,
/// so a client opening endless sessions cannot grow this map without bound.
const MAX_TRACKED_PRINCIPALS: usize = 1024;

#[derive(Debug, Default)]
pub(crate) struct Counters {
    /// Requests refused by the guard (403 Host/Origin, 401 token), body unread.
    pub refused: AtomicU64,
    /// Requests the guard passed on to rmcp's streamable HTTP service.
    pub dispatched: AtomicU64,
    /// MCP server instances rmcp asked for (one per 2025-11-25 session, one per
    /// stateless request).
    pub handlers_created: AtomicU64,
    /// Handler methods run: `tools/list` and `tools/call`.
    pub handler_calls: AtomicU64,
    /// `tools/call` per principal id.
    tool_calls_by_principal: Mutex<BTreeMap<String, u64>>,
}

impl Counters {
    pub(crate) fn bump(counter: &AtomicU64) {
        counter.fetch_add(1, Ordering::Relaxed);
    }

    pub(crate) fn record_tool_call(&self, principal_id: &str) {
        Self::bump(&self.handler_calls);
        let mut map = self.tool_calls_by_principal.lock();
        let key = if map.contains_key(principal_id) || map.len() < MAX_TRACKED_PRINCIPALS {
            principal_id
        } else {
            "(other)"
        };
        *map.entry(key.to_owned()).or_insert(0) += 1;
    }

    pub(crate) fn snapshot(&self) -> Value {
        let load = |c: &AtomicU64| c.load(Ordering::Relaxed);
        json!({
            "refused": load(&self.refused),
            "dispatched": load(&self.dispatched),
            "handlers_created": load(&self.handlers_created),
            "handler_calls": load(&self.handler_calls),
            "tool_calls_by_principal": *self.tool_calls_by_principal.lock(),
        })
    }
}

/// Whether this build and environment expose the counters route.
pub(crate) fn route_enabled() -> bool {
    cfg!(debug_assertions) && std::env::var(TEST_COUNTERS_ENV).is_ok_and(|v| v == "1")
}
