//! Who is told what changed: `resources/subscribe` sessions (protocols before
//! 2026-07-28) and `subscriptions/listen` streams (2026-07-28), on one server.
//!
//! The resources are `godot-mcp://transactions` (the list) and
//! `godot-mcp://transactions/{transaction_id}` (one row). Whatever ends a
//! transaction (a tool call's write, a launch reaped, an editor reply that came
//! late) calls [`Subscriptions::journal_changed`], the one place that finds which
//! rows reached a terminal state since it last looked and sends
//! `notifications/resources/updated` for the list and for each of those rows to
//! the sessions subscribed to them and the listen streams that asked for them. A
//! toolset change reaches the listen streams that asked for `toolsListChanged`
//! through [`Subscriptions::tools_changed`].
//!
//! Everything here is bounded: a session watches at most [`MAX_PER_SESSION`] URIs,
//! the server holds at most [`MAX_SUBSCRIPTIONS`] (session, URI) pairs and
//! [`MAX_LISTEN_STREAMS`] listen streams; past a bound the request gets an error that
//! says which bound and what to do. A session's subscriptions go when it ends
//! ([`Subscriptions::forget`]), a listen stream's when its request ends. A URI that
//! names no resource of this server is never kept (it could never be updated).

use std::collections::{BTreeMap, BTreeSet, HashSet};

use godot_mcp_journal::{Journal, TxnFilter, TxnId, TxnRecord, TxnStatus};
use parking_lot::Mutex;
use rmcp::RoleServer;
use rmcp::model::ResourceUpdatedNotificationParam;
use rmcp::service::{Peer, SubscriptionSink};

/// The journal's transactions as an MCP resource.
pub(crate) const TRANSACTIONS_URI: &str = "godot-mcp://transactions";
/// One transaction, as an MCP resource template.
pub(crate) const TRANSACTION_TEMPLATE: &str = "godot-mcp://transactions/{transaction_id}";

/// How many URIs one session (or one listen stream) may watch.
pub(crate) const MAX_PER_SESSION: usize = 32;
/// How many (session, URI) subscriptions the server holds in all.
pub(crate) const MAX_SUBSCRIPTIONS: usize = 256;
/// How many `subscriptions/listen` streams may be open at once.
pub(crate) const MAX_LISTEN_STREAMS: usize = 64;

/// How many of the newest rows a change is looked for in: more transactions than
/// this cannot end between two looks (every call and every reap looks).
const WATCHED_ROWS: usize = 1000;

/// The URI of one transaction's resource.
pub(crate) fn transaction_uri(id: &str) -> String {
    format!("{TRANSACTIONS_URI}/{id}")
}

/// Whether `uri` names a resource this server serves: the list, or one transaction
/// by a well-formed id (in the form the server writes it). Checked without the
/// journal: a transaction that does not exist yet cannot be named (ids are random).
pub(crate) fn served(uri: &str) -> bool {
    if uri == TRANSACTIONS_URI {
        return true;
    }
    uri.strip_prefix(TRANSACTIONS_URI)
        .and_then(|rest| rest.strip_prefix('/'))
        .and_then(|id| id.parse::<TxnId>().ok().map(|t| t.to_string() == id))
        .unwrap_or(false)
}

/// A subscription refused: which bound it met.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
#[allow(
    clippy::enum_variant_names,
    reason = "each says which bound is full: a session's, the server's"
)]
pub enum Refused {
    #[error(
        "this session already watches {MAX_PER_SESSION} resources, the most one session may; \
         nothing was subscribed"
    )]
    SessionFull,
    #[error(
        "the server already holds {MAX_SUBSCRIPTIONS} resource subscriptions across its \
         sessions, the most it keeps; nothing was subscribed"
    )]
    ServerFull,
    #[error(
        "{MAX_LISTEN_STREAMS} subscriptions/listen streams are already open, the most the \
         server keeps; this stream is closed"
    )]
    ListenFull,
}

impl Refused {
    /// The machine-readable code and the one step that gets past it.
    pub fn code_and_hint(&self) -> (&'static str, &'static str) {
        match self {
            Self::SessionFull => (
                "SUBSCRIPTION_LIMIT",
                "resources/unsubscribe a URI you no longer need, or subscribe to \
                 godot-mcp://transactions alone: it is updated whenever any transaction ends",
            ),
            Self::ServerFull => (
                "SUBSCRIPTION_LIMIT",
                "subscribe to godot-mcp://transactions alone (updated whenever any \
                 transaction ends), or retry once other sessions have ended",
            ),
            Self::ListenFull => (
                "LISTEN_LIMIT",
                "close a subscriptions/listen stream you no longer read (one stream can \
                 carry every kind of notification), then listen again",
            ),
        }
    }
}

/// Who watches what, and which transactions were already seen ended.
#[derive(Debug, Default)]
pub struct Subscriptions {
    inner: Mutex<Inner>,
}

#[derive(Debug, Default)]
struct Inner {
    /// URI → (session, its peer): `resources/subscribe`.
    watchers: BTreeMap<String, Vec<(u64, Peer<RoleServer>)>>,
    /// The open `subscriptions/listen` streams, by key.
    listens: BTreeMap<u64, SubscriptionSink>,
    next_listen: u64,
    /// The rows already terminal at the last look; `None` until the first look.
    ended: Option<HashSet<String>>,
}

impl Inner {
    /// Forget watchers whose session's transport is gone.
    fn prune(&mut self) {
        for list in self.watchers.values_mut() {
            list.retain(|(_, p)| !p.is_transport_closed());
        }
        self.watchers.retain(|_, list| !list.is_empty());
    }

    fn count(&self) -> usize {
        self.watchers.values().map(Vec::len).sum()
    }

    fn count_of(&self, session: u64) -> usize {
        self.watchers
            .values()
            .filter(|list| list.iter().any(|(s, _)| *s == session))
            .count()
    }

    fn watches(&self, session: u64, uri: &str) -> bool {
        self.watchers
            .get(uri)
            .is_some_and(|list| list.iter().any(|(s, _)| *s == session))
    }
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

/// An open listen stream's place in [`Subscriptions`]; dropping it closes the place.
#[derive(Debug)]
pub struct ListenGuard<'a> {
    subscriptions: &'a Subscriptions,
    key: u64,
}

impl Drop for ListenGuard<'_> {
    fn drop(&mut self) {
        self.subscriptions.inner.lock().listens.remove(&self.key);
    }
}

impl Subscriptions {
    /// `session` watches `uri` from now on. A URI this server does not serve is
    /// accepted and not kept: nothing would ever update it. The journal is read only
    /// when nobody watched before (to learn what had already ended), never under this
    /// lock.
    pub fn subscribe(
        &self,
        journal: &Mutex<Journal>,
        session: u64,
        uri: String,
        peer: Peer<RoleServer>,
    ) -> Result<(), Refused> {
        if !served(&uri) {
            return Ok(());
        }
        self.add(session, uri, peer)?;
        self.prime(journal);
        Ok(())
    }

    fn add(&self, session: u64, uri: String, peer: Peer<RoleServer>) -> Result<(), Refused> {
        let mut inner = self.inner.lock();
        inner.prune();
        if !inner.watches(session, &uri) {
            if inner.count_of(session) >= MAX_PER_SESSION {
                return Err(Refused::SessionFull);
            }
            if inner.count() >= MAX_SUBSCRIPTIONS {
                return Err(Refused::ServerFull);
            }
        }
        let list = inner.watchers.entry(uri).or_default();
        list.retain(|(s, _)| *s != session);
        list.push((session, peer));
        Ok(())
    }

    /// `session` stops watching `uri`.
    pub fn unsubscribe(&self, session: u64, uri: &str) {
        let mut inner = self.inner.lock();
        if let Some(list) = inner.watchers.get_mut(uri) {
            list.retain(|(s, _)| *s != session);
            if list.is_empty() {
                inner.watchers.remove(uri);
            }
        }
    }

    /// `session` ended: everything it watched goes.
    pub fn forget(&self, session: u64) {
        let mut inner = self.inner.lock();
        for list in inner.watchers.values_mut() {
            list.retain(|(s, _)| *s != session);
        }
        inner.watchers.retain(|_, list| !list.is_empty());
    }

    /// How many (session, URI) subscriptions and listen streams are held now.
    pub fn held(&self) -> (usize, usize) {
        let inner = self.inner.lock();
        (inner.count(), inner.listens.len())
    }

    /// A `subscriptions/listen` stream opens: it gets what its accepted filter names
    /// until the returned guard is dropped (when its request ends).
    pub fn open_listen(&self, sink: SubscriptionSink) -> Result<ListenGuard<'_>, Refused> {
        let mut inner = self.inner.lock();
        if inner.listens.len() >= MAX_LISTEN_STREAMS {
            return Err(Refused::ListenFull);
        }
        let key = inner.next_listen;
        inner.next_listen += 1;
        inner.listens.insert(key, sink);
        Ok(ListenGuard {
            subscriptions: self,
            key,
        })
    }

    /// The toolsets changed: every listen stream that asked for `toolsListChanged`
    /// hears `notifications/tools/list_changed`, tagged with its subscription id.
    pub async fn tools_changed(&self) {
        let sinks: Vec<SubscriptionSink> = self
            .inner
            .lock()
            .listens
            .values()
            .filter(|s| s.accepted().tools_list_changed == Some(true))
            .cloned()
            .collect();
        for sink in sinks {
            if let Err(e) = sink.notify_tool_list_changed().await {
                tracing::debug!(error = %e, "could not send tools/list_changed to a listen stream");
            }
        }
    }

    /// The journal may have changed: every transaction that ended since the last look
    /// updates its own resource and the list, for whoever watches them.
    pub fn journal_changed(&self, journal: &Mutex<Journal>) {
        {
            let mut inner = self.inner.lock();
            let listening = inner
                .listens
                .values()
                .any(|s| s.accepted().resource_subscriptions.is_some());
            if !listening && inner.watchers.values().all(Vec::is_empty) {
                // Nobody watches: what ends now is learnt by the next subscription.
                inner.ended = None;
                return;
            }
        }
        // Read before the lock: the journal's lock is never taken under this one.
        let Some(now) = terminal_ids(journal) else {
            return;
        };
        let mut inner = self.inner.lock();
        // The first look only learns what had already ended before anyone watched.
        let Some(before) = inner.ended.replace(now.clone()) else {
            return;
        };
        let newly: BTreeSet<&String> = now.difference(&before).collect();
        if newly.is_empty() {
            return;
        }
        let mut uris: Vec<String> = newly.iter().map(|id| transaction_uri(id)).collect();
        uris.push(TRANSACTIONS_URI.to_owned());
        let mut sends: Vec<(Peer<RoleServer>, String)> = Vec::new();
        let mut listen_sends: Vec<(SubscriptionSink, String)> = Vec::new();
        for uri in uris {
            if let Some(list) = inner.watchers.get_mut(&uri) {
                list.retain(|(_, p)| !p.is_transport_closed());
                sends.extend(list.iter().map(|(_, p)| (p.clone(), uri.clone())));
            }
            for sink in inner.listens.values() {
                let wants = sink
                    .accepted()
                    .resource_subscriptions
                    .as_ref()
                    .is_some_and(|u| u.contains(&uri));
                if wants {
                    listen_sends.push((sink.clone(), uri.clone()));
                }
            }
        }
        drop(inner);
        if sends.is_empty() && listen_sends.is_empty() {
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
            for (sink, uri) in listen_sends {
                let _ = sink.notify_resource_updated(uri).await;
            }
        });
    }

    /// Start watching the journal now, unless someone already does: the rows already
    /// ended are learnt, so the next change reports only what is new.
    pub fn prime(&self, journal: &Mutex<Journal>) {
        if self.inner.lock().ended.is_some() {
            return;
        }
        let seen = terminal_ids(journal);
        let mut inner = self.inner.lock();
        if inner.ended.is_none() {
            inner.ended = seen;
        }
    }
}

/// One transaction's row, when it is among the newest `WATCHED_ROWS`.
pub(crate) fn transaction(journal: &Mutex<Journal>, id: &str) -> Option<TxnRecord> {
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
