//! The process-table seam: everything the journal and the process plane ask the
//! operating system about processes, behind one trait.
//!
//! Reconciliation ([`crate::launch`]) decides from these answers alone whether a
//! recorded launch is gone, survives exactly, or matches only in part, so the
//! decision logic can be tested against [`FakeTable`] (a hundred launches, a
//! survivor that will not die, a reused pid) without spawning processes, while
//! the real implementation is tested against real processes in `tests/launch.rs`.
//!
//! Implementations: [`Procfs`] on Linux (`/proc`, process groups, pidfds). On any
//! other OS [`os`] answers [`Unobservable`]: no identity can be derived there yet,
//! so every open launch is quarantined rather than guessed gone (a proof is
//! derived, never assumed), and new launches are refused.

use std::collections::HashMap;

/// The fields of a process that identity needs (on Linux, from `/proc/<pid>/stat`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ProcStat {
    /// Field 3: R, S, D, Z, …
    pub state: char,
    /// Field 5: the process group.
    pub pgrp: i32,
    /// Field 22: start time in clock ticks since boot.
    pub start_time: u64,
}

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
    fn boot_id(&self) -> Option<String>;
    /// The process at `pid`, while it has an entry (a zombie not yet reaped too).
    fn stat(&self, pid: i32) -> Option<ProcStat>;
    /// Whether the process at `pid` with `stat` has not finished dying.
    fn is_live(&self, pid: i32, stat: &ProcStat) -> bool;
    /// One snapshot of every live process.
    fn live(&self) -> Vec<(i32, ProcStat)>;
    /// Whether an argument of `pid`'s command line contains `needle`.
    fn cmdline_contains(&self, pid: i32, needle: &str) -> bool;
    /// Whether `pid`'s environment holds exactly `entry` (`NAME=value`). An
    /// environment that cannot be read (another user's process) holds nothing.
    fn environ_contains(&self, pid: i32, entry: &str) -> bool;
    /// SIGKILL every process of group `pgid`.
    fn kill_group(&self, pgid: i32);
    /// SIGKILL `pid` only if, with the process pinned (a pidfd on Linux), it still
    /// has `start_time` and carries `nonce`: a pid reused in between is never
    /// signalled.
    fn kill_pinned(&self, pid: i32, start_time: u64, nonce: &str);
}

impl dyn ProcessTable + '_ {
    /// Every live process whose process group is `pgid`.
    pub fn group_members(&self, pgid: i32) -> Vec<i32> {
        self.live()
            .into_iter()
            .filter(|(_, s)| s.pgrp == pgid)
            .map(|(pid, _)| pid)
            .collect()
    }

    /// Every live process with `nonce` on its command line.
    pub fn nonce_holders(&self, nonce: &str) -> Vec<i32> {
        self.live()
            .into_iter()
            .map(|(pid, _)| pid)
            .filter(|pid| self.cmdline_contains(*pid, nonce))
            .collect()
    }

    /// Whether `pid` carries `nonce`: on its command line (the leader, after
    /// `--`), or as [`crate::launch::NONCE_ENV`] in its environment (inherited by
    /// every child it spawns).
    pub fn carries_nonce(&self, pid: i32, nonce: &str) -> bool {
        self.cmdline_contains(pid, nonce)
            || self.environ_contains(pid, &format!("{}={nonce}", crate::launch::NONCE_ENV))
    }

    /// One snapshot of every live process: process group → members.
    pub fn groups(&self) -> HashMap<i32, Vec<i32>> {
        let mut map: HashMap<i32, Vec<i32>> = HashMap::new();
        for (pid, s) in self.live() {
            map.entry(s.pgrp).or_default().push(pid);
        }
        map
    }
}

/// The table of the OS this server runs on.
pub fn os() -> &'static dyn ProcessTable {
    #[cfg(target_os = "linux")]
    {
        &Procfs
    }
    #[cfg(not(target_os = "linux"))]
    {
        &Unobservable
    }
}

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
    })
}

/// Linux: `/proc`, process groups, pidfds.
#[cfg(target_os = "linux")]
pub struct Procfs;

#[cfg(target_os = "linux")]
impl Procfs {
    fn raw_stat(pid: i32) -> Option<ProcStat> {
        parse_stat(&std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?)
    }

    fn nul_separated(path: String, mut hit: impl FnMut(&[u8]) -> bool) -> bool {
        std::fs::read(path).is_ok_and(|raw| raw.split(|b| *b == 0).any(&mut hit))
    }
}

#[cfg(target_os = "linux")]
impl ProcessTable for Procfs {
    fn boot_id(&self) -> Option<String> {
        let id = std::fs::read_to_string("/proc/sys/kernel/random/boot_id").ok()?;
        let id = id.trim();
        (!id.is_empty()).then(|| id.to_owned())
    }

    fn stat(&self, pid: i32) -> Option<ProcStat> {
        Self::raw_stat(pid)
    }

    /// Not a zombie, or a zombie whose threads are still exiting.
    fn is_live(&self, pid: i32, stat: &ProcStat) -> bool {
        if stat.state != 'Z' && stat.state != 'X' {
            return true;
        }
        std::fs::read_dir(format!("/proc/{pid}/task")).is_ok_and(|d| d.count() > 1)
    }

    fn live(&self) -> Vec<(i32, ProcStat)> {
        let Ok(dir) = std::fs::read_dir("/proc") else {
            return Vec::new();
        };
        dir.filter_map(|e| e.ok()?.file_name().to_str()?.parse::<i32>().ok())
            .filter_map(|pid| Some((pid, Self::raw_stat(pid)?)))
            .filter(|(pid, s)| self.is_live(*pid, s))
            .collect()
    }

    fn cmdline_contains(&self, pid: i32, needle: &str) -> bool {
        Self::nul_separated(format!("/proc/{pid}/cmdline"), |arg| {
            std::str::from_utf8(arg).is_ok_and(|a| a.contains(needle))
        })
    }

    fn environ_contains(&self, pid: i32, entry: &str) -> bool {
        Self::nul_separated(format!("/proc/{pid}/environ"), |e| e == entry.as_bytes())
    }

    fn kill_group(&self, pgid: i32) {
        use rustix::process::{Pid, Signal, kill_process_group};
        if let Some(p) = Pid::from_raw(pgid) {
            let _ = kill_process_group(p, Signal::KILL);
        }
    }

    fn kill_pinned(&self, pid: i32, start_time: u64, nonce: &str) {
        use rustix::process::{Pid, PidfdFlags, Signal, pidfd_open, pidfd_send_signal};
        let Some(p) = Pid::from_raw(pid) else {
            return;
        };
        let Ok(fd) = pidfd_open(p, PidfdFlags::empty()) else {
            return;
        };
        // The pidfd pins this process: if /proc/<pid> still shows the same start
        // time and nonce now, it is the process the pidfd refers to.
        let table: &dyn ProcessTable = self;
        if Self::raw_stat(pid).is_some_and(|s| s.start_time == start_time)
            && table.carries_nonce(pid, nonce)
        {
            let _ = pidfd_send_signal(&fd, Signal::KILL);
        }
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
    fn boot_id(&self) -> Option<String> {
        None
    }
    fn stat(&self, _pid: i32) -> Option<ProcStat> {
        None
    }
    fn is_live(&self, _pid: i32, _stat: &ProcStat) -> bool {
        false
    }
    fn live(&self) -> Vec<(i32, ProcStat)> {
        Vec::new()
    }
    fn cmdline_contains(&self, _pid: i32, _needle: &str) -> bool {
        false
    }
    fn environ_contains(&self, _pid: i32, _entry: &str) -> bool {
        false
    }
    fn kill_group(&self, _pgid: i32) {}
    fn kill_pinned(&self, _pid: i32, _start_time: u64, _nonce: &str) {}
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
    /// Ignores SIGKILL (a process stuck in uninterruptible sleep, say).
    pub survives_kill: bool,
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
                }),
                cmdline: cmdline.iter().map(|s| (*s).to_owned()).collect(),
                environ: environ.iter().map(|s| (*s).to_owned()).collect(),
                survives_kill: false,
            },
        );
    }

    /// Adds (or replaces) a process.
    pub fn insert(&self, pid: i32, p: FakeProcess) {
        self.lock().procs.insert(pid, p);
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
    fn live(&self) -> Vec<(i32, ProcStat)> {
        let mut inner = self.lock();
        inner.snapshots += 1;
        inner
            .procs
            .iter()
            .filter_map(|(pid, p)| Some((*pid, p.stat?)))
            .filter(|(_, s)| s.state != 'Z' && s.state != 'X')
            .collect()
    }
    fn cmdline_contains(&self, pid: i32, needle: &str) -> bool {
        self.lock()
            .procs
            .get(&pid)
            .is_some_and(|p| p.cmdline.iter().any(|a| a.contains(needle)))
    }
    fn environ_contains(&self, pid: i32, entry: &str) -> bool {
        self.lock()
            .procs
            .get(&pid)
            .is_some_and(|p| p.environ.iter().any(|e| e == entry))
    }
    fn kill_group(&self, pgid: i32) {
        let mut inner = self.lock();
        let members: Vec<i32> = inner
            .procs
            .iter()
            .filter(|(_, p)| p.stat.is_some_and(|s| s.pgrp == pgid))
            .map(|(pid, _)| *pid)
            .collect();
        for pid in members {
            Self::signal(&mut inner, pid);
        }
    }
    fn kill_pinned(&self, pid: i32, start_time: u64, nonce: &str) {
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
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn own_process_reads() {
        let procs = os();
        let me = std::process::id() as i32;
        let s = procs.stat(me).unwrap();
        assert!(s.start_time > 0);
        assert!(procs.is_live(me, &s));
        assert!(procs.group_members(s.pgrp).contains(&me));
        assert!(procs.boot_id().is_some());
    }
}
