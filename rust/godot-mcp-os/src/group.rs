//! Unix: the process group as a launch's boundary (the weak locator). Linux and
//! macOS share this code: both have process groups and `killpg`.

/// The signals the supervisor sends a boundary.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GroupSignal {
    /// SIGTERM: asks every member to stop.
    Term,
    /// SIGKILL.
    Kill,
}

/// Sends `sig` to every process of group `pgid`; `false` when the group does
/// not exist (or may not be signalled).
pub fn signal(pgid: i32, sig: GroupSignal) -> bool {
    use rustix::process::{Pid, Signal, kill_process_group};
    let sig = match sig {
        GroupSignal::Term => Signal::TERM,
        GroupSignal::Kill => Signal::KILL,
    };
    Pid::from_raw(pgid).is_some_and(|p| kill_process_group(p, sig).is_ok())
}
