//! The Windows side of launching a browser: installed browsers are found under the program
//! directories, and each launched browser runs in a job object that kills everything in it
//! when its last handle closes — when deskpilot closes the browser, and when deskpilot itself
//! dies, however it dies (the counterpart of `PR_SET_PDEATHSIG` and the process group on
//! Linux). Nothing is read of other processes: no port is found on a command line, and no
//! profile directory is known to be stale.
//!
//! The browser is put in the job right after it starts, before it starts its own children
//! (Chromium does that a good while later); a child started in between would escape. Compiled
//! and unit-checked on the Windows target; not run here (no Chromium under Wine).

use std::os::windows::io::AsRawHandle as _;
use std::path::PathBuf;
use std::process::{Child, Command};

use windows::Win32::Foundation::{CloseHandle, HANDLE};
use windows::Win32::System::JobObjects::{
    AssignProcessToJobObject, CreateJobObjectW, JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE,
    JOBOBJECT_EXTENDED_LIMIT_INFORMATION, JobObjectExtendedLimitInformation,
    SetInformationJobObject, TerminateJobObject,
};
use windows::core::PCWSTR;

/// Where to find a browser when none is installed.
pub(super) const NO_BROWSER: &str = "install Microsoft Edge or Google Chrome, or set DESKPILOT_BROWSER to a Chromium-family browser";

/// The installed browsers' paths, in the order they are tried: Edge, Chrome and Chromium under
/// each program directory.
pub(super) fn installed() -> Vec<PathBuf> {
    let mut out = Vec::new();
    for base in ["ProgramFiles", "ProgramFiles(x86)", "LOCALAPPDATA"] {
        if let Some(dir) = std::env::var_os(base) {
            let dir = PathBuf::from(dir);
            out.push(dir.join("Microsoft/Edge/Application/msedge.exe"));
            out.push(dir.join("Google/Chrome/Application/chrome.exe"));
            out.push(dir.join("Chromium/Application/chrome.exe"));
        }
    }
    out
}

/// Nothing to prepare: the job taken by [`hold`] ties the browser to deskpilot.
pub(super) fn own(_cmd: &mut Command) {}

/// Nothing to add: Chromium refuses its sandbox only to Unix's root.
pub(super) fn sandbox(_cmd: &mut Command) {}

/// What ends a launched browser whole: its job, when one could be made.
#[derive(Debug)]
pub(super) struct Hold(Option<Job>);

/// Puts the browser just started in a job of its own.
pub(super) fn hold(child: &Child) -> Hold {
    Hold(
        Job::hold(child)
            .inspect_err(|e| {
                tracing::warn!("the browser is not in a job; it may outlive deskpilot: {e}")
            })
            .ok(),
    )
}

impl Hold {
    /// Ends every process in the browser's job.
    pub(super) fn kill(&self, _child: &Child) {
        if let Some(job) = &self.0 {
            job.kill();
        }
    }
}

/// Nothing is left to wait for once the job is killed.
pub(super) fn group_alive(_pgid: u32) -> bool {
    false
}

/// No process is known to have ended: profile directories are left.
pub(super) fn ended(_pid: u32) -> bool {
    false
}

/// No command line is read on Windows: `None`.
pub fn debug_port_of(_pid: u32) -> Option<u16> {
    None
}

/// A job holding one browser and everything it starts.
#[derive(Debug)]
struct Job(HANDLE);

// SAFETY: a job handle may be used and closed from any thread.
unsafe impl Send for Job {}
// SAFETY: as above; the handle is only read.
unsafe impl Sync for Job {}

impl Job {
    /// A job for `child`: killed whole when the job's last handle closes.
    fn hold(child: &Child) -> std::io::Result<Job> {
        // SAFETY: plain Win32 calls on a handle this function owns until it is returned; the
        // limit structure outlives the call that reads it.
        unsafe {
            let job = CreateJobObjectW(None, PCWSTR::null()).map_err(std::io::Error::other)?;
            let job = Job(job);
            let mut limits = JOBOBJECT_EXTENDED_LIMIT_INFORMATION::default();
            limits.BasicLimitInformation.LimitFlags = JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE;
            SetInformationJobObject(
                job.0,
                JobObjectExtendedLimitInformation,
                std::ptr::from_ref(&limits).cast(),
                size_of::<JOBOBJECT_EXTENDED_LIMIT_INFORMATION>() as u32,
            )
            .map_err(std::io::Error::other)?;
            AssignProcessToJobObject(job.0, HANDLE(child.as_raw_handle()))
                .map_err(std::io::Error::other)?;
            Ok(job)
        }
    }

    /// Ends every process in the job now.
    fn kill(&self) {
        // SAFETY: the handle is open until drop.
        let _ = unsafe { TerminateJobObject(self.0, 1) };
    }
}

impl Drop for Job {
    fn drop(&mut self) {
        // SAFETY: closing the handle this value owns, once.
        let _ = unsafe { CloseHandle(self.0) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn endless() -> Child {
        // An interactive cmd waiting on its stdin: it never ends by itself.
        Command::new("cmd")
            .arg("/K")
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::null())
            .spawn()
            .expect("cmd")
    }

    /// Whether `child` ends within 5 s, its stdin still open (`wait` would close it, and cmd
    /// ends by itself on end of input).
    fn ended(child: &mut Child) -> bool {
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
        while std::time::Instant::now() < deadline {
            if child.try_wait().expect("try_wait").is_some() {
                return true;
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        let _ = child.kill();
        false
    }

    #[test]
    fn closing_the_last_handle_kills_what_the_job_holds() {
        // What happens when deskpilot dies: the system closes its handles.
        let mut child = endless();
        let job = Job::hold(&child).expect("a job");
        drop(job);
        assert!(
            ended(&mut child),
            "the job's close left its process running"
        );
    }

    #[test]
    fn a_job_kills_what_it_holds() {
        let mut child = endless();
        let job = Job::hold(&child).expect("a job");
        job.kill();
        assert!(
            ended(&mut child),
            "TerminateJobObject left its process running"
        );
    }
}
