//! Windows: process identity by handle and creation time. Windows has no
//! process groups, and another process's command line and environment are not
//! read here, so the process-group reconciliation cannot run:
//! [`ProcessTable::observable`] is `false` and the journal quarantines every
//! open process-group launch instead of guessing. The boundary on Windows is a
//! Job Object (`crate::job`), which this table observes by name
//! ([`ProcessTable::observes_jobs`]): a job-bounded launch is reconciled.

use windows_sys::Win32::Foundation::WAIT_TIMEOUT;
use windows_sys::Win32::System::Diagnostics::ToolHelp::{
    CreateToolhelp32Snapshot, PROCESSENTRY32W, Process32FirstW, Process32NextW, TH32CS_SNAPPROCESS,
};
use windows_sys::Win32::System::Threading::{
    OpenProcess, PROCESS_QUERY_LIMITED_INFORMATION, PROCESS_SYNCHRONIZE, WaitForSingleObject,
};

use crate::job::JobObject;
use crate::process_seam::{JobState, ProcStat, ProcessTable};
use crate::win_handle::{Owned, creation_time};

/// Windows: process handles.
pub(crate) struct Win32;

/// Pid and creation time, read through one handle: the handle pins the
/// process object, so both belong to the same process. `Z` once it exited (the
/// object lives on while anyone holds a handle to it).
pub(crate) fn stat_of(pid: u32) -> Option<ProcStat> {
    if pid == 0 {
        return None;
    }
    // SAFETY: plain call; the result is owned below.
    let h = Owned::new(unsafe {
        OpenProcess(
            PROCESS_QUERY_LIMITED_INFORMATION | PROCESS_SYNCHRONIZE,
            0,
            pid,
        )
    })?;
    let start_time = creation_time(h.0)?;
    // SAFETY: a process handle with SYNCHRONIZE; a zero timeout only polls.
    let running = unsafe { WaitForSingleObject(h.0, 0) } == WAIT_TIMEOUT;
    Some(ProcStat {
        state: if running { 'R' } else { 'Z' },
        pgrp: 0,
        start_time,
        exiting: false,
    })
}

/// Every pid in a Toolhelp snapshot; `None` when none can be taken.
fn all_pids() -> Option<Vec<u32>> {
    // SAFETY: plain call; the result is owned below.
    let snap = Owned::new(unsafe { CreateToolhelp32Snapshot(TH32CS_SNAPPROCESS, 0) })?;
    // SAFETY: PROCESSENTRY32W is plain old data; dwSize must be set first.
    let mut entry: PROCESSENTRY32W = unsafe { std::mem::zeroed() };
    entry.dwSize = std::mem::size_of::<PROCESSENTRY32W>() as u32;
    let mut pids = Vec::new();
    // SAFETY: the snapshot handle and an initialised entry.
    let mut more = unsafe { Process32FirstW(snap.0, &mut entry) } != 0;
    while more {
        pids.push(entry.th32ProcessID);
        // SAFETY: as above.
        more = unsafe { Process32NextW(snap.0, &mut entry) } != 0;
    }
    Some(pids)
}

/// Pids, creation times and handles are all there is: process groups, command
/// lines (reading another process's needs its PEB) and environments are not
/// observed, there is no boot id, and the signalling methods keep their
/// do-nothing defaults (there are no process groups: a Job Object is terminated
/// instead, and no process is proven the launch's by its nonce, so none is
/// signalled). A process-group launch is never proven gone or terminated here;
/// a job-bounded one is, through its job.
impl ProcessTable for Win32 {
    fn observable(&self) -> bool {
        false
    }

    fn observes_jobs(&self) -> bool {
        true
    }

    fn job_members(&self, name: &str) -> JobState {
        match JobObject::open(name) {
            Ok(None) => JobState::Gone,
            Ok(Some(job)) => match job.members() {
                Ok(pids) => JobState::Members(
                    pids.into_iter()
                        .filter_map(|p| i32::try_from(p).ok())
                        .collect(),
                ),
                Err(e) => JobState::Unreadable(format!("listing job {name}: {e}")),
            },
            Err(e) => JobState::Unreadable(format!("opening job {name}: {e}")),
        }
    }

    fn terminate_job(&self, name: &str) -> bool {
        matches!(JobObject::open(name), Ok(Some(job)) if job.terminate(1).is_ok())
    }

    fn stat(&self, pid: i32) -> Option<ProcStat> {
        stat_of(u32::try_from(pid).ok()?)
    }

    fn is_live(&self, _pid: i32, stat: &ProcStat) -> bool {
        stat.state != 'Z'
    }

    fn live(&self) -> Option<Vec<(i32, ProcStat)>> {
        Some(
            all_pids()?
                .into_iter()
                .filter_map(|pid| Some((i32::try_from(pid).ok()?, stat_of(pid)?)))
                .filter(|(pid, s)| self.is_live(*pid, s))
                .collect(),
        )
    }
}
