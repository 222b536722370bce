//! Memory wired into the engine: what every call sees and does is fed to the one [`Memory`] of
//! this user's desktop, shared by every session of the process.
//!
//! - Window lists: the backend's `Windows` is wrapped ([`Watched`]) so every complete listing
//!   any operation takes — `list_windows`, hit tests, key targets, window operations — is
//!   offered to memory; the newest one is applied (window index, focus history from the window
//!   manager's active window) before anything reads memory, else by the saver thread.
//! - Pixels: a window's screenshot gives its dHash ([`Engine::remember_hash`]), taken of the
//!   masked frame.
//! - Trees: the named controls of a snapshot enter the element index ([`Engine::remember_tree`]);
//!   the control an action targeted is marked acted on when the action went through.
//! - The timeline: a surface runs each tool call inside [`traced`], naming the tool; engine
//!   operations note on the calling thread what they resolved (window, point, element) and
//!   [`Session::act`] the route and effect; the entry is appended when the call ends.
//! - Persistence: a saver thread writes the state file at most once a second after a change;
//!   [`Engine::memory_stats`] and dropping the engine write at once.
//!
//! Nothing here is on a call's critical path beyond a list clone and a lock: hashing a window
//! happens only for window screenshots, which already hold the masked frame.
//!
//! Invariants: windows refused by the privacy rules never enter memory (the memory module
//! enforces it); nothing is worded here — surfaces render the typed facts.

use std::cell::RefCell;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, Weak};
use std::time::{Duration, Instant};

use deskpilot_backend::{Frame, Windows};
use deskpilot_types::{Point, Rect, WindowId, WindowInfo};

use crate::action::{Effect, Route};
use crate::config::MemorySettings;
use crate::memory::{
    Aliases, ElementObservation, LoadWarning, Memory, MemoryPrivacy, MemoryStats, Recall,
    TimelineEntry, TimelineRead, TimelineTarget, TimelineWindow, UnixMillis, WindowObservation,
    now_millis,
};
use crate::snapshots::Element;
use crate::{Engine, Error, Session};

/// The shortest time between two saves of the state file.
pub const SAVE_INTERVAL: Duration = Duration::from_secs(1);

/// Timeline entries a read returns at most.
pub const MAX_TIMELINE_READ: usize = 500;

/// Memory as the engine holds it.
#[derive(Debug)]
pub(crate) struct Store {
    inner: Mutex<Inner>,
    /// The newest complete window list not yet applied.
    pending: Mutex<Option<Listing>>,
    wake: Condvar,
    seq: AtomicU64,
    /// Why the state file could not be loaded at start, when it could not.
    pub(crate) warning: Option<LoadWarning>,
}

#[derive(Debug)]
struct Listing {
    seq: u64,
    at: UnixMillis,
    windows: Vec<WindowInfo>,
}

#[derive(Debug)]
struct Inner {
    memory: Memory,
    applied: u64,
    dirty: bool,
    last_save: Option<Instant>,
    save_error: Option<String>,
}

impl Store {
    /// Opens memory as `settings` say; `None` when it is off or has no directory.
    pub(crate) fn open(settings: &MemorySettings, blocklist: &[String]) -> Option<Arc<Store>> {
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

    fn inner(&self) -> MutexGuard<'_, Inner> {
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
    fn current(&self) -> MutexGuard<'_, Inner> {
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
    fn save_if_due(&self, interval: Duration) -> Result<(), Error> {
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
                Err(Error::Memory {
                    message: format!(
                        "cannot write {}: {e}",
                        inner.memory.dir().join(crate::memory::STATE_FILE).display()
                    ),
                })
            }
        }
    }

    fn flush(&self) -> Result<(), Error> {
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
pub(crate) struct Watched {
    pub(crate) inner: Arc<dyn Windows>,
    pub(crate) store: Weak<Store>,
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
struct Trace {
    tool: String,
    store: Option<Arc<Store>>,
    window: Option<WindowInfo>,
    target: Option<Target>,
    route: Option<Route>,
    effect: Option<String>,
}

#[derive(Debug, Clone)]
enum Target {
    Point(Point),
    Element(ElementObservation),
}

thread_local! {
    static TRACE: RefCell<Vec<Trace>> = const { RefCell::new(Vec::new()) };
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
                route: trace.route.map(|r| r.as_str().to_string()),
                effect: trace.effect,
            };
            if let Err(e) = inner.memory.record(&entry) {
                tracing::warn!("memory: timeline append failed: {e}");
            }
        }
    }
    let _pop = Pop;
    f()
}

fn with_trace(f: impl FnOnce(&mut Trace)) {
    TRACE.with(|t| {
        if let Some(trace) = t.borrow_mut().last_mut() {
            f(trace)
        }
    });
}

/// A control as memory keeps it: role, name, bounds and path in its window's tree.
fn element_observation(
    window: WindowId,
    e: &Element,
    path: String,
    token: Option<String>,
) -> Option<ElementObservation> {
    let bounds = e.bounds?;
    let password = e.platform_role.to_lowercase().contains("password");
    Some(ElementObservation {
        window,
        role: e.role,
        name: e.name.trim().to_string(),
        bounds,
        path,
        token,
        value: e.value.clone(),
        password,
    })
}

/// Whether a control is worth remembering: named, on screen, and something a person acts on
/// or reads as a label of one.
fn memorable(e: &Element) -> bool {
    !e.name.trim().is_empty()
        && e.onscreen
        && e.bounds.is_some_and(|b| !b.is_empty())
        && (!e.actions.is_empty() || e.focusable || e.editable)
}

/// Controls of one snapshot kept in the element index at most (the rest are still in the tree).
const MAX_ELEMENTS_PER_TREE: usize = 200;

/// What a recall found, with where it shows in this client's last screenshot.
#[derive(Debug, Clone)]
pub struct Recollection {
    pub recall: Recall,
    /// Per candidate (same order): its centre in the last screenshot's pixels, when that
    /// screenshot shows it.
    pub in_screenshot: Vec<Option<(crate::ScreenshotId, u32, u32)>>,
    /// Per candidate: a token that works now for an element candidate — its own when its
    /// snapshot still holds, else one from a fresh read of its window by role + name + path.
    pub live_tokens: Vec<Option<LiveToken>>,
}

/// A token that resolves now, and how it was had.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LiveToken {
    pub token: String,
    /// `false` when the window was read again to find the control.
    pub kept: bool,
}

/// `memory_stats` with the state of the saver.
#[derive(Debug, Clone)]
pub struct MemoryReport {
    pub stats: MemoryStats,
    /// The last save's failure, when the state could not be written.
    pub save_error: Option<String>,
    /// What was wrong with the state file found at start.
    pub load_warning: Option<String>,
}

impl Engine {
    /// Memory, or `MEMORY_UNAVAILABLE` saying why not.
    fn store(&self) -> Result<&Arc<Store>, Error> {
        self.memory.as_ref().ok_or_else(|| Error::Memory {
            message: if self.config.memory.enabled {
                "memory has no directory (no XDG_STATE_HOME or HOME; set memoryDir)".to_string()
            } else {
                "memory is switched off in this deployment (memory = false)".to_string()
            },
        })
    }

    /// Whether memory is on.
    pub fn memory_on(&self) -> bool {
        self.memory.is_some()
    }

    /// The memory directory, when memory is on.
    pub fn memory_dir(&self) -> Option<PathBuf> {
        self.memory
            .as_ref()
            .map(|s| s.inner().memory.dir().to_path_buf())
    }

    /// Says the running call looked at `window` (its timeline entry names it).
    pub(crate) fn note_window(&self, window: &WindowInfo) {
        let store = self.memory.clone();
        with_trace(|t| {
            t.store = t.store.take().or(store);
            if t.window.is_none() {
                t.window = Some(window.clone());
            }
        });
    }

    /// Says the running call is a perception or action worth a timeline entry, even if it
    /// names no window.
    pub(crate) fn note_call(&self) {
        let store = self.memory.clone();
        with_trace(|t| t.store = t.store.take().or(store));
    }

    /// Says the running call acts at a physical point.
    pub(crate) fn note_point(&self, point: Point) {
        with_trace(|t| {
            if t.target.is_none() {
                t.target = Some(Target::Point(point));
            }
        });
    }

    /// Says the running call acts on `element` of `window` (indexed as acted on once the
    /// action went through).
    pub(crate) fn note_element(&self, window: &WindowInfo, element: &Element, path: String) {
        self.note_window(window);
        let token = Some(element.token.clone()).filter(|t| !t.is_empty());
        if let Some(o) = element_observation(window.id, element, path, token) {
            with_trace(|t| t.target = Some(Target::Element(o)));
        }
    }

    /// The dHash of a window's masked pixels in `frame`.
    pub(crate) fn remember_hash<D: AsRef<[u8]>>(
        &self,
        window: WindowId,
        frame: &Frame<D>,
        rect: Rect,
    ) {
        let Some(store) = &self.memory else { return };
        let Some(hash) = crate::memory::dhash(frame, rect) else {
            return;
        };
        let mut inner = store.current();
        if let Some(r) = inner.memory.set_window_hash(window, hash, now_millis()) {
            tracing::debug!(previous = %r.previous, confidence = ?r.confidence, "memory: pixels recognise a reopened window");
        }
        inner.dirty = true;
    }

    /// The memorable controls of a window's tree enter the element index.
    pub(crate) fn remember_tree(&self, window: WindowId, elements: &[Element]) {
        let Some(store) = &self.memory else { return };
        let paths = crate::paths::paths(elements);
        let observations: Vec<ElementObservation> = elements
            .iter()
            .zip(paths)
            .filter(|(e, _)| memorable(e))
            .take(MAX_ELEMENTS_PER_TREE)
            .filter_map(|(e, p)| element_observation(window, e, p, Some(e.token.clone())))
            .collect();
        let now = now_millis();
        let mut inner = store.current();
        for o in &observations {
            inner.memory.observe_element(o, false, now);
        }
        inner.dirty = true;
    }

    /// The flushed statistics.
    pub fn memory_stats(&self) -> Result<MemoryReport, Error> {
        let store = self.store()?;
        let flushed = store.flush();
        let inner = store.current();
        Ok(MemoryReport {
            stats: inner.memory.stats(),
            save_error: flushed.err().map(|e| e.to_string()),
            load_warning: store.warning.as_ref().map(|w| w.to_string()),
        })
    }

    /// The last `limit` timeline entries at or after `since`, oldest first.
    pub fn memory_timeline(
        &self,
        limit: usize,
        since: Option<UnixMillis>,
    ) -> Result<TimelineRead, Error> {
        let store = self.store()?;
        let limit = limit.clamp(1, MAX_TIMELINE_READ);
        let inner = store.current();
        inner
            .memory
            .timeline(limit, since)
            .map_err(|e| Error::Memory {
                message: format!("cannot read the timeline: {e}"),
            })
    }
}

impl Session {
    /// Resolves a phrase against memory, after a fresh window list (so presence is now's).
    pub fn memory_recall(&self, query: &str) -> Result<Recollection, Error> {
        let store = self.store()?.clone();
        if query.trim().is_empty() {
            return Err(Error::InvalidArgument {
                message: "query is empty: say what to recall (\"mousepad\", \"that window\", \"刚才那个按钮\")".to_string(),
            });
        }
        self.note_call();
        // A fresh list: minimized, closed and reopened windows are judged as of now.
        let _ = self.desktop.windows.list_windows();
        let recall = store.current().memory.recall(query);
        let last = self
            .shots
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .last()
            .map(|r| (r.id, r.view));
        let candidates = recall.candidates();
        let in_screenshot = candidates
            .iter()
            .map(|c| {
                let (id, view) = last.as_ref()?;
                let centre = match &c.target {
                    crate::memory::Recalled::Window { center, .. }
                    | crate::memory::Recalled::Element { center, .. } => *center,
                };
                view.physical_to_image(centre).map(|(x, y)| (*id, x, y))
            })
            .collect();
        let live_tokens = candidates
            .iter()
            .enumerate()
            .map(|(i, c)| match &c.target {
                crate::memory::Recalled::Element {
                    window,
                    role,
                    name,
                    path,
                    token,
                    presence: crate::memory::Presence::Present,
                    ..
                } => {
                    if let Some(t) = token
                        && self.element(t).is_ok()
                    {
                        return Some(LiveToken {
                            token: t.clone(),
                            kept: true,
                        });
                    }
                    // Only the best candidate is worth a fresh read of its window.
                    (i == 0)
                        .then(|| self.find_again(*window, *role, name, path))
                        .flatten()
                }
                _ => None,
            })
            .collect();
        Ok(Recollection {
            recall,
            in_screenshot,
            live_tokens,
        })
    }

    /// Reads `window` again and finds the control by role and name, preferring the same path.
    fn find_again(
        &self,
        window: WindowId,
        role: deskpilot_types::Role,
        name: &str,
        path: &str,
    ) -> Option<LiveToken> {
        let request = crate::tree::TreeRequest::new(crate::window::WindowRef::Id(window));
        let snapshot = self.window_state(&request).ok()?;
        let paths = crate::paths::paths(&snapshot.elements);
        let same = |e: &&Element| e.role == role && e.name.trim() == name;
        let found = snapshot
            .elements
            .iter()
            .zip(&paths)
            .find(|(e, p)| same(e) && p.as_str() == path)
            .map(|(e, _)| e)
            .or_else(|| snapshot.elements.iter().find(same))?;
        Some(LiveToken {
            token: found.token.clone(),
            kept: false,
        })
    }

    /// Forgets everything memory holds: a mutation, so it passes the gates; run it through
    /// [`Session::act`].
    pub fn memory_clear(&self) -> Result<MemoryCleared, Error> {
        let store = self.store()?.clone();
        self.note_call();
        self.gate(
            crate::guard::Mutation::Other,
            "clear deskpilot's memory (window and element index, focus history, timeline)",
        )?;
        let mut inner = store.current();
        let before = inner.memory.stats();
        inner.memory.clear().map_err(|e| Error::Memory {
            message: format!("cannot clear {}: {e}", before.dir.display()),
        })?;
        inner.dirty = false;
        let after = inner.memory.stats();
        Ok(MemoryCleared { before, after })
    }

    /// After an action went through: the element it targeted (or the one under its point in
    /// this client's newest snapshot of the window) is marked acted on.
    pub(crate) fn remember_acted(&self) {
        let Some(store) = &self.memory else { return };
        let target = TRACE.with(|t| {
            t.borrow()
                .last()
                .map(|t| (t.window.as_ref().map(|w| w.id), t.target.clone()))
        });
        let Some((window, Some(target))) = target else {
            return;
        };
        let observation = match target {
            Target::Element(o) => Some(o),
            Target::Point(p) => window.and_then(|w| self.element_under(w, p)),
        };
        if let Some(o) = observation {
            store.current().memory.observe_element(&o, true, now_millis());
            store.inner().dirty = true;
        }
    }

    /// The smallest memorable control of this client's newest snapshot of `window` holding `p`.
    fn element_under(&self, window: WindowId, p: Point) -> Option<ElementObservation> {
        let (_, elements, _) = self
            .snapshots
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .newest_of(window)?;
        let paths = crate::paths::paths(&elements);
        elements
            .iter()
            .zip(paths)
            .filter(|(e, _)| memorable(e) && e.bounds.is_some_and(|b| b.contains(p)))
            .min_by_key(|(e, _)| e.bounds.map_or(u64::MAX, |b| b.area()))
            .and_then(|(e, path)| element_observation(window, e, path, Some(e.token.clone())))
    }
}

/// Notes an action's route and effect on the running call's trace.
pub(crate) fn note_effect(route: Route, effect: Effect) {
    with_trace(|t| {
        t.route = Some(route);
        t.effect = Some(effect.as_str().to_string());
    });
}

/// Notes a failed action on the running call's trace (`refused: CODE` or `failed: CODE`).
pub(crate) fn note_failure(error: &Error) {
    let what = if crate::action::refused_effect(error).is_some() {
        "refused"
    } else {
        "failed"
    };
    let effect = format!("{what}: {}", error.code().as_str());
    with_trace(|t| t.effect = Some(effect));
}

/// What `memory_clear` removed.
#[derive(Debug, Clone)]
pub struct MemoryCleared {
    pub before: MemoryStats,
    pub after: MemoryStats,
}

impl crate::Outcome for MemoryCleared {
    fn route(&self) -> Route {
        Route::File
    }

    fn judged(&self) -> Option<(Effect, &'static str)> {
        let a = &self.after;
        let empty = a.windows == 0 && a.elements == 0 && a.state_bytes == 0 && a.timeline_bytes == 0;
        Some(if empty {
            (Effect::Confirmed, "memory's files read back empty")
        } else {
            (Effect::SuspectedNoop, "memory's files still hold entries")
        })
    }
}
