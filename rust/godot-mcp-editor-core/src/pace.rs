//! How quickly the editor answers while an agent is working.
//!
//! The editor runs in low-processor mode: between frames it sleeps
//! `low_processor_usage_mode_sleep_usec` (6,900 µs by default, ~145 Hz), and requests
//! are executed once a frame. An agent's next request arrives right after the previous
//! reply, so each call would wait for the rest of that sleep, which nothing can cut
//! short. While requests are flowing the add-on sets the editor's sleep to
//! [`BUSY_SLEEP_USEC`] (none) and does the idling itself instead: `process()` waits up
//! to [`BUSY_WAIT`] for the next request on the bridge thread's channel, which wakes it
//! the moment a request arrives. The frame rate stays near what the short sleep gave
//! (one wait per frame), but a request that comes during the wait is executed at once,
//! not a frame later. The editor's own sleep is restored once [`BUSY_WINDOW`] passes
//! with no request — an idle editor costs what it always did.

use std::time::{Duration, Instant};

/// The editor's frame sleep while requests are flowing: none; `process()` waits
/// instead ([`Pace::wait`]).
pub const BUSY_SLEEP_USEC: i32 = 0;
/// Longest wait for a request in one `process()` call while requests are flowing; a
/// request that arrives meanwhile ends it at once. The earlier 100 µs frame sleep
/// paced the editor alike, but a request that came during it waited the sleep out.
pub const BUSY_WAIT: Duration = Duration::from_micros(500);
/// How long after the last request the editor keeps the short sleep.
pub const BUSY_WINDOW: Duration = Duration::from_secs(1);

/// What the add-on should do with the editor's frame sleep this frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PaceAction {
    /// Nothing changes.
    Keep,
    /// Save the current sleep and set [`BUSY_SLEEP_USEC`].
    Quicken,
    /// Put the saved sleep back.
    Restore(i32),
}

/// The pacing state of one executor.
#[derive(Debug, Default)]
pub struct Pace {
    /// The editor's own sleep while it is shortened.
    saved_usec: Option<i32>,
    busy_until: Option<Instant>,
}

impl Pace {
    /// Called once a frame with how many requests it executed and the editor's current
    /// sleep.
    pub fn on_frame(&mut self, now: Instant, handled: usize, current_usec: i32) -> PaceAction {
        if handled > 0 {
            self.busy_until = Some(now + BUSY_WINDOW);
            if self.saved_usec.is_none() && current_usec > BUSY_SLEEP_USEC {
                self.saved_usec = Some(current_usec);
                return PaceAction::Quicken;
            }
            return PaceAction::Keep;
        }
        match (self.saved_usec, self.busy_until) {
            (Some(saved), Some(until)) if now >= until => {
                self.saved_usec = None;
                self.busy_until = None;
                PaceAction::Restore(saved)
            }
            _ => PaceAction::Keep,
        }
    }

    /// How long `process()` may wait for a request before it lets the frame go on:
    /// [`BUSY_WAIT`] while the add-on has taken over the editor's sleep, else none
    /// (an idle editor, or one whose user already runs it without a sleep).
    pub fn wait(&self) -> Option<Duration> {
        self.saved_usec.map(|_| BUSY_WAIT)
    }

    /// The executor stops: the sleep to put back, if it was shortened.
    pub fn stop(&mut self) -> Option<i32> {
        self.busy_until = None;
        self.saved_usec.take()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quickens_while_busy_and_restores_after_the_window() {
        let t0 = Instant::now();
        let mut p = Pace::default();
        assert_eq!(p.on_frame(t0, 0, 6900), PaceAction::Keep, "idle stays idle");
        assert_eq!(p.wait(), None, "an idle editor is never held");
        assert_eq!(p.on_frame(t0, 1, 6900), PaceAction::Quicken);
        assert_eq!(p.wait(), Some(BUSY_WAIT), "busy: process() does the idling");
        assert_eq!(p.on_frame(t0, 2, BUSY_SLEEP_USEC), PaceAction::Keep);
        let later = t0 + BUSY_WINDOW / 2;
        assert_eq!(p.on_frame(later, 0, BUSY_SLEEP_USEC), PaceAction::Keep);
        let after = t0 + BUSY_WINDOW + Duration::from_millis(1);
        assert_eq!(
            p.on_frame(after, 0, BUSY_SLEEP_USEC),
            PaceAction::Restore(6900)
        );
        assert_eq!(p.wait(), None);
        assert_eq!(p.on_frame(after, 0, 6900), PaceAction::Keep);
    }

    #[test]
    fn a_user_who_already_runs_fast_is_left_alone_and_stop_restores() {
        let t0 = Instant::now();
        let mut p = Pace::default();
        assert_eq!(
            p.on_frame(t0, 1, 0),
            PaceAction::Keep,
            "never slows an editor down"
        );
        assert_eq!(p.wait(), None, "nor holds its frames");
        assert_eq!(p.stop(), None);
        assert_eq!(p.on_frame(t0, 1, 6900), PaceAction::Quicken);
        assert_eq!(p.stop(), Some(6900));
        assert_eq!(p.wait(), None);
    }
}
