//! Linux: `/proc`, process groups, pidfds.

use crate::process_table::{PinnedSignal, ProcStat, ProcessTable, parse_stat};

/// Linux: `/proc`, process groups, pidfds.
pub struct Procfs;

impl Procfs {
    fn raw_stat(pid: i32) -> Option<ProcStat> {
        parse_stat(&std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?)
    }

    fn nul_separated(path: String, mut hit: impl FnMut(&[u8]) -> bool) -> bool {
        std::fs::read(path).is_ok_and(|raw| raw.split(|b| *b == 0).any(&mut hit))
    }
}

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

    fn live(&self) -> Option<Vec<(i32, ProcStat)>> {
        let dir = std::fs::read_dir("/proc").ok()?;
        let mut pids = Vec::new();
        for entry in dir {
            // An entry that cannot be read may be a process: the list is not
            // whole, and a partial list is never read as the whole one.
            let entry = entry.ok()?;
            if let Some(pid) = entry
                .file_name()
                .to_str()
                .and_then(|n| n.parse::<i32>().ok())
            {
                pids.push(pid);
            }
        }
        Some(
            pids.into_iter()
                .filter_map(|pid| Some((pid, Self::raw_stat(pid)?)))
                .filter(|(pid, s)| self.is_live(*pid, s))
                .collect(),
        )
    }

    fn cmdline_contains(&self, pid: i32, needle: &str) -> bool {
        Self::nul_separated(format!("/proc/{pid}/cmdline"), |arg| {
            std::str::from_utf8(arg).is_ok_and(|a| a.contains(needle))
        })
    }

    fn environ_contains(&self, pid: i32, entry: &str) -> bool {
        Self::nul_separated(format!("/proc/{pid}/environ"), |e| e == entry.as_bytes())
    }

    /// `/proc/<pid>/environ` answers an error other than "no such process"
    /// (`EACCES`: the process is not dumpable, or is another user's), and the
    /// real user id in `/proc/<pid>/status` is this process's.
    fn environ_hidden(&self, pid: i32) -> bool {
        let unreadable = match std::fs::read(format!("/proc/{pid}/environ")) {
            Ok(_) => false,
            // ESRCH: it is gone.
            Err(e) => e.kind() != std::io::ErrorKind::NotFound && e.raw_os_error() != Some(3),
        };
        unreadable
            && std::fs::read_to_string(format!("/proc/{pid}/status")).is_ok_and(|status| {
                status
                    .lines()
                    .find_map(|l| l.strip_prefix("Uid:"))
                    .and_then(|ids| ids.split_whitespace().next())
                    .and_then(|ruid| ruid.parse::<u32>().ok())
                    == Some(rustix::process::getuid().as_raw())
            })
    }

    fn signal_pinned(&self, pid: i32, start_time: u64, nonce: &str, signal: PinnedSignal) {
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
            let signal = match signal {
                PinnedSignal::Term => Signal::TERM,
                PinnedSignal::Kill => Signal::KILL,
            };
            let _ = pidfd_send_signal(&fd, signal);
        }
    }
}
