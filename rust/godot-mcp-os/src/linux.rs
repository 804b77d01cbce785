//! Linux: `/proc`, process groups, pidfds.

use crate::process_seam::{PinnedSignal, ProcStat, ProcessTable, parse_stat};

/// Linux: `/proc`, process groups, pidfds.
pub(crate) struct Procfs;

impl Procfs {
    fn raw_stat(pid: i32) -> Option<ProcStat> {
        parse_stat(&std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?)
    }

    fn nul_separated(path: String, mut hit: impl FnMut(&[u8]) -> bool) -> bool {
        std::fs::read(path).is_ok_and(|raw| raw.split(|b| *b == 0).any(&mut hit))
    }
}

/// A task state that runs no more code: a zombie (`Z`) or dead (`X`, `x`).
fn exited(state: char) -> bool {
    matches!(state, 'Z' | 'X' | 'x')
}

/// Whether any of a process's threads (their `stat` states) has not exited.
fn any_thread_running(mut states: impl Iterator<Item = char>) -> bool {
    states.any(|state| !exited(state))
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

    /// Not a zombie, or a zombie leader with a thread that has not exited yet (a
    /// leader that called `pthread_exit` while its threads run, or one still dying).
    /// Threads listed in `task/` that are themselves zombies or dead have exited:
    /// they can run no more code, and counting them (as a plain count of `task/`
    /// did) made a process that had finished dying read as live.
    fn is_live(&self, pid: i32, stat: &ProcStat) -> bool {
        if !exited(stat.state) {
            return true;
        }
        let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
            return false;
        };
        any_thread_running(tasks.flatten().map(|task| {
            // A thread gone between the listing and the read has exited.
            parse_stat(&std::fs::read_to_string(task.path().join("stat")).unwrap_or_default())
                .map_or('X', |s| s.state)
        }))
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

    fn parent(&self, pid: i32) -> Option<i32> {
        let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
        // Field 4, after the `(comm)` that may hold spaces and parentheses.
        text[text.rfind(')')? + 1..]
            .split_whitespace()
            .nth(1)?
            .parse()
            .ok()
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_process_whose_threads_have_all_exited_is_not_live() {
        // SIGKILLed: the leader a zombie, a second thread still listed but dead or a
        // zombie itself (the window in which a restart read the killed server as live).
        assert!(!any_thread_running(['Z', 'X'].into_iter()));
        assert!(!any_thread_running(['Z', 'Z'].into_iter()));
        assert!(!any_thread_running(std::iter::empty()));
        // A leader that called pthread_exit while a thread still sleeps or runs.
        assert!(any_thread_running(['Z', 'S'].into_iter()));
        assert!(any_thread_running(['Z', 'R', 'X'].into_iter()));
        assert!(any_thread_running(['Z', 'D'].into_iter()));
    }

    #[test]
    fn this_process_is_live() {
        let pid = std::process::id() as i32;
        let stat = Procfs.stat(pid).unwrap();
        assert!(Procfs.is_live(pid, &stat));
    }
}
