//! MCP logging: the server's log lines, sent to every client that asked for them.
//!
//! There is one place a log line goes through: [`LogHub`]. The start-up lines
//! (reconciliation outcomes, the write gate, the process boundary) are printed with
//! [`LogHub::startup`], which keeps them for sessions that connect later; every line
//! after start-up is a `tracing` event of this workspace's crates (the editor
//! connecting or going away, launches and their end, the gate refusing a write),
//! which [`LogHub::layer`] forwards. Each session that sent `logging/setLevel` gets
//! `notifications/message` for the lines at or above its level, in order; a session
//! that never sent it gets none.
// rmcp marks MCP logging deprecated (SEP-2577) but the protocol versions clients speak
// today carry it.
#![allow(deprecated)]

use std::sync::Arc;

use parking_lot::Mutex;
use rmcp::RoleServer;
use rmcp::model::{LoggingLevel, LoggingMessageNotificationParam};
use rmcp::service::Peer;
use serde_json::{Map, Value, json};
use tokio::sync::mpsc;

/// The `logger` every message carries.
pub(crate) const LOGGER: &str = "godot-mcp";

/// The sessions that asked for log messages, and the start-up lines they get first.
#[derive(Debug, Default)]
pub struct LogHub {
    listeners: Mutex<Vec<Listener>>,
    /// The lines printed before anything was served, replayed to each new listener.
    startup: Mutex<Vec<(LoggingLevel, Value)>>,
}

/// One session's subscription: its level and the queue its sender task drains.
#[derive(Debug)]
struct Listener {
    session: u64,
    level: LoggingLevel,
    queue: mpsc::UnboundedSender<LoggingMessageNotificationParam>,
    /// Which start-up lines it was sent (each once, when its level first admits it).
    startup_sent: Vec<bool>,
}

impl Listener {
    fn send_startup(&mut self, startup: &[(LoggingLevel, Value)]) {
        self.startup_sent.resize(startup.len(), false);
        for ((at, data), sent) in startup.iter().zip(self.startup_sent.iter_mut()) {
            if !*sent && rank(*at) >= rank(self.level) {
                *sent = true;
                let _ = self.queue.send(message(*at, data.clone()));
            }
        }
    }
}

/// The order of severity, `debug` lowest.
pub(crate) fn rank(level: LoggingLevel) -> u8 {
    match level {
        LoggingLevel::Debug => 0,
        LoggingLevel::Info => 1,
        LoggingLevel::Notice => 2,
        LoggingLevel::Warning => 3,
        LoggingLevel::Error => 4,
        LoggingLevel::Critical => 5,
        LoggingLevel::Alert => 6,
        LoggingLevel::Emergency => 7,
    }
}

fn message(level: LoggingLevel, data: Value) -> LoggingMessageNotificationParam {
    LoggingMessageNotificationParam::new(level, data).with_logger(LOGGER)
}

impl LogHub {
    /// A start-up line: printed on stderr now, kept for every session that asks later.
    pub fn startup(&self, level: LoggingLevel, line: &str) {
        crate::say!("{line}");
        self.startup
            .lock()
            .push((level, json!({ "message": line })));
    }

    /// `logging/setLevel` from `session`: from now on it gets the lines at `level` and
    /// above, and first the start-up lines at that level it was not sent yet.
    pub fn set_level(&self, session: u64, level: LoggingLevel, peer: Peer<RoleServer>) {
        let mut listeners = self.listeners.lock();
        listeners.retain(|l| !l.queue.is_closed());
        let startup = self.startup.lock();
        if let Some(l) = listeners.iter_mut().find(|l| l.session == session) {
            l.level = level;
            l.send_startup(&startup);
            return;
        }
        let (queue, mut rx) = mpsc::unbounded_channel::<LoggingMessageNotificationParam>();
        // One task per session keeps its messages in order; it ends with the session.
        tokio::spawn(async move {
            while let Some(m) = rx.recv().await {
                if peer.notify_logging_message(m).await.is_err() {
                    break;
                }
            }
        });
        let mut listener = Listener {
            session,
            level,
            queue,
            startup_sent: Vec::new(),
        };
        listener.send_startup(&startup);
        listeners.push(listener);
    }

    /// A listener that is no session's peer: a 2026-07-28 `subscriptions/listen`
    /// stream whose request's `_meta` asked for `io.modelcontextprotocol/logLevel`.
    /// The lines at `level` and above (the start-up lines first) go to the returned
    /// queue, whose reader tags and sends them; it ends when the receiver is dropped.
    pub fn tap(
        &self,
        session: u64,
        level: LoggingLevel,
    ) -> mpsc::UnboundedReceiver<LoggingMessageNotificationParam> {
        let (queue, rx) = mpsc::unbounded_channel();
        let mut listeners = self.listeners.lock();
        listeners.retain(|l| !l.queue.is_closed());
        let mut listener = Listener {
            session,
            level,
            queue,
            startup_sent: Vec::new(),
        };
        listener.send_startup(&self.startup.lock());
        listeners.push(listener);
        rx
    }

    /// Whether any session would take a message at `level`.
    fn wanted(&self, level: LoggingLevel) -> bool {
        self.listeners
            .lock()
            .iter()
            .any(|l| rank(level) >= rank(l.level))
    }

    /// Sends one line to every session whose level it reaches.
    pub fn send(&self, level: LoggingLevel, data: Value) {
        let mut listeners = self.listeners.lock();
        listeners.retain(|l| !l.queue.is_closed());
        for l in listeners.iter() {
            if rank(level) >= rank(l.level) {
                let _ = l.queue.send(message(level, data.clone()));
            }
        }
    }

    /// The `tracing` layer that forwards this workspace's events to the hub.
    pub fn layer(self: &Arc<Self>) -> ForwardLayer {
        ForwardLayer { hub: self.clone() }
    }
}

/// Forwards `tracing` events of the `godot_mcp*` crates to a [`LogHub`]. Other
/// targets (rmcp's own, which logs every message it sends) are never forwarded, so
/// sending a notification cannot log itself in a loop.
#[derive(Debug)]
pub struct ForwardLayer {
    hub: Arc<LogHub>,
}

fn level_of(level: &tracing::Level) -> LoggingLevel {
    match *level {
        tracing::Level::ERROR => LoggingLevel::Error,
        tracing::Level::WARN => LoggingLevel::Warning,
        tracing::Level::INFO => LoggingLevel::Info,
        _ => LoggingLevel::Debug,
    }
}

impl<S: tracing::Subscriber> tracing_subscriber::Layer<S> for ForwardLayer {
    fn on_event(
        &self,
        event: &tracing::Event<'_>,
        _ctx: tracing_subscriber::layer::Context<'_, S>,
    ) {
        let meta = event.metadata();
        if !meta.target().starts_with("godot_mcp") {
            return;
        }
        let level = level_of(meta.level());
        if !self.hub.wanted(level) {
            return;
        }
        let mut fields = Fields(Map::new());
        event.record(&mut fields);
        self.hub.send(level, Value::Object(fields.0));
    }
}

/// An event's fields as JSON: `message` and each named field, as text.
struct Fields(Map<String, Value>);

impl tracing::field::Visit for Fields {
    fn record_debug(&mut self, field: &tracing::field::Field, value: &dyn std::fmt::Debug) {
        self.0
            .insert(field.name().to_owned(), Value::String(format!("{value:?}")));
    }
    fn record_str(&mut self, field: &tracing::field::Field, value: &str) {
        self.0
            .insert(field.name().to_owned(), Value::String(value.to_owned()));
    }
    fn record_i64(&mut self, field: &tracing::field::Field, value: i64) {
        self.0.insert(field.name().to_owned(), json!(value));
    }
    fn record_u64(&mut self, field: &tracing::field::Field, value: u64) {
        self.0.insert(field.name().to_owned(), json!(value));
    }
    fn record_bool(&mut self, field: &tracing::field::Field, value: bool) {
        self.0.insert(field.name().to_owned(), json!(value));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn levels_rank_by_severity() {
        assert!(rank(LoggingLevel::Debug) < rank(LoggingLevel::Info));
        assert!(rank(LoggingLevel::Warning) < rank(LoggingLevel::Error));
        assert!(rank(LoggingLevel::Alert) < rank(LoggingLevel::Emergency));
    }
}
