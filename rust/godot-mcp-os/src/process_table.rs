//! The process-table seam: everything the journal and the process plane ask the
//! operating system about processes, behind one trait.
//!
//! Reconciliation (`godot_mcp_journal::launch`) decides from these answers alone
//! whether a recorded launch is gone, survives exactly, or matches only in part,
//! so the decision logic is tested against [`FakeTable`] (a hundred launches, a
//! survivor that will not die, a reused pid) without spawning processes, while
//! each real implementation is tested against real processes on its OS.
//!
//! Implementations, chosen by [`os`]:
//!
//! | OS      | table       | identity (pid +)          | boundary members       | nonce (cmdline, environ) | pinned kill            |
//! |---------|-------------|---------------------------|------------------------|--------------------------|------------------------|
//! | Linux   | `Procfs`    | start time, `/proc` stat  | process group          | `/proc/<pid>/…`          | pidfd                  |
//! | macOS   | `Libproc`   | start time, `proc_pidinfo`| process group          | `KERN_PROCARGS2`         | re-checked, then kill  |
//! | Windows | `Win32`     | creation time, by handle  | Job Object (`job`)     | not observable      | never (no nonce)       |
//! | other   | [`Unobservable`] | —                    | —                      | —                        | —                      |
//!
//! A table whose [`ProcessTable::observable`] is `false` (Windows, where the
//! process-group boundary does not exist, and any other OS) makes reconciliation
//! quarantine every open process-group launch rather than guess it gone. Job
//! Objects are observed apart ([`ProcessTable::observes_jobs`]): the Windows
//! table observes them, so a job-bounded launch is reconciled there.

pub use crate::process_seam::{
    ArgsAndEnv, JobState, NONCE_ENV, PinnedSignal, ProcStat, ProcessTable, parse_procargs2,
    parse_stat,
};

/// The table of the OS this server runs on.
pub fn os() -> &'static dyn ProcessTable {
    #[cfg(target_os = "linux")]
    {
        &crate::linux::Procfs
    }
    #[cfg(target_os = "macos")]
    {
        &crate::macos::Libproc
    }
    #[cfg(windows)]
    {
        &crate::windows::Win32
    }
    #[cfg(not(any(target_os = "linux", target_os = "macos", windows)))]
    {
        &Unobservable
    }
}

/// An OS where this build cannot observe process identity: nothing is live as
/// far as it can tell, so [`ProcessTable::observable`] is `false` and callers
/// must not read "no process" as "gone".
pub struct Unobservable;

impl ProcessTable for Unobservable {
    fn observable(&self) -> bool {
        false
    }
    fn stat(&self, _pid: i32) -> Option<ProcStat> {
        None
    }
    fn is_live(&self, _pid: i32, _stat: &ProcStat) -> bool {
        false
    }
    fn live(&self) -> Option<Vec<(i32, ProcStat)>> {
        None
    }
}

/// A process table held in memory, for reconciliation tests: processes are
/// added by the test, signals remove them (unless marked to survive), and every
/// signal and snapshot is counted.
#[derive(Default)]
pub struct FakeTable {
    inner: std::sync::Mutex<FakeInner>,
}

#[derive(Default)]
struct FakeInner {
    boot_id: Option<String>,
    procs: std::collections::BTreeMap<i32, FakeProcess>,
    /// Job name → its processes, or the error opening it answers.
    jobs: std::collections::BTreeMap<String, Result<Vec<i32>, String>>,
    signalled: Vec<i32>,
    snapshots: usize,
}

/// One process of a [`FakeTable`].
#[derive(Clone, Debug, Default)]
pub struct FakeProcess {
    /// Its stat fields.
    pub stat: Option<ProcStat>,
    /// Its command line.
    pub cmdline: Vec<String>,
    /// Its environment, `NAME=value` entries.
    pub environ: Vec<String>,
    /// Ignores SIGKILL (a process stuck in uninterruptible sleep, say). A
    /// process that is `exiting` and `survives_kill` never finishes its exit.
    pub survives_kill: bool,
    /// For an `exiting` process: in how many snapshots (at least one) it
    /// appears before its exit finishes.
    pub exit_snapshots: u32,
    /// How many reads of its command line or environment find nothing before
    /// they show what it has (a child in the middle of its exec, say).
    pub hidden_reads: u32,
    /// Its environment cannot be read, and it is of this server's real user
    /// (see [`ProcessTable::environ_hidden`]).
    pub environ_hidden: bool,
    /// Its parent process (`None`: not shown).
    pub parent: Option<i32>,
}

impl FakeTable {
    fn lock(&self) -> std::sync::MutexGuard<'_, FakeInner> {
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// An empty table on boot `boot_id`.
    pub fn new(boot_id: &str) -> Self {
        let t = Self::default();
        t.lock().boot_id = Some(boot_id.to_owned());
        t
    }

    /// Adds (or replaces) the process at `pid`.
    pub fn spawn(&self, pid: i32, pgrp: i32, start_time: u64, cmdline: &[&str], environ: &[&str]) {
        self.insert(
            pid,
            FakeProcess {
                stat: Some(ProcStat {
                    state: 'S',
                    pgrp,
                    start_time,
                    exiting: false,
                }),
                cmdline: cmdline.iter().map(|s| (*s).to_owned()).collect(),
                environ: environ.iter().map(|s| (*s).to_owned()).collect(),
                survives_kill: false,
                exit_snapshots: 0,
                hidden_reads: 0,
                environ_hidden: false,
                parent: None,
            },
        );
    }

    /// Adds (or replaces) a process.
    pub fn insert(&self, pid: i32, p: FakeProcess) {
        self.lock().procs.insert(pid, p);
    }

    /// Creates (or replaces) the Job Object `name` holding `pids`.
    pub fn create_job(&self, name: &str, pids: &[i32]) {
        self.lock().jobs.insert(name.to_owned(), Ok(pids.to_vec()));
    }

    /// Makes opening the Job Object `name` fail with `error`.
    pub fn job_open_error(&self, name: &str, error: &str) {
        self.lock()
            .jobs
            .insert(name.to_owned(), Err(error.to_owned()));
    }

    /// Closes the last handle of the Job Object `name`, as a dying server
    /// does: its processes are killed (those that survive a kill stay) and
    /// its name is gone.
    pub fn close_job(&self, name: &str) {
        let mut inner = self.lock();
        if let Some(Ok(pids)) = inner.jobs.remove(name) {
            for pid in pids {
                Self::signal(&mut inner, pid);
            }
        }
    }

    /// Marks `pid` as ignoring SIGKILL.
    pub fn survive_kill(&self, pid: i32) {
        if let Some(p) = self.lock().procs.get_mut(&pid) {
            p.survives_kill = true;
        }
    }

    /// Every pid signalled so far, in order.
    pub fn signalled(&self) -> Vec<i32> {
        self.lock().signalled.clone()
    }

    /// How many snapshots ([`ProcessTable::live`]) were taken.
    pub fn snapshots(&self) -> usize {
        self.lock().snapshots
    }

    /// Whether a process lives at `pid`.
    pub fn alive(&self, pid: i32) -> bool {
        self.lock().procs.contains_key(&pid)
    }

    /// A read of `pid`'s command line or environment: nothing while it has
    /// `hidden_reads` left.
    fn read(&self, pid: i32, shows: impl Fn(&FakeProcess) -> bool) -> bool {
        let mut inner = self.lock();
        let Some(p) = inner.procs.get_mut(&pid) else {
            return false;
        };
        if p.hidden_reads > 0 {
            p.hidden_reads -= 1;
            return false;
        }
        shows(p)
    }

    fn signal(inner: &mut FakeInner, pid: i32) {
        inner.signalled.push(pid);
        if inner.procs.get(&pid).is_some_and(|p| !p.survives_kill) {
            inner.procs.remove(&pid);
        }
    }
}

impl ProcessTable for FakeTable {
    fn boot_id(&self) -> Option<String> {
        self.lock().boot_id.clone()
    }
    fn stat(&self, pid: i32) -> Option<ProcStat> {
        self.lock().procs.get(&pid)?.stat
    }
    fn is_live(&self, _pid: i32, stat: &ProcStat) -> bool {
        stat.state != 'Z' && stat.state != 'X'
    }
    /// A process that is `exiting` appears in `exit_snapshots` snapshots (at
    /// least one), then its exit finishes, unless it `survives_kill`.
    fn live(&self) -> Option<Vec<(i32, ProcStat)>> {
        let mut inner = self.lock();
        inner.snapshots += 1;
        let out = inner
            .procs
            .iter()
            .filter_map(|(pid, p)| Some((*pid, p.stat?)))
            .filter(|(_, s)| s.state != 'Z' && s.state != 'X')
            .collect();
        inner.procs.retain(|_, p| {
            if p.survives_kill || !p.stat.is_some_and(|s| s.exiting) {
                return true;
            }
            p.exit_snapshots = p.exit_snapshots.saturating_sub(1);
            p.exit_snapshots > 0
        });
        Some(out)
    }
    fn cmdline_contains(&self, pid: i32, needle: &str) -> bool {
        self.read(pid, |p| p.cmdline.iter().any(|a| a.contains(needle)))
    }
    fn environ_contains(&self, pid: i32, entry: &str) -> bool {
        self.read(pid, |p| {
            !p.environ_hidden && p.environ.iter().any(|e| e == entry)
        })
    }
    fn environ_hidden(&self, pid: i32) -> bool {
        self.lock()
            .procs
            .get(&pid)
            .is_some_and(|p| p.environ_hidden)
    }
    fn parent(&self, pid: i32) -> Option<i32> {
        self.lock().procs.get(&pid).and_then(|p| p.parent)
    }
    fn observes_jobs(&self) -> bool {
        true
    }
    /// A job lists the processes it was given that still have an entry and
    /// have not exited (as `JobObjectBasicProcessIdList` lists active ones);
    /// an entry without stat fields is listed (its identity is unreadable).
    fn job_members(&self, name: &str) -> JobState {
        let inner = self.lock();
        match inner.jobs.get(name) {
            None => JobState::Gone,
            Some(Err(e)) => JobState::Unreadable(e.clone()),
            Some(Ok(pids)) => JobState::Members(
                pids.iter()
                    .copied()
                    .filter(|pid| {
                        inner.procs.get(pid).is_some_and(|p| {
                            p.stat.is_none_or(|s| s.state != 'Z' && s.state != 'X')
                        })
                    })
                    .collect(),
            ),
        }
    }
    fn terminate_job(&self, name: &str) -> bool {
        let mut inner = self.lock();
        let Some(Ok(pids)) = inner.jobs.get(name).cloned() else {
            return false;
        };
        for pid in pids {
            if inner.procs.contains_key(&pid) {
                Self::signal(&mut inner, pid);
            }
        }
        true
    }
    /// SIGTERM ends a fake process as SIGKILL does (unless it survives kills).
    fn signal_pinned(&self, pid: i32, start_time: u64, nonce: &str, _signal: PinnedSignal) {
        let same = self.stat(pid).is_some_and(|s| s.start_time == start_time)
            && (self as &dyn ProcessTable).carries_nonce(pid, nonce);
        if same {
            Self::signal(&mut self.lock(), pid);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stat_parses_names_with_parens() {
        let line = "123 (a) b (c)) S 1 456 456 0 -1 4194560 0 0 0 0 0 0 0 0 20 0 1 0 987654 0 0";
        let s = parse_stat(line).unwrap();
        assert_eq!(s.state, 'S');
        assert_eq!(s.pgrp, 456);
        assert_eq!(s.start_time, 987654);
        assert!(!s.exiting);
        // 4194564 = 0x400004: PF_EXITING set (a process inside do_exit()).
        let dying = line.replace("4194560", "4194564");
        assert!(parse_stat(&dying).unwrap().exiting);
    }

    /// The layout `sysctl(KERN_PROCARGS2)` documents; the real buffer is read
    /// on macOS by `tests/real.rs`.
    #[test]
    fn procargs2_splits_arguments_from_environment() {
        let mut raw = 2i32.to_ne_bytes().to_vec();
        raw.extend_from_slice(b"/bin/sh\0\0\0\0sh\0--nonce=ab cd\0A=1\0B=\0\0junk\0");
        let (args, env) = parse_procargs2(&raw).unwrap();
        assert_eq!(args, [&b"sh"[..], b"--nonce=ab cd"]);
        assert_eq!(env, [&b"A=1"[..], b"B="]);
        // argc larger than what follows: refused, not guessed.
        let mut short = 5i32.to_ne_bytes().to_vec();
        short.extend_from_slice(b"/bin/sh\0sh\0");
        assert_eq!(parse_procargs2(&short), None);
        assert_eq!(parse_procargs2(b"\x01\0"), None);
    }
}
