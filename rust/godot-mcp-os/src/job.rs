//! Windows: the Job Object as a launch's boundary. Every process the launched
//! one starts joins the job (unless it breaks away, which this job does not
//! allow), so the job's process list is the boundary's member list, one call
//! terminates the whole tree, and `JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE` kills
//! the tree when the last handle closes, which is when the server dies, however
//! it dies.
//!
//! A child must join the job before it can start children of its own: the
//! supervisor assigns it while it is still held at its gate (see the process
//! plane), before releasing it.

use std::io;
use std::os::windows::io::{AsHandle, AsRawHandle, BorrowedHandle};

use windows_sys::Win32::Foundation::{
    ERROR_ALREADY_EXISTS, ERROR_FILE_NOT_FOUND, ERROR_MORE_DATA, SetLastError,
};
use windows_sys::Win32::System::Diagnostics::ToolHelp::{
    CreateToolhelp32Snapshot, TH32CS_SNAPTHREAD, THREADENTRY32, Thread32First, Thread32Next,
};
use windows_sys::Win32::System::JobObjects::{
    AssignProcessToJobObject, CreateJobObjectW, JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE,
    JOBOBJECT_BASIC_PROCESS_ID_LIST, JOBOBJECT_EXTENDED_LIMIT_INFORMATION,
    JobObjectBasicProcessIdList, JobObjectExtendedLimitInformation, OpenJobObjectW,
    QueryInformationJobObject, SetInformationJobObject, TerminateJobObject,
};
use windows_sys::Win32::System::Threading::{
    OpenProcess, OpenThread, PROCESS_SET_QUOTA, PROCESS_TERMINATE, ResumeThread,
    THREAD_SUSPEND_RESUME,
};

use crate::win_handle::Owned;

/// `JOB_OBJECT_QUERY | JOB_OBJECT_TERMINATE | JOB_OBJECT_ASSIGN_PROCESS`.
const JOB_ACCESS: u32 = 0x0004 | 0x0008 | 0x0001;

/// A Job Object this process holds a handle to.
pub struct JobObject {
    handle: Owned,
}

// SAFETY: a job handle may be used from any thread.
unsafe impl Send for JobObject {}
// SAFETY: every operation is a kernel call on the handle; none mutates it.
unsafe impl Sync for JobObject {}

impl std::fmt::Debug for JobObject {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("JobObject").finish_non_exhaustive()
    }
}

fn wide(name: &str) -> Vec<u16> {
    name.encode_utf16().chain(std::iter::once(0)).collect()
}

impl JobObject {
    /// Creates a job (named, so that the next server can open it by the name
    /// its receipt recorded) whose processes die when its last handle closes.
    /// A name that already names a job is refused (`AlreadyExists`): that job
    /// is someone else's, and its members must never be taken for a launch's.
    pub fn create(name: Option<&str>) -> io::Result<Self> {
        let name = name.map(wide);
        let ptr = name.as_ref().map_or(std::ptr::null(), |n| n.as_ptr());
        // SAFETY: plain calls; a null security descriptor and a NUL-terminated
        // name (or null). The last error is cleared first: a successful create
        // of a new job need not reset it.
        let handle = Owned::new(unsafe {
            SetLastError(0);
            CreateJobObjectW(std::ptr::null(), ptr)
        })
        .ok_or_else(io::Error::last_os_error)?;
        if name.is_some()
            && io::Error::last_os_error().raw_os_error() == Some(ERROR_ALREADY_EXISTS as i32)
        {
            return Err(io::Error::new(
                io::ErrorKind::AlreadyExists,
                "a Job Object of that name exists already",
            ));
        }
        // SAFETY: a zeroed limit structure is valid; only the flag is set.
        let mut limits: JOBOBJECT_EXTENDED_LIMIT_INFORMATION = unsafe { std::mem::zeroed() };
        limits.BasicLimitInformation.LimitFlags = JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE;
        // SAFETY: the structure and its size go together.
        let ok = unsafe {
            SetInformationJobObject(
                handle.0,
                JobObjectExtendedLimitInformation,
                (&raw const limits).cast(),
                std::mem::size_of::<JOBOBJECT_EXTENDED_LIMIT_INFORMATION>() as u32,
            )
        };
        if ok == 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(Self { handle })
    }

    /// Opens the job a receipt named; `None` when no such job exists any more
    /// (its last handle closed, so every process it held was killed).
    pub fn open(name: &str) -> io::Result<Option<Self>> {
        let name = wide(name);
        // SAFETY: a NUL-terminated name.
        match Owned::new(unsafe { OpenJobObjectW(JOB_ACCESS, 0, name.as_ptr()) }) {
            Some(handle) => Ok(Some(Self { handle })),
            None => {
                let e = io::Error::last_os_error();
                if e.raw_os_error() == Some(ERROR_FILE_NOT_FOUND as i32) {
                    Ok(None)
                } else {
                    Err(e)
                }
            }
        }
    }

    /// Puts `child` (and every process it starts from now on) in the job.
    pub fn assign(&self, child: &std::process::Child) -> io::Result<()> {
        self.assign_handle(child.as_handle())
    }

    /// Puts process `pid` in the job. The caller must hold the process open
    /// (a child not yet waited for), so that the pid cannot name another
    /// process meanwhile.
    pub fn assign_pid(&self, pid: u32) -> io::Result<()> {
        // SAFETY: plain call; the result is owned below.
        let process =
            Owned::new(unsafe { OpenProcess(PROCESS_SET_QUOTA | PROCESS_TERMINATE, 0, pid) })
                .ok_or_else(io::Error::last_os_error)?;
        // SAFETY: the handle is open for the duration of the borrow.
        self.assign_handle(unsafe { BorrowedHandle::borrow_raw(process.0) })
    }

    /// Puts the process behind `process` (a live process handle with
    /// `PROCESS_SET_QUOTA | PROCESS_TERMINATE`, as a spawned child's is) in the job.
    pub fn assign_handle(&self, process: BorrowedHandle<'_>) -> io::Result<()> {
        // SAFETY: the job handle and a live process handle.
        let ok = unsafe { AssignProcessToJobObject(self.handle.0, process.as_raw_handle()) };
        if ok == 0 {
            Err(io::Error::last_os_error())
        } else {
            Ok(())
        }
    }

    /// The pids of every process in the job now.
    pub fn members(&self) -> io::Result<Vec<u32>> {
        let header = std::mem::size_of::<JOBOBJECT_BASIC_PROCESS_ID_LIST>();
        let mut room = 64usize;
        loop {
            // usize-aligned storage: the list's pid array is of usize.
            let words = header / std::mem::size_of::<usize>() + room;
            let mut buf = vec![0usize; words];
            let bytes = (words * std::mem::size_of::<usize>()) as u32;
            // SAFETY: the buffer holds `bytes` bytes, aligned for the structure.
            let ok = unsafe {
                QueryInformationJobObject(
                    self.handle.0,
                    JobObjectBasicProcessIdList,
                    buf.as_mut_ptr().cast(),
                    bytes,
                    std::ptr::null_mut(),
                )
            };
            // SAFETY: the structure is at the start of the aligned buffer.
            let list = unsafe { &*buf.as_ptr().cast::<JOBOBJECT_BASIC_PROCESS_ID_LIST>() };
            let assigned = list.NumberOfAssignedProcesses as usize;
            if ok != 0 && list.NumberOfProcessIdsInList as usize >= assigned {
                let n = list.NumberOfProcessIdsInList as usize;
                let first = std::mem::offset_of!(JOBOBJECT_BASIC_PROCESS_ID_LIST, ProcessIdList)
                    / std::mem::size_of::<usize>();
                let ids = buf.get(first..first + n).unwrap_or_default();
                return Ok(ids.iter().filter_map(|p| u32::try_from(*p).ok()).collect());
            }
            if ok == 0 {
                let e = io::Error::last_os_error();
                // Grow and ask again.
                if e.raw_os_error() != Some(ERROR_MORE_DATA as i32) {
                    return Err(e);
                }
            }
            room = room.max(assigned) * 2;
        }
    }

    /// Terminates every process in the job with `exit_code`.
    pub fn terminate(&self, exit_code: u32) -> io::Result<()> {
        // SAFETY: the job handle.
        if unsafe { TerminateJobObject(self.handle.0, exit_code) } == 0 {
            Err(io::Error::last_os_error())
        } else {
            Ok(())
        }
    }
}

/// The creation time (100 ns since 1601) of `child`, read through its own
/// handle: the identity its receipt records.
pub fn creation_time(child: &std::process::Child) -> Option<u64> {
    crate::win_handle::creation_time(child.as_raw_handle())
}

/// Resumes every thread of `pid`, a process created suspended
/// (`CREATE_SUSPENDED`, see [`CREATE_SUSPENDED`]): the release of a gated
/// child, once it is in its job and its receipt is durable. A suspended
/// process has run no code of its own, so nothing of it escaped the job.
pub fn resume(pid: u32) -> io::Result<()> {
    // SAFETY: plain call; the result is owned below.
    let snap = Owned::new(unsafe { CreateToolhelp32Snapshot(TH32CS_SNAPTHREAD, 0) })
        .ok_or_else(io::Error::last_os_error)?;
    // SAFETY: THREADENTRY32 is plain old data; dwSize must be set first.
    let mut entry: THREADENTRY32 = unsafe { std::mem::zeroed() };
    entry.dwSize = std::mem::size_of::<THREADENTRY32>() as u32;
    let mut resumed = 0;
    // SAFETY: the snapshot handle and an initialised entry.
    let mut more = unsafe { Thread32First(snap.0, &mut entry) } != 0;
    while more {
        if entry.th32OwnerProcessID == pid {
            // SAFETY: plain call; the result is owned below.
            let thread =
                Owned::new(unsafe { OpenThread(THREAD_SUSPEND_RESUME, 0, entry.th32ThreadID) })
                    .ok_or_else(io::Error::last_os_error)?;
            // SAFETY: a thread handle with THREAD_SUSPEND_RESUME.
            if unsafe { ResumeThread(thread.0) } == u32::MAX {
                return Err(io::Error::last_os_error());
            }
            resumed += 1;
        }
        // SAFETY: as above.
        more = unsafe { Thread32Next(snap.0, &mut entry) } != 0;
    }
    if resumed == 0 {
        return Err(io::Error::new(
            io::ErrorKind::NotFound,
            format!("process {pid} has no thread to resume"),
        ));
    }
    Ok(())
}

/// The creation flag that holds a new process before its first instruction,
/// until [`resume`].
pub use windows_sys::Win32::System::Threading::CREATE_SUSPENDED;
