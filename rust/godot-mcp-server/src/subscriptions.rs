//! `resources/subscribe`: the sessions watching the journal's resources, told when a
//! transaction ends.
//!
//! The resources are `godot-mcp://transactions` (the list) and
//! `godot-mcp://transactions/{transaction_id}` (one row). Whatever ends a
//! transaction (a tool call's write, a launch reaped, an editor reply that came
//! late) calls [`Subscriptions::journal_changed`], the one place that finds which
//! rows reached a terminal state since it last looked and sends
//! `notifications/resources/updated` for the list and for each of those rows to
//! the sessions subscribed to them. A URI that names no resource of this server may
//! be subscribed to (the protocol does not forbid it); it is never updated.

use std::collections::{BTreeMap, BTreeSet, HashSet};

use godot_mcp_journal::{Journal, TxnFilter, TxnRecord, TxnStatus};
use parking_lot::Mutex;
use rmcp::RoleServer;
use rmcp::model::ResourceUpdatedNotificationParam;
use rmcp::service::Peer;

/// The journal's transactions as an MCP resource.
pub const TRANSACTIONS_URI: &str = "godot-mcp://transactions";
/// One transaction, as an MCP resource template.
pub const TRANSACTION_TEMPLATE: &str = "godot-mcp://transactions/{transaction_id}";

/// How many of the newest rows a change is looked for in: more transactions than
/// this cannot end between two looks (every call and every reap looks).
const WATCHED_ROWS: usize = 1000;

/// The URI of one transaction's resource.
pub fn transaction_uri(id: &str) -> String {
    format!("{TRANSACTIONS_URI}/{id}")
}

/// Who watches what, and which transactions were already seen ended.
#[derive(Debug, Default)]
pub struct Subscriptions {
    inner: Mutex<Inner>,
}

#[derive(Debug, Default)]
struct Inner {
    /// URI → (session, its peer).
    watchers: BTreeMap<String, Vec<(u64, Peer<RoleServer>)>>,
    /// The rows already terminal at the last look; `None` until the first subscription.
    ended: Option<HashSet<String>>,
}

fn terminal_ids(journal: &Mutex<Journal>) -> Option<HashSet<String>> {
    let rows = journal
        .lock()
        .list_transactions(&TxnFilter {
            status: None,
            limit: WATCHED_ROWS,
        })
        .ok()?;
    Some(
        rows.into_iter()
            .filter(|r| r.status != TxnStatus::Open)
            .map(|r| r.transaction_id.to_string())
            .collect(),
    )
}

impl Subscriptions {
    /// `session` watches `uri` from now on.
    pub fn subscribe(
        &self,
        journal: &Mutex<Journal>,
        session: u64,
        uri: String,
        peer: Peer<RoleServer>,
    ) {
        // Read before the lock: the journal's lock is never taken under this one.
        let seen = terminal_ids(journal);
        let mut inner = self.inner.lock();
        if inner.ended.is_none() {
            inner.ended = seen;
        }
        let list = inner.watchers.entry(uri).or_default();
        list.retain(|(s, p)| *s != session && !p.is_transport_closed());
        list.push((session, peer));
    }

    /// `session` stops watching `uri`.
    pub fn unsubscribe(&self, session: u64, uri: &str) {
        let mut inner = self.inner.lock();
        if let Some(list) = inner.watchers.get_mut(uri) {
            list.retain(|(s, _)| *s != session);
        }
    }

    /// The journal may have changed: every transaction that ended since the last look
    /// updates its own resource and the list, for whoever watches them.
    pub fn journal_changed(&self, journal: &Mutex<Journal>) {
        if self.inner.lock().watchers.values().all(Vec::is_empty) {
            return;
        }
        let Some(now) = terminal_ids(journal) else {
            return;
        };
        let mut inner = self.inner.lock();
        let before = inner.ended.replace(now.clone()).unwrap_or_default();
        let newly: BTreeSet<&String> = now.difference(&before).collect();
        if newly.is_empty() {
            return;
        }
        let mut sends: Vec<(Peer<RoleServer>, String)> = Vec::new();
        let mut uris: Vec<String> = newly.iter().map(|id| transaction_uri(id)).collect();
        uris.push(TRANSACTIONS_URI.to_owned());
        for uri in uris {
            if let Some(list) = inner.watchers.get_mut(&uri) {
                list.retain(|(_, p)| !p.is_transport_closed());
                sends.extend(list.iter().map(|(_, p)| (p.clone(), uri.clone())));
            }
        }
        drop(inner);
        if sends.is_empty() {
            return;
        }
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return;
        };
        runtime.spawn(async move {
            for (peer, uri) in sends {
                let _ = peer
                    .notify_resource_updated(ResourceUpdatedNotificationParam::new(uri))
                    .await;
            }
        });
    }
}

/// One transaction's row, when it is among the newest [`WATCHED_ROWS`].
pub fn transaction(journal: &Mutex<Journal>, id: &str) -> Option<TxnRecord> {
    journal
        .lock()
        .list_transactions(&TxnFilter {
            status: None,
            limit: WATCHED_ROWS,
        })
        .ok()?
        .into_iter()
        .find(|r| r.transaction_id.to_string() == id)
}
