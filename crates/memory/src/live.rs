//! Memory as the running engine holds it: the [`Memory`] behind a lock, the newest window
//! list waiting to be applied, the saver thread, the window listing that feeds it
//! ([`Watched`]), and the per-thread trace of the tool call running ([`traced`]).
//!
//! Plain machinery: it knows no session and no engine (the engine's hooks that feed it live in
//! the engine), so the engine holds a [`Store`] and the surfaces run calls [`traced`] without
//! either knowing the other's internals.

use std::cell::RefCell;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, Weak};
use std::time::{Duration, Instant};

use deskpilot_backend::Windows;
use deskpilot_types::{Point, WindowId, WindowInfo};

use crate::{
    Memory, MemoryPrivacy, MemorySettings, UnixMillis,
    aliases::Aliases,
    now_millis,
    persist::{LoadWarning, STATE_FILE},
    store::{ElementObservation, WindowObservation},
    timeline::{TimelineEntry, TimelineTarget, TimelineWindow},
};

/// The shortest time between two saves of the state file.
pub const SAVE_INTERVAL: Duration = Duration::from_secs(1);

/// The state file could not be written (the engine reports it as `MEMORY_UNAVAILABLE`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SaveError {
    /// `cannot write <path>: <reason>`.
    pub message: String,
}

impl std::fmt::Display for SaveError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for SaveError {}

/// Memory as the engine holds it.
#[derive(Debug)]
pub struct Store {
    inner: Mutex<Inner>,
    /// The newest complete window list not yet applied.
    pending: Mutex<Option<Listing>>,
    wake: Condvar,
    seq: AtomicU64,
    /// Why the state file could not be loaded at start, when it could not.
    pub warning: Option<LoadWarning>,
}

#[derive(Debug)]
struct Listing {
    seq: u64,
    at: UnixMillis,
    windows: Vec<WindowInfo>,
}

/// The locked state: memory itself and what the saver needs to know about it.
#[derive(Debug)]
pub struct Inner {
    /// Memory itself.
    pub memory: Memory,
    applied: u64,
    /// Something changed since the last save (the saver writes it within [`SAVE_INTERVAL`]).
    pub dirty: bool,
    last_save: Option<Instant>,
    save_error: Option<String>,
}

impl Store {
    /// Opens memory as `settings` say; `None` when it is off or has no directory.
    pub fn open(settings: &MemorySettings, blocklist: &[String]) -> Option<Arc<Store>> {
        if !settings.enabled {
            return None;
        }
        let dir = settings.dir.clone()?;
        let mut aliases = Aliases::default();
        for group in &settings.aliases {
            aliases.extend(group);
        }
        let privacy = MemoryPrivacy {
            blocklist: blocklist.to_vec(),
            never_remember: settings.never_remember.clone(),
        };
        let (memory, warning) = Memory::open(&dir, privacy, aliases, now_millis());
        if let Some(w) = &warning {
            tracing::warn!("memory: {w}");
        }
        let store = Arc::new(Store {
            inner: Mutex::new(Inner {
                memory,
                applied: 0,
                dirty: false,
                last_save: None,
                save_error: None,
            }),
            pending: Mutex::new(None),
            wake: Condvar::new(),
            seq: AtomicU64::new(0),
            warning,
        });
        let weak = Arc::downgrade(&store);
        let spawned = std::thread::Builder::new()
            .name("deskpilot-memory".into())
            .spawn(move || saver(weak));
        if let Err(e) = spawned {
            tracing::warn!("memory: no saver thread ({e}); saving on demand only");
        }
        Some(store)
    }

    /// The locked state as it is (a pending window list not applied).
    pub fn inner(&self) -> MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Offers a complete window list (newest wins).
    fn offer(&self, windows: Vec<WindowInfo>) {
        let listing = Listing {
            seq: self.seq.fetch_add(1, Ordering::Relaxed) + 1,
            at: now_millis(),
            windows,
        };
        *self.pending.lock().unwrap_or_else(|e| e.into_inner()) = Some(listing);
        self.wake.notify_one();
    }

    /// Applies the pending window list, if any; returns the locked state.
    pub fn current(&self) -> MutexGuard<'_, Inner> {
        let listing = self
            .pending
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take();
        let mut inner = self.inner();
        if let Some(l) = listing
            && l.seq > inner.applied
        {
            let list: Vec<WindowObservation> = l.windows.iter().map(Into::into).collect();
            let active = l.windows.iter().find(|w| w.state.active).map(|w| w.id);
            let made = inner.memory.observe_windows(&list, active, l.at);
            for r in made {
                tracing::debug!(previous = %r.previous, confidence = ?r.confidence, "memory: a window reopened");
            }
            inner.applied = l.seq;
            inner.dirty = true;
        }
        inner
    }

    /// Saves when something changed and the last save is `interval` old.
    fn save_if_due(&self, interval: Duration) -> Result<(), SaveError> {
        let mut inner = self.current();
        if !inner.dirty || inner.last_save.is_some_and(|t| t.elapsed() < interval) {
            return Ok(());
        }
        let result = inner.memory.save();
        inner.last_save = Some(Instant::now());
        match result {
            Ok(_) => {
                inner.dirty = false;
                inner.save_error = None;
                Ok(())
            }
            Err(e) => {
                if inner.save_error.is_none() {
                    tracing::warn!(dir = %inner.memory.dir().display(), "memory: cannot save: {e}");
                }
                inner.save_error = Some(e.to_string());
                Err(SaveError {
                    message: format!(
                        "cannot write {}: {e}",
                        inner.memory.dir().join(STATE_FILE).display()
                    ),
                })
            }
        }
    }

    /// Saves now if anything changed since the last save.
    pub fn flush(&self) -> Result<(), SaveError> {
        self.save_if_due(Duration::ZERO)
    }
}

/// The saver thread: applies window lists as they come and saves at most once per
/// [`SAVE_INTERVAL`]; ends when the engine drops its memory.
fn saver(store: Weak<Store>) {
    loop {
        let Some(s) = store.upgrade() else { return };
        let _ = s.save_if_due(SAVE_INTERVAL);
        let pending = s.pending.lock().unwrap_or_else(|e| e.into_inner());
        if pending.is_none() {
            let _ = s.wake.wait_timeout(pending, Duration::from_millis(250));
        }
    }
}

impl Drop for Store {
    fn drop(&mut self) {
        let _ = self.flush();
    }
}

/// The backend's window listing, with every complete list offered to memory.
pub struct Watched {
    /// The backend's own listing.
    pub inner: Arc<dyn Windows>,
    /// The memory fed; weak, so the listing never keeps memory alive.
    pub store: Weak<Store>,
}

impl std::fmt::Debug for Watched {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Watched").finish_non_exhaustive()
    }
}

impl Windows for Watched {
    fn list_windows(&self) -> Result<Vec<WindowInfo>, deskpilot_backend::Error> {
        let list = self.inner.list_windows()?;
        if let Some(s) = self.store.upgrade() {
            s.offer(list.clone());
        }
        Ok(list)
    }

    fn window_at(&self, p: Point) -> Result<Option<WindowId>, deskpilot_backend::Error> {
        self.inner.window_at(p)
    }
}

/// What one tool call resolved and did, gathered on its thread.
#[derive(Debug)]
pub struct Trace {
    tool: String,
    /// The memory the entry goes to; `None` when the call touched nothing worth an entry.
    pub store: Option<Arc<Store>>,
    /// The window the call looked at first.
    pub window: Option<WindowInfo>,
    /// What the call acted on first.
    pub target: Option<Target>,
    /// How the action went (the engine's route name).
    pub route: Option<&'static str>,
    /// What the action did (the engine's effect name, or `refused: CODE`).
    pub effect: Option<String>,
    /// What an audit of the call needs beyond that (which secret was typed, who approved).
    pub detail: Option<String>,
}

/// What a call acted on: a physical point, or a control.
#[derive(Debug, Clone)]
pub enum Target {
    Point(Point),
    Element(ElementObservation),
}

thread_local! {
    /// The traces of the calls running on this thread, innermost last.
    pub static TRACE: RefCell<Vec<Trace>> = const { RefCell::new(Vec::new()) };
}

/// Runs one tool call (`tool`: its name on the surface) so that what it resolves and does is
/// appended to the timeline when it ends. Calls outside `traced` are still remembered in the
/// indexes, only not in the timeline.
pub fn traced<T>(tool: &str, f: impl FnOnce() -> T) -> T {
    TRACE.with(|t| {
        t.borrow_mut().push(Trace {
            tool: tool.to_string(),
            store: None,
            window: None,
            target: None,
            route: None,
            effect: None,
            detail: None,
        })
    });
    struct Pop;
    impl Drop for Pop {
        fn drop(&mut self) {
            let Some(trace) = TRACE.with(|t| t.borrow_mut().pop()) else {
                return;
            };
            let Some(store) = trace.store.clone() else {
                return;
            };
            let inner = store.current();
            let entry = TimelineEntry {
                at: now_millis(),
                tool: trace.tool,
                window: trace.window.map(|w| TimelineWindow {
                    id: w.id,
                    title: w.title,
                    process: w.process,
                }),
                target: trace.target.map(|t| match t {
                    Target::Point(at) => TimelineTarget::Point { at },
                    Target::Element(e) => TimelineTarget::Element {
                        role: e.role,
                        name: e.name,
                        path: e.path,
                        bounds: Some(e.bounds),
                    },
                }),
                route: trace.route.map(str::to_string),
                effect: trace.effect,
                detail: trace.detail,
            };
            if let Err(e) = inner.memory.record(&entry) {
                tracing::warn!("memory: timeline append failed: {e}");
            }
        }
    }
    let _pop = Pop;
    f()
}

/// Runs `f` on the innermost running call's trace; nothing outside [`traced`].
pub fn with_trace(f: impl FnOnce(&mut Trace)) {
    TRACE.with(|t| {
        if let Some(trace) = t.borrow_mut().last_mut() {
            f(trace)
        }
    });
}
