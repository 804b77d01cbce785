//! The captures one server keeps: PNG bytes of the images its tools answered with
//! (editor views, the running game, compare_screenshots' difference), under the id the
//! tool returned, so `server.rs` can send them as MCP image content and
//! `compare_screenshots`/`save_screenshot` can name them.
//!
//! Bounded: the newest [`MAX_CAPTURES`], at most [`MAX_STORE_BYTES`] in all; the least
//! recently used goes first. Each server has its own store (a field of `AppState`):
//! two servers in one process never see each other's captures.

use std::collections::VecDeque;
use std::sync::Arc;

use parking_lot::Mutex;

/// How many captures are kept (the oldest goes first).
pub(crate) const MAX_CAPTURES: usize = 32;
/// Most PNG bytes kept in all.
pub(crate) const MAX_STORE_BYTES: usize = 256 * 1024 * 1024;

/// One stored image.
#[derive(Debug, Clone)]
pub struct Capture {
    pub png: Arc<Vec<u8>>,
    pub width: u32,
    pub height: u32,
}

/// One server's captures.
#[derive(Debug)]
pub struct Captures(Mutex<Store>);

#[derive(Debug)]
struct Store {
    /// Per store: an id from an earlier server (or another one) never names a capture
    /// of this one.
    prefix: String,
    next: u64,
    items: VecDeque<(String, Capture)>,
    bytes: usize,
}

impl Default for Captures {
    fn default() -> Self {
        let mut r = [0u8; 3];
        let _ = getrandom::fill(&mut r);
        Self(Mutex::new(Store {
            prefix: hex::encode(r),
            next: 1,
            items: VecDeque::new(),
            bytes: 0,
        }))
    }
}

impl Captures {
    /// Keep `capture`; returns its id.
    pub fn store(&self, capture: Capture) -> String {
        let mut s = self.0.lock();
        let id = format!("cap-{}-{}", s.prefix, s.next);
        s.next += 1;
        s.bytes += capture.png.len();
        s.items.push_back((id.clone(), capture));
        while s.items.len() > MAX_CAPTURES || (s.bytes > MAX_STORE_BYTES && s.items.len() > 1) {
            if let Some((_, old)) = s.items.pop_front() {
                s.bytes -= old.png.len();
            }
        }
        id
    }

    /// A stored capture by id (and marks it the most recently used).
    pub fn fetch(&self, id: &str) -> Option<Capture> {
        let mut s = self.0.lock();
        let i = s.items.iter().position(|(k, _)| k == id)?;
        let item = s.items.remove(i)?;
        let cap = item.1.clone();
        s.items.push_back(item);
        Some(cap)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tiny() -> Capture {
        Capture {
            png: Arc::new(vec![0; 8]),
            width: 1,
            height: 1,
        }
    }

    #[test]
    fn the_store_forgets_the_oldest_first() {
        let captures = Captures::default();
        let ids: Vec<String> = (0..=MAX_CAPTURES).map(|_| captures.store(tiny())).collect();
        assert!(captures.fetch(&ids[0]).is_none(), "the oldest was evicted");
        assert!(captures.fetch(&ids[MAX_CAPTURES]).is_some());
    }
}
