//! The process-table seam's vocabulary, below every table: what a table answers
//! ([`ProcStat`], [`JobState`]), the [`ProcessTable`] trait, the [`PinnedSignal`]s it
//! sends, and the parsers of the OS's own records. It imports nothing else of the
//! crate, so the tables (`linux`, `macos`, `windows`) and [`crate::process_table`],
//! which chooses among them, all stand on it. Its items are re-exported from
//! [`crate::process_table`], their public home.

use std::collections::HashMap;

/// The fields of a process that identity needs (on Linux, from `/proc/<pid>/stat`).
///
/// `start_time` is in the OS's own unit (Linux: clock ticks since boot; macOS:
/// microseconds since the epoch; Windows: the creation `FILETIME`) and is only
/// ever compared with a value read on the same OS.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ProcStat {
    /// R, S, D, Z, … (Linux field 3); `Z` where the process has exited but its
    /// entry remains (macOS `SZOMB`; Windows: an exited process still held open).
    pub state: char,
    /// The process group (Linux field 5); 0 on Windows, which has none.
    pub pgrp: i32,
    /// The start time (Linux field 22), in the OS's own unit.
    pub start_time: u64,
    /// Dying: past the point of no return in its exit (Linux: `PF_EXITING` in
    /// the flags, field 9), while not yet a zombie. Its memory, and with it
    /// its command line and environment, may already be gone, so it can carry
    /// no nonce; it runs no more code. `false` where the OS does not say.
    pub exiting: bool,
}

/// What a named Job Object (the Windows boundary) holds now.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum JobState {
    /// No job has that name any more. The launch's job kills its processes
    /// when its last handle closes (`JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE`), and
    /// a named object loses its name only then, so no member is left. Only
    /// `ERROR_FILE_NOT_FOUND` from `OpenJobObjectW` means this.
    Gone,
    /// The job exists; the pids of its processes now.
    Members(Vec<i32>),
    /// The job could not be opened or listed (any other error): nothing can
    /// be said of its members.
    Unreadable(String),
}

/// `PF_EXITING` (include/linux/sched.h): set by `exit_signals()` at the start
/// of `do_exit()`, before the process's memory is released.
const PF_EXITING: u64 = 0x4;

/// What the journal asks the OS about processes. "Live" means not finished dying:
/// a zombie whose threads are still exiting is live, one whose threads are gone
/// is not.
pub trait ProcessTable: Send + Sync {
    /// Whether this table can observe process identity at all. `false` makes
    /// reconciliation quarantine every open launch.
    fn observable(&self) -> bool {
        true
    }
    /// The current boot's id; `None` when the OS does not say.
    ///
    /// The defaults below are those of an OS that cannot observe or signal
    /// that much: they see nothing and signal nothing, so they prove nothing
    /// (a launch stays unproven, never wrongly gone or killed).
    fn boot_id(&self) -> Option<String> {
        None
    }
    /// The process at `pid`, while it has an entry (a zombie not yet reaped too).
    fn stat(&self, pid: i32) -> Option<ProcStat>;
    /// Whether the process at `pid` with `stat` has not finished dying.
    fn is_live(&self, pid: i32, stat: &ProcStat) -> bool;
    /// One snapshot of every live process; `None` when the processes cannot
    /// be listed (an unreadable `/proc`, say) — never read as "none live".
    fn live(&self) -> Option<Vec<(i32, ProcStat)>>;
    /// Whether an argument of `pid`'s command line contains `needle`.
    fn cmdline_contains(&self, _pid: i32, _needle: &str) -> bool {
        false
    }
    /// Whether `pid`'s environment holds exactly `entry` (`NAME=value`). An
    /// environment that cannot be read (another user's process) holds nothing.
    fn environ_contains(&self, _pid: i32, _entry: &str) -> bool {
        false
    }
    /// Whether `pid` is a process of this server's real user whose environment
    /// cannot be read (a set-user-ID program it ran, say, or one that made
    /// itself undumpable): it may carry a launch's nonce unseen, so it keeps
    /// any boundary it could belong to from being proven empty. A process of
    /// another real user is never one: a launch cannot start one without
    /// privileges. `false` where the OS does not say (macOS, Windows).
    fn environ_hidden(&self, _pid: i32) -> bool {
        false
    }
    /// `pid`'s parent process (`None`: gone, or the OS does not say).
    fn parent(&self, _pid: i32) -> Option<i32> {
        None
    }
    /// Whether this table can observe named Job Objects (Windows). `false`
    /// makes reconciliation quarantine every open job-bounded launch.
    fn observes_jobs(&self) -> bool {
        false
    }
    /// What the Job Object named `name` holds now.
    fn job_members(&self, _name: &str) -> JobState {
        JobState::Unreadable("this OS has no Job Objects".into())
    }
    /// Terminates every process of the Job Object named `name`; `false` when
    /// it could not be opened or terminated.
    fn terminate_job(&self, _name: &str) -> bool {
        false
    }
    /// Sends `signal` to `pid` only if, with the process pinned (a pidfd on
    /// Linux), it still has `start_time` and carries `nonce`: a pid reused in
    /// between is never signalled. (macOS has no pidfd: there the check and the
    /// signal are two calls, see `Libproc`.) There is no group signal: a process
    /// group's id can name another group once its leader is reaped, so only
    /// members identified one by one are ever signalled.
    fn signal_pinned(&self, _pid: i32, _start_time: u64, _nonce: &str, _signal: PinnedSignal) {}
}

/// The signals the supervisor and reconciliation send one identified process.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PinnedSignal {
    /// SIGTERM: asks it to stop (a session's stop, before its grace ends).
    Term,
    /// SIGKILL.
    Kill,
}

impl dyn ProcessTable + '_ {
    /// SIGKILL `pid` if it is still the pinned process (see
    /// [`ProcessTable::signal_pinned`]).
    pub fn kill_pinned(&self, pid: i32, start_time: u64, nonce: &str) {
        self.signal_pinned(pid, start_time, nonce, PinnedSignal::Kill);
    }

    /// Every live process whose process group is `pgid`; `None` when the
    /// processes cannot be listed.
    pub fn group_members(&self, pgid: i32) -> Option<Vec<i32>> {
        Some(
            self.live()?
                .into_iter()
                .filter(|(_, s)| s.pgrp == pgid)
                .map(|(pid, _)| pid)
                .collect(),
        )
    }

    /// Every live process with `nonce` on its command line; `None` when the
    /// processes cannot be listed.
    pub fn nonce_holders(&self, nonce: &str) -> Option<Vec<i32>> {
        Some(
            self.live()?
                .into_iter()
                .map(|(pid, _)| pid)
                .filter(|pid| self.cmdline_contains(*pid, nonce))
                .collect(),
        )
    }

    /// Whether `pid` carries `nonce`: on its command line (the leader, after
    /// `--`), or as [`NONCE_ENV`] in its environment (inherited by every
    /// child it spawns, also one that left the process group: Godot's
    /// `OS.create_process` calls `setsid()` in the child).
    pub fn carries_nonce(&self, pid: i32, nonce: &str) -> bool {
        self.cmdline_contains(pid, nonce)
            || self.environ_contains(pid, &format!("{}={nonce}", NONCE_ENV))
    }

    /// One snapshot of every live process: process group → members; `None`
    /// when the processes cannot be listed.
    pub fn groups(&self) -> Option<HashMap<i32, Vec<i32>>> {
        let mut map: HashMap<i32, Vec<i32>> = HashMap::new();
        for (pid, s) in self.live()? {
            map.entry(s.pgrp).or_default().push(pid);
        }
        Some(map)
    }
}

/// The environment variable every supervised launch carries its nonce in, so
/// that members of its boundary that do not have the nonce on their command
/// line (children Godot spawns) can still be identified as the launch's:
/// children inherit the environment.
pub const NONCE_ENV: &str = "GODOT_MCP_SESSION_NONCE";

/// Parses a `/proc/<pid>/stat` line; the command name (field 2) may hold spaces
/// and parens, so fields are counted from its last `)`.
pub fn parse_stat(text: &str) -> Option<ProcStat> {
    let rest = &text[text.rfind(')')? + 1..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    // rest starts at field 3.
    Some(ProcStat {
        state: fields.first()?.chars().next()?,
        pgrp: fields.get(2)?.parse().ok()?,
        start_time: fields.get(19)?.parse().ok()?,
        exiting: fields.get(6)?.parse::<u64>().ok()? & PF_EXITING != 0,
    })
}

/// A process's arguments and its `NAME=value` environment entries.
pub type ArgsAndEnv<'a> = (Vec<&'a [u8]>, Vec<&'a [u8]>);

/// Splits a macOS `KERN_PROCARGS2` buffer into the arguments and the
/// environment: a native-endian `argc`, the executable path, NUL padding,
/// `argc` NUL-terminated arguments, then NUL-terminated `NAME=value` entries up
/// to an empty one. `None` when the buffer is shorter than it says.
pub fn parse_procargs2(raw: &[u8]) -> Option<ArgsAndEnv<'_>> {
    let argc = i32::from_ne_bytes(raw.get(..4)?.try_into().ok()?);
    let argc = usize::try_from(argc).ok()?;
    let rest = &raw[4..];
    // The executable path, then the padding NULs before argv[0].
    let exec_end = rest.iter().position(|b| *b == 0)?;
    let mut at = exec_end;
    while rest.get(at) == Some(&0) {
        at += 1;
    }
    let mut strings = rest.get(at..)?.split(|b| *b == 0);
    let mut args = Vec::with_capacity(argc);
    for _ in 0..argc {
        args.push(strings.next()?);
    }
    let env = strings.take_while(|e| !e.is_empty()).collect();
    Some((args, env))
}
