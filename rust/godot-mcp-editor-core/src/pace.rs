//! How quickly the editor answers while an agent is working.
//!
//! The editor runs in low-processor mode: between frames it sleeps
//! `low_processor_usage_mode_sleep_usec` (6,900 µs by default, ~145 Hz), and requests
//! are executed once a frame. An agent's next request arrives right after the previous
//! reply, so each call would wait a whole sleep. While requests are flowing the add-on
//! shortens the sleep to [`BUSY_SLEEP_USEC`], and restores the editor's own value once
//! [`BUSY_WINDOW`] passes with no request — an idle editor costs what it always did.

use std::time::{Duration, Instant};

/// The frame sleep while requests are flowing. Measured with the editor_set_property
/// bench (release, idle 2-core machine, three runs each): 1,000 µs gave p50 1.96–1.99 ms,
/// 100 µs gave 1.15–1.46 ms, and the editor's CPU over the busiest second was the same
/// (~140 % of one core: the requests' own work dominates).
pub const BUSY_SLEEP_USEC: i32 = 100;
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
        assert_eq!(p.on_frame(t0, 1, 6900), PaceAction::Quicken);
        assert_eq!(p.on_frame(t0, 2, BUSY_SLEEP_USEC), PaceAction::Keep);
        let later = t0 + BUSY_WINDOW / 2;
        assert_eq!(p.on_frame(later, 0, BUSY_SLEEP_USEC), PaceAction::Keep);
        let after = t0 + BUSY_WINDOW + Duration::from_millis(1);
        assert_eq!(
            p.on_frame(after, 0, BUSY_SLEEP_USEC),
            PaceAction::Restore(6900)
        );
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
        assert_eq!(p.stop(), None);
        assert_eq!(p.on_frame(t0, 1, 6900), PaceAction::Quicken);
        assert_eq!(p.stop(), Some(6900));
    }
}
