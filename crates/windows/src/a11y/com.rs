//! A dedicated COM thread (multi-threaded apartment) for accessibility calls, with hard
//! timeouts.
//!
//! UI Automation and MSAA calls cross into the target application and can block for as long
//! as that application does. Every call therefore runs as a job on this thread while the
//! caller waits at most its limit. A job that overruns is abandoned together with its thread:
//! the next call starts a fresh thread (and a fresh [`Session`], so element handles from the
//! hung one read as stale), so a hung provider costs one timeout, never the server.
//!
//! COM interface pointers never leave the thread: they live in the [`Session`] the jobs
//! receive, and jobs return plain data. [`Variant`] owns a `VARIANT` read on the thread and
//! clears it when dropped.

use std::sync::Mutex;
use std::sync::mpsc::{self, RecvTimeoutError};
use std::time::Duration;

use deskpilot_backend::Error;
use windows::Win32::System::Com::{COINIT_MULTITHREADED, CoInitializeEx, CoUninitialize};
use windows::Win32::System::Variant::{
    VARENUM, VARIANT, VT_BOOL, VT_BSTR, VT_I2, VT_I4, VT_INT, VT_UI4, VariantClear,
};

use super::session::Session;

type Job = Box<dyn FnOnce(&mut Session) + Send>;

/// The accessibility thread; cheap to keep, started on first use.
#[derive(Debug, Default)]
pub(crate) struct ComThread {
    jobs: Mutex<Option<mpsc::Sender<Job>>>,
}

fn spawn() -> Result<mpsc::Sender<Job>, Error> {
    let (tx, rx) = mpsc::channel::<Job>();
    std::thread::Builder::new()
        .name("deskpilot-a11y".into())
        .spawn(move || {
            // SAFETY: initialises COM for this thread only; balanced by CoUninitialize below,
            // after every interface pointer (all inside `session`) has been released.
            let init = unsafe { CoInitializeEx(None, COINIT_MULTITHREADED) };
            if init.is_err() {
                tracing::warn!("CoInitializeEx(MTA) failed: {init:?}");
            }
            let mut session = Session::default();
            for job in rx {
                job(&mut session);
            }
            drop(session);
            if init.is_ok() {
                // SAFETY: matches the successful CoInitializeEx of this thread.
                unsafe { CoUninitialize() };
            }
        })
        .map_err(|e| Error::os("starting the accessibility thread", e))?;
    Ok(tx)
}

impl ComThread {
    /// Runs `f` on the COM thread and waits at most `limit` for its answer.
    pub(crate) fn call<T: Send + 'static>(
        &self,
        what: &'static str,
        limit: Duration,
        f: impl FnOnce(&mut Session) -> Result<T, Error> + Send + 'static,
    ) -> Result<T, Error> {
        let (tx, rx) = mpsc::sync_channel(1);
        let job: Job = Box::new(move |session| {
            let _ = tx.send(f(session));
        });
        {
            let mut jobs = self.jobs.lock().unwrap_or_else(|e| e.into_inner());
            let sender = match jobs.take() {
                Some(s) => s,
                None => spawn()?,
            };
            if let Err(mpsc::SendError(job)) = sender.send(job) {
                // The thread ended (a job panicked): start another one.
                let fresh = spawn()?;
                let _ = fresh.send(job);
                *jobs = Some(fresh);
            } else {
                *jobs = Some(sender);
            }
        }
        match rx.recv_timeout(limit) {
            Ok(result) => result,
            Err(RecvTimeoutError::Timeout) => {
                // Abandon the stuck thread; it ends by itself if the call ever returns.
                *self.jobs.lock().unwrap_or_else(|e| e.into_inner()) = None;
                Err(Error::Timeout {
                    operation: format!(
                        "{what} (the accessibility provider did not answer; element handles read \
                         before are now gone)"
                    ),
                    after: limit,
                })
            }
            Err(RecvTimeoutError::Disconnected) => {
                *self.jobs.lock().unwrap_or_else(|e| e.into_inner()) = None;
                Err(Error::os(what, "the accessibility thread failed"))
            }
        }
    }
}

/// A VARIANT that is cleared when dropped.
pub(crate) struct Variant(pub VARIANT);

impl Drop for Variant {
    fn drop(&mut self) {
        // SAFETY: the VARIANT is owned here and cleared once.
        let _ = unsafe { VariantClear(&mut self.0) };
    }
}

impl Variant {
    /// A `VT_I4` holding `n` (an MSAA child id).
    pub(crate) fn i4(n: i32) -> Variant {
        let mut v = VARIANT::default();
        // SAFETY: writes the tag and the matching union member of a zeroed VARIANT.
        unsafe {
            (*v.Anonymous.Anonymous).vt = VT_I4;
            (*v.Anonymous.Anonymous).Anonymous.lVal = n;
        }
        Variant(v)
    }

    pub(crate) fn vt(&self) -> VARENUM {
        // SAFETY: every VARIANT starts with its tag.
        unsafe { self.0.Anonymous.Anonymous.vt }
    }

    /// The integer inside, read from the union directly (Wine 8 lacks `VariantToInt32`).
    pub(crate) fn as_i32(&self) -> Option<i32> {
        // SAFETY: the member read matches the tag.
        unsafe {
            let inner = &self.0.Anonymous.Anonymous;
            match inner.vt {
                VT_I4 | VT_INT => Some(inner.Anonymous.lVal),
                VT_UI4 => Some(inner.Anonymous.ulVal as i32),
                VT_I2 => Some(i32::from(inner.Anonymous.iVal)),
                _ => None,
            }
        }
    }

    pub(crate) fn as_bool(&self) -> Option<bool> {
        // SAFETY: the member read matches the tag.
        unsafe {
            let inner = &self.0.Anonymous.Anonymous;
            (inner.vt == VT_BOOL).then(|| inner.Anonymous.boolVal.0 != 0)
        }
    }

    pub(crate) fn as_string(&self) -> Option<String> {
        // SAFETY: the member read matches the tag; the BSTR stays owned by the VARIANT.
        unsafe {
            let inner = &self.0.Anonymous.Anonymous;
            (inner.vt == VT_BSTR).then(|| inner.Anonymous.bstrVal.to_string())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stuck_job_costs_one_timeout_and_the_next_call_gets_a_fresh_thread() {
        let com = ComThread::default();
        let (release, stuck) = mpsc::channel::<()>();
        let err = com
            .call("a stuck call", Duration::from_millis(200), move |_| {
                let _ = stuck.recv_timeout(Duration::from_secs(30));
                Ok(())
            })
            .unwrap_err();
        assert!(
            matches!(&err, Error::Timeout { after, .. } if *after == Duration::from_millis(200)),
            "{err}"
        );
        // The stuck thread is still stuck; a new call is answered anyway.
        let answer = com.call("a quick call", Duration::from_secs(5), |_| Ok(42));
        assert_eq!(answer.unwrap(), 42);
        let _ = release.send(());
    }

    #[test]
    fn a_panicking_job_fails_its_call_only() {
        let com = ComThread::default();
        let err = com.call(
            "a failing call",
            Duration::from_secs(5),
            |_| -> Result<(), Error> { panic!("provider bug") },
        );
        assert!(err.is_err());
        assert_eq!(
            com.call("the next", Duration::from_secs(5), |_| Ok(1))
                .unwrap(),
            1
        );
    }
}
