//! The tool lists a tools/list answer hands to the stdio writer
//! (`transport::stdio`), by key: the handler registers one and answers with its
//! stand-in; the writer puts the list in the stand-in's place.

use std::collections::HashMap;
use std::sync::{Arc, OnceLock};

use parking_lot::Mutex;
use rmcp::model::Tool;

/// The tool lists handed from tools/list answers to the writer, by key.
#[derive(Debug, Default)]
pub(crate) struct RawToolLists {
    /// Drawn at the first tools/list: a stand-in's name cannot be guessed, so no
    /// other message (a tool result echoing project data) can be mistaken for one.
    nonce: OnceLock<u64>,
    pub(crate) pending: Mutex<HashMap<u64, String>>,
    next: std::sync::atomic::AtomicU64,
}

impl RawToolLists {
    pub(crate) fn prefix(&self) -> String {
        let nonce = self.nonce.get_or_init(|| {
            let mut b = [0u8; 8];
            // Without randomness the key is still unique; only its guessability changes.
            let _ = getrandom::fill(&mut b);
            u64::from_le_bytes(b)
        });
        format!(r#"{{"name":"godot-mcp-tools-{nonce:016x}-"#)
    }

    /// The stand-in for `members` (the comma-separated tools of one answer).
    pub(crate) fn stand_in(&self, members: String) -> Tool {
        let key = self.next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let name = format!("{}{key}", &self.prefix()[9..]);
        let mut pending = self.pending.lock();
        // An answer never written (its request cancelled) is not kept for ever.
        pending.retain(|k, _| k + 16 > key);
        pending.insert(key, members);
        Tool::new_with_raw(name, None, Arc::new(Default::default()))
    }

    /// `lines` (whole outgoing messages) with each registered stand-in replaced.
    pub(crate) fn splice(&self, lines: Vec<u8>) -> Vec<u8> {
        if self.pending.lock().is_empty() {
            return lines;
        }
        let mut out = Vec::with_capacity(lines.len());
        for line in lines.split_inclusive(|b| *b == b'\n') {
            out.extend_from_slice(&self.splice_line(line.to_vec()));
        }
        out
    }

    /// One message with its stand-in, if it holds a registered one, replaced.
    pub(crate) fn splice_line(&self, line: Vec<u8>) -> Vec<u8> {
        let prefix = self.prefix();
        let Some(at) = find(&line, prefix.as_bytes()) else {
            return line;
        };
        let rest = &line[at + prefix.len()..];
        let digits = rest.iter().take_while(|b| b.is_ascii_digit()).count();
        const TAIL: &[u8] = br#"","inputSchema":{}}"#;
        let key = std::str::from_utf8(&rest[..digits])
            .ok()
            .and_then(|k| k.parse::<u64>().ok());
        let (Some(key), true) = (key, rest[digits..].starts_with(TAIL)) else {
            return line;
        };
        let Some(members) = self.pending.lock().remove(&key) else {
            return line;
        };
        let end = at + prefix.len() + digits + TAIL.len();
        let mut out = Vec::with_capacity(line.len() + members.len());
        out.extend_from_slice(&line[..at]);
        out.extend_from_slice(members.as_bytes());
        out.extend_from_slice(&line[end..]);
        out
    }
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}
