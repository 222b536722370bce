//! Stopping a long engine call from above: a surface whose client can take a call back (MCP's
//! `notifications/cancelled`, `tasks/cancel`) runs the call's blocking work inside
//! [`Cancel::scope`] and raises the flag with [`Cancel::cancel`] from wherever it learns of it.
//!
//! The engine's loops that wait look at the flag of the call running on their thread: the
//! `wait_for` polls and the browser waits sleep in [`pause`] and end with `Error::Cancelled`;
//! a shell command's read loop is handed [`cancelled`] and kills the command with its process
//! group (as on a timeout), restarting the shell with its directory and variables; OCR looks
//! before reading and before registering the capture (one read of the OCR worker runs to its
//! end and is dropped).
//!
//! A call outside any scope is never cancelled, and nothing that already reached the desktop is
//! undone: a cancel stops what is still to come.

use std::cell::RefCell;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use crate::error::Error;

/// How often a cancelled wait notices: the longest step [`pause`] sleeps.
pub(crate) const STEP: Duration = Duration::from_millis(20);

/// The flag of one call: raised once, seen by every clone.
#[derive(Debug, Clone, Default)]
pub struct Cancel(Arc<AtomicBool>);

thread_local! {
    /// The flag of the call whose work runs on this thread.
    static CURRENT: RefCell<Option<Cancel>> = const { RefCell::new(None) };
}

impl Cancel {
    /// A flag not raised yet.
    pub fn new() -> Cancel {
        Cancel::default()
    }

    /// Raises the flag: the call's waiting loops end at their next look.
    pub fn cancel(&self) {
        self.0.store(true, Ordering::Release);
    }

    /// Whether the flag is raised.
    pub fn is_cancelled(&self) -> bool {
        self.0.load(Ordering::Acquire)
    }

    /// Runs `f` on this thread as the work of the call this flag belongs to.
    pub fn scope<T>(&self, f: impl FnOnce() -> T) -> T {
        struct Restore(Option<Cancel>);
        impl Drop for Restore {
            fn drop(&mut self) {
                CURRENT.with(|c| *c.borrow_mut() = self.0.take());
            }
        }
        let _restore = Restore(CURRENT.with(|c| c.replace(Some(self.clone()))));
        f()
    }
}

/// Whether the call whose work runs on this thread was cancelled.
pub(crate) fn cancelled() -> bool {
    CURRENT.with(|c| c.borrow().as_ref().is_some_and(Cancel::is_cancelled))
}

/// `Err(Cancelled)` once the call running on this thread was cancelled; `doing` says what it was
/// doing ("waiting for a window").
pub(crate) fn check(doing: &str) -> Result<(), Error> {
    if cancelled() {
        return Err(Error::Cancelled {
            doing: doing.to_string(),
        });
    }
    Ok(())
}

/// Sleeps `length`, or less when the call is cancelled meanwhile (then `Err(Cancelled)`).
pub(crate) fn pause(length: Duration, doing: &str) -> Result<(), Error> {
    let until = Instant::now() + length;
    loop {
        check(doing)?;
        let left = until.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Ok(());
        }
        std::thread::sleep(left.min(STEP));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_scoped_call_sees_its_flag() {
        let flag = Cancel::new();
        assert!(check("x").is_ok());
        flag.scope(|| {
            assert!(check("x").is_ok());
            flag.cancel();
            let e = check("waiting").unwrap_err();
            assert_eq!(e.code(), deskpilot_types::ErrorCode::Cancelled);
            assert!(e.to_string().contains("waiting"), "{e}");
            // Another call's scope inside is its own.
            Cancel::new().scope(|| assert!(!cancelled()));
            assert!(cancelled());
        });
        assert!(!cancelled(), "outside the scope nothing is cancelled");
    }

    #[test]
    fn a_pause_ends_soon_after_the_flag_is_raised_elsewhere() {
        let flag = Cancel::new();
        let raiser = flag.clone();
        let started = Instant::now();
        let t = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(100));
            raiser.cancel();
        });
        let r = flag.scope(|| pause(Duration::from_secs(20), "pausing"));
        t.join().unwrap();
        assert!(matches!(r, Err(Error::Cancelled { .. })));
        assert!(started.elapsed() < Duration::from_secs(2));
        // Not cancelled: the whole length.
        let started = Instant::now();
        Cancel::new()
            .scope(|| pause(Duration::from_millis(60), "pausing"))
            .unwrap();
        assert!(started.elapsed() >= Duration::from_millis(60));
    }
}
