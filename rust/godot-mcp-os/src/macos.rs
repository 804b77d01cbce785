//! macOS: libproc (`proc_pidinfo`, `proc_listallpids`), `KERN_PROCARGS2`,
//! process groups. There is no pidfd: a pinned kill re-checks the identity
//! (start time to the microsecond, and the nonce) immediately before `kill`, so
//! only a pid reused within that instant, after the pid space wrapped, could be
//! hit; Linux closes even that gap with a pidfd.

use std::ffi::{CStr, c_int, c_void};

use crate::process_seam::{ProcStat, ProcessTable};

/// macOS: libproc and sysctl.
pub(crate) struct Libproc;

fn bsdinfo(pid: i32) -> Option<libc::proc_bsdinfo> {
    if pid <= 0 {
        return None;
    }
    let size = std::mem::size_of::<libc::proc_bsdinfo>() as c_int;
    // SAFETY: proc_bsdinfo is plain old data; proc_pidinfo writes at most
    // `size` bytes into it and returns how many it wrote.
    let mut info: libc::proc_bsdinfo = unsafe { std::mem::zeroed() };
    let n = unsafe {
        libc::proc_pidinfo(
            pid,
            libc::PROC_PIDTBSDINFO,
            0,
            (&raw mut info).cast::<c_void>(),
            size,
        )
    };
    (n == size).then_some(info)
}

/// `KERN_PROCARGS2` of `pid`: argc, the executable path, padding, the
/// arguments, then the environment. Another user's process answers nothing.
fn procargs(pid: i32) -> Option<Vec<u8>> {
    let mut argmax: c_int = 0;
    let mut size = std::mem::size_of::<c_int>();
    let mut mib = [libc::CTL_KERN, libc::KERN_ARGMAX];
    // SAFETY: the buffers and their sizes are passed together.
    let r = unsafe {
        libc::sysctl(
            mib.as_mut_ptr(),
            2,
            (&raw mut argmax).cast::<c_void>(),
            &mut size,
            std::ptr::null_mut(),
            0,
        )
    };
    if r != 0 || argmax <= 0 {
        return None;
    }
    let mut buf = vec![0u8; argmax as usize];
    let mut size = buf.len();
    let mut mib = [libc::CTL_KERN, libc::KERN_PROCARGS2, pid];
    // SAFETY: as above; the kernel writes at most `size` bytes and updates it.
    let r = unsafe {
        libc::sysctl(
            mib.as_mut_ptr(),
            3,
            buf.as_mut_ptr().cast::<c_void>(),
            &mut size,
            std::ptr::null_mut(),
            0,
        )
    };
    if r != 0 {
        return None;
    }
    buf.truncate(size);
    Some(buf)
}

/// Whether the volume holding `path` tells names apart by case; `None` when it
/// does not say.
pub(crate) fn case_sensitive(path: &std::path::Path) -> Option<bool> {
    use std::os::unix::ffi::OsStrExt;
    let c = std::ffi::CString::new(path.as_os_str().as_bytes()).ok()?;
    // SAFETY: a NUL-terminated path; pathconf only reads it.
    match unsafe { libc::pathconf(c.as_ptr(), libc::_PC_CASE_SENSITIVE) } {
        1 => Some(true),
        0 => Some(false),
        _ => None,
    }
}

impl ProcessTable for Libproc {
    /// `kern.bootsessionuuid`: a fresh UUID every boot.
    fn boot_id(&self) -> Option<String> {
        let mut buf = [0u8; 64];
        let mut size = buf.len();
        // SAFETY: the name is NUL-terminated; the buffer and its size go together.
        let r = unsafe {
            libc::sysctlbyname(
                c"kern.bootsessionuuid".as_ptr(),
                buf.as_mut_ptr().cast::<c_void>(),
                &mut size,
                std::ptr::null_mut(),
                0,
            )
        };
        if r != 0 {
            return None;
        }
        let id = CStr::from_bytes_until_nul(&buf[..size])
            .ok()?
            .to_str()
            .ok()?;
        (!id.is_empty()).then(|| id.to_owned())
    }

    /// Start time in microseconds since the epoch (`pbi_start_tvsec/usec`).
    fn stat(&self, pid: i32) -> Option<ProcStat> {
        let info = bsdinfo(pid)?;
        Some(ProcStat {
            state: if info.pbi_status == libc::SZOMB {
                'Z'
            } else {
                'S'
            },
            pgrp: i32::try_from(info.pbi_pgid).ok()?,
            start_time: info
                .pbi_start_tvsec
                .checked_mul(1_000_000)?
                .checked_add(info.pbi_start_tvusec)?,
            exiting: false,
        })
    }

    fn is_live(&self, _pid: i32, stat: &ProcStat) -> bool {
        stat.state != 'Z'
    }

    fn live(&self) -> Option<Vec<(i32, ProcStat)>> {
        // SAFETY: a null buffer asks for the count only.
        let n = unsafe { libc::proc_listallpids(std::ptr::null_mut(), 0) };
        if n <= 0 {
            return None;
        }
        // Room for processes started since the count was taken.
        let mut pids = vec![0 as libc::pid_t; n as usize + 64];
        let bytes = (pids.len() * std::mem::size_of::<libc::pid_t>()) as c_int;
        // SAFETY: the buffer holds `bytes` bytes; the answer is a pid count.
        let got = unsafe { libc::proc_listallpids(pids.as_mut_ptr().cast::<c_void>(), bytes) };
        if got <= 0 {
            return None;
        }
        pids.truncate((got as usize).min(pids.len()));
        Some(
            pids.into_iter()
                .filter(|pid| *pid > 0)
                .filter_map(|pid| Some((pid, self.stat(pid)?)))
                .filter(|(pid, s)| self.is_live(*pid, s))
                .collect(),
        )
    }

    fn cmdline_contains(&self, pid: i32, needle: &str) -> bool {
        procargs(pid).is_some_and(|raw| {
            crate::process_seam::parse_procargs2(&raw).is_some_and(|(args, _)| {
                args.iter()
                    .any(|a| std::str::from_utf8(a).is_ok_and(|a| a.contains(needle)))
            })
        })
    }

    fn environ_contains(&self, pid: i32, entry: &str) -> bool {
        procargs(pid).is_some_and(|raw| {
            crate::process_seam::parse_procargs2(&raw)
                .is_some_and(|(_, env)| env.contains(&entry.as_bytes()))
        })
    }

    fn signal_pinned(
        &self,
        pid: i32,
        start_time: u64,
        nonce: &str,
        signal: crate::process_seam::PinnedSignal,
    ) {
        let table: &dyn ProcessTable = self;
        let same = self.stat(pid).is_some_and(|s| s.start_time == start_time)
            && table.carries_nonce(pid, nonce);
        if same && let Some(p) = rustix::process::Pid::from_raw(pid) {
            let signal = match signal {
                crate::process_seam::PinnedSignal::Term => rustix::process::Signal::TERM,
                crate::process_seam::PinnedSignal::Kill => rustix::process::Signal::KILL,
            };
            let _ = rustix::process::kill_process(p, signal);
        }
    }
}
