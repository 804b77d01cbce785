//! Windows: an owned handle and a process's creation time, the two pieces the
//! process table (`windows`) and the Job Object (`job`) both use. It imports
//! nothing else of the crate.

use windows_sys::Win32::Foundation::{CloseHandle, FILETIME, HANDLE};
use windows_sys::Win32::System::Threading::GetProcessTimes;

/// An owned handle, closed on drop.
pub(crate) struct Owned(pub(crate) HANDLE);

impl Owned {
    /// `None` for a null or invalid handle.
    pub(crate) fn new(h: HANDLE) -> Option<Self> {
        (!h.is_null() && h != windows_sys::Win32::Foundation::INVALID_HANDLE_VALUE)
            .then_some(Self(h))
    }
}

impl Drop for Owned {
    fn drop(&mut self) {
        // SAFETY: the handle is owned and closed once.
        unsafe { CloseHandle(self.0) };
    }
}

/// The creation time of the process behind `h` (100 ns since 1601).
pub(crate) fn creation_time(h: HANDLE) -> Option<u64> {
    let zero = FILETIME {
        dwLowDateTime: 0,
        dwHighDateTime: 0,
    };
    let (mut created, mut exited, mut kernel, mut user) = (zero, zero, zero, zero);
    // SAFETY: four valid out-pointers and a process handle.
    let ok = unsafe { GetProcessTimes(h, &mut created, &mut exited, &mut kernel, &mut user) };
    (ok != 0).then(|| (u64::from(created.dwHighDateTime) << 32) | u64::from(created.dwLowDateTime))
}
