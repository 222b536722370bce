//! Memory wired into the engine: what every call sees and does is fed to the one [`deskpilot_memory::Memory`] of
//! this user's desktop, shared by every session of the process.
//!
//! The machinery (the store, its saver thread, the watched window listing, the per-thread trace)
//! is `deskpilot_memory::live`; this module holds the engine's and sessions' side of it.
//!
//! - Window lists: the backend's `Windows` is wrapped (`deskpilot_memory::live::Watched`) so every complete listing
//!   any operation takes — `list_windows`, hit tests, key targets, window operations — is
//!   offered to memory; the newest one is applied (window index, focus history from the window
//!   manager's active window) before anything reads memory, else by the saver thread.
//! - Pixels: a window's screenshot gives its dHash ([`Engine::remember_hash`]), taken of the
//!   masked frame.
//! - Trees: the named controls of a snapshot enter the element index ([`Engine::remember_tree`]);
//!   the control an action targeted is marked acted on when the action went through.
//! - The timeline: a surface runs each tool call inside `traced`, naming the tool; engine
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

use std::path::PathBuf;
use std::sync::Arc;

use deskpilot_backend::Frame;
use deskpilot_memory::live::{Store, TRACE, Target, with_trace};
use deskpilot_memory::{
    ElementObservation, MemoryStats, Recall, TimelineRead, UnixMillis, now_millis,
};
use deskpilot_types::{Point, Rect, WindowId, WindowInfo};

use crate::action::{Effect, Route};
use crate::snapshots::Element;

/// Timeline entries a read returns at most.
pub const MAX_TIMELINE_READ: usize = 500;
use crate::{engine::Engine, error::Error, session::Session};

/// A control as memory keeps it: role, name, bounds and path in its window's tree.
fn element_observation(
    window: WindowId,
    e: &Element,
    path: String,
    token: Option<String>,
) -> Option<ElementObservation> {
    let bounds = e.bounds?;
    // The state says it on every platform (AT-SPI's role, MSAA's PROTECTED, UIA's
    // IsPassword); a part of a field is marked with it. The role name is kept as a backstop.
    let password =
        e.password || e.states.protected || e.platform_role.to_lowercase().contains("password");
    Some(ElementObservation {
        window,
        role: e.role,
        name: e.name.trim().to_string(),
        bounds,
        path,
        token,
        value: e.value.clone().filter(|_| !password),
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
    pub in_screenshot: Vec<Option<(crate::registry::ScreenshotId, u32, u32)>>,
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

    /// Writes what memory learned since its last save (at shutdown; a failure is logged).
    pub fn memory_flush(&self) {
        if let Some(store) = &self.memory
            && let Err(e) = store.flush()
        {
            tracing::warn!("memory: {e}");
        }
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

    /// Notes on the running call's trace that secret `name` was typed (the timeline's audit
    /// line: "secret NAME typed (filled; approved by the person)"), never its value.
    pub(crate) fn note_secret(
        &self,
        name: &str,
        effect: crate::secret_input::SecretEffect,
        approval: &str,
    ) {
        self.note_call();
        with_trace(|t| {
            t.detail = Some(format!(
                "secret {name} typed ({}; {approval})",
                effect.as_str()
            ));
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
        if let Some(o) =
            element_observation(window.id, element, path, token).filter(|o| !self.masked(o.bounds))
        {
            with_trace(|t| t.target = Some(Target::Element(o)));
        }
    }

    /// Whether `bounds` touch a privacy mask: such a control's name and value never enter
    /// memory (the mask hides them from every screenshot too).
    fn masked(&self, bounds: Rect) -> bool {
        self.config
            .mask_regions
            .iter()
            .any(|m| m.intersect(&bounds).is_some())
    }

    /// The dHash of a window's masked client pixels in `frame` (its part `rect`). A window whose
    /// client area shows nothing (not drawn yet, or flat) keeps the hash it had: a flat image
    /// says nothing about which window it is.
    pub(crate) fn remember_hash<D: AsRef<[u8]>>(
        &self,
        window: &WindowInfo,
        frame: &Frame<D>,
        rect: Rect,
    ) {
        if self.memory.is_none() {
            return;
        }
        if crate::perceive::flat(frame, window, rect) {
            tracing::debug!(window = %window.id, "memory: not hashing a window that shows nothing");
            return;
        }
        self.remember_drawn_hash(window, frame, rect);
    }

    /// [`Engine::remember_hash`] for a caller that has already measured the client area and
    /// found it drawn (perception reads every window's pixels anyway).
    pub(crate) fn remember_drawn_hash<D: AsRef<[u8]>>(
        &self,
        window: &WindowInfo,
        frame: &Frame<D>,
        rect: Rect,
    ) {
        let Some(store) = &self.memory else { return };
        // The client area only: the window manager draws every frame's decorations alike.
        let client = if window.client.is_empty() {
            window.frame
        } else {
            window.client
        };
        let region = client.intersect(&rect).unwrap_or(rect);
        let Some(hash) = deskpilot_memory::dhash(frame, region) else {
            return;
        };
        let mut inner = store.current();
        if let Some(r) = inner.memory.set_window_hash(window.id, hash, now_millis()) {
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
            .filter(|o| !self.masked(o.bounds))
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
        let _ = self.desktop().windows.list_windows();
        let recall = store.current().memory.recall(query);
        let last = self.shots_now().last().map(|r| (r.id, r.view));
        let candidates = recall.candidates();
        let in_screenshot = candidates
            .iter()
            .map(|c| {
                let (id, view) = last.as_ref()?;
                let centre = match &c.target {
                    deskpilot_memory::Recalled::Window { center, .. }
                    | deskpilot_memory::Recalled::Element { center, .. } => *center,
                };
                view.physical_to_image(centre).map(|(x, y)| (*id, x, y))
            })
            .collect();
        let live_tokens = candidates
            .iter()
            .enumerate()
            .map(|(i, c)| match &c.target {
                deskpilot_memory::Recalled::Element {
                    window,
                    role,
                    name,
                    path,
                    token,
                    presence: deskpilot_memory::Presence::Present,
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
            store
                .current()
                .memory
                .observe_element(&o, true, now_millis());
            store.inner().dirty = true;
        }
    }

    /// The smallest memorable control of this client's newest snapshot of `window` holding `p`.
    fn element_under(&self, window: WindowId, p: Point) -> Option<ElementObservation> {
        let (_, elements, _) = self.snapshots_now().newest_of(window)?;
        let paths = crate::paths::paths(&elements);
        elements
            .iter()
            .zip(paths)
            .filter(|(e, _)| memorable(e) && e.bounds.is_some_and(|b| b.contains(p)))
            .min_by_key(|(e, _)| e.bounds.map_or(u64::MAX, |b| b.area()))
            .and_then(|(e, path)| element_observation(window, e, path, Some(e.token.clone())))
    }
}

impl Engine {
    /// Notes an action's route and effect on the running call's trace.
    pub(crate) fn note_effect(&self, route: Route, effect: Effect) {
        self.note_call();
        with_trace(|t| {
            t.route = Some(route.as_str());
            t.effect = Some(effect.as_str().to_string());
        });
    }

    /// Notes a failed action on the running call's trace (`refused: CODE` or `failed: CODE`).
    pub(crate) fn note_failure(&self, error: &Error) {
        let what = if crate::action::refused_effect(error).is_some() {
            "refused"
        } else {
            "failed"
        };
        let effect = format!("{what}: {}", error.code().as_str());
        self.note_call();
        with_trace(|t| t.effect = Some(effect));
    }
}

/// What `memory_clear` removed.
#[derive(Debug, Clone)]
pub struct MemoryCleared {
    pub before: MemoryStats,
    pub after: MemoryStats,
}

impl crate::action::Outcome for MemoryCleared {
    fn route(&self) -> Route {
        Route::File
    }

    fn judged(&self) -> Option<(Effect, &'static str)> {
        let a = &self.after;
        let empty =
            a.windows == 0 && a.elements == 0 && a.state_bytes == 0 && a.timeline_bytes == 0;
        Some(if empty {
            (Effect::Confirmed, "memory's files read back empty")
        } else {
            (Effect::SuspectedNoop, "memory's files still hold entries")
        })
    }
}

#[cfg(test)]
mod tests {
    use deskpilot_backend::fake::FakeWindow;
    use deskpilot_backend::{Button, FakeDesktop};
    use deskpilot_memory::testing::TempDir;
    use deskpilot_memory::{Recalled, TimelineTarget, traced};
    use deskpilot_types::{ErrorCode, WindowState};

    use super::*;
    use crate::config::MemorySettings;
    use crate::{
        action::Check,
        capture::{CaptureTarget, ScreenshotRequest},
        config::{EngineConfig, HitTestMode},
        pointer::{CoordinateSpace, PointerTarget},
        verify::VerifyTarget,
    };

    fn session(fake: &FakeDesktop, dir: &TempDir, blocklist: &[&str]) -> Session {
        let mut config = EngineConfig {
            memory: MemorySettings {
                enabled: true,
                dir: Some(dir.path().to_path_buf()),
                ..MemorySettings::default()
            },
            ..EngineConfig::default()
        };
        config.safety.blocklist = blocklist.iter().map(|s| s.to_string()).collect();
        Session::standalone(fake.desktop(), config)
    }

    fn shot(s: &Session, id: WindowId) {
        s.screenshot(&ScreenshotRequest {
            target: CaptureTarget::Window(id),
            max_width: None,
            format: None,
        })
        .unwrap();
    }

    #[test]
    fn memory_is_off_unless_configured_and_says_so() {
        let fake = FakeDesktop::new(100, 100);
        let s = Session::standalone(fake.desktop(), EngineConfig::default());
        let e = s.memory_recall("that window").unwrap_err();
        assert_eq!(e.code(), ErrorCode::MemoryUnavailable);
        assert!(e.to_string().contains("switched off"), "{e}");
        assert!(!s.memory_on());
    }

    #[test]
    fn a_click_is_remembered_in_the_timeline_with_its_window_point_and_effect() {
        let dir = TempDir::new("remember-timeline");
        let fake = FakeDesktop::new(400, 200);
        let a = fake.add_window(FakeWindow::new("Ledger", Rect::new(0, 0, 200, 200)));
        let s = session(&fake, &dir, &[]);
        traced("screenshot", || shot(&s, a));
        traced("click", || {
            s.act(Check::default(), VerifyTarget::Auto, |s| {
                s.click(
                    PointerTarget {
                        x: 50.0,
                        y: 60.0,
                        space: CoordinateSpace::Image {
                            screenshot_id: None,
                        },
                    },
                    Button::Left,
                    1,
                    &[],
                    HitTestMode::Fail,
                )
            })
            .unwrap()
        });
        let read = s.memory_timeline(10, None).unwrap();
        let tools: Vec<&str> = read.entries.iter().map(|e| e.tool.as_str()).collect();
        assert_eq!(tools, ["screenshot", "click"]);
        let click = &read.entries[1];
        assert_eq!(click.window.as_ref().unwrap().title, "Ledger");
        assert_eq!(
            click.target,
            Some(TimelineTarget::Point {
                at: Point::new(50, 60)
            })
        );
        assert_eq!(click.route.as_deref(), Some("input"));
        assert_eq!(click.effect.as_deref(), Some("unverifiable"));
        // A refused action is remembered as refused, with its code.
        fake.remove_window(a);
        traced("click", || {
            let _ = s.act(Check::default(), VerifyTarget::Auto, |s| {
                s.click(
                    PointerTarget {
                        x: 5.0,
                        y: 5.0,
                        space: CoordinateSpace::Image {
                            screenshot_id: None,
                        },
                    },
                    Button::Left,
                    1,
                    &[],
                    HitTestMode::Fail,
                )
            });
        });
        let last = s.memory_timeline(1, None).unwrap().entries.remove(0);
        assert_eq!(last.effect.as_deref(), Some("refused: TARGET_WINDOW_GONE"));
    }

    #[test]
    fn windows_seen_by_any_call_are_recalled_minimized_and_gone_and_survive_a_restart() {
        let dir = TempDir::new("remember-restart");
        let fake = FakeDesktop::new(800, 600);
        let pad = fake.add_window(FakeWindow {
            process: "mousepad".into(),
            ..FakeWindow::new("notes.txt - Mousepad", Rect::new(0, 0, 400, 300))
        });
        let term = fake.add_window(FakeWindow {
            process: "xterm".into(),
            ..FakeWindow::new("bash", Rect::new(400, 0, 400, 300))
        });
        {
            let s = session(&fake, &dir, &[]);
            let hash = |s: &Session| {
                s.store()
                    .unwrap()
                    .inner()
                    .memory
                    .state()
                    .windows
                    .get(pad)
                    .unwrap()
                    .dhash
            };
            shot(&s, pad);
            assert!(
                hash(&s).is_none(),
                "a flat window (nothing drawn yet) is not hashed"
            );
            fake.paint(Rect::new(10, 40, 120, 12), [0, 0, 0]);
            shot(&s, pad);
            assert!(hash(&s).is_some(), "a window screenshot hashes it");
            let r = s.memory_recall("记事本").unwrap();
            let Recalled::Window { id, center, .. } = &r.recall.candidates()[0].target else {
                panic!("{r:?}")
            };
            assert_eq!((*id, *center), (pad, Point::new(200, 150)));
            assert!(
                s.memory_stats().unwrap().stats.state_bytes > 0,
                "stats save"
            );
        }
        fake.set_state(
            pad,
            WindowState {
                minimized: true,
                ..WindowState::default()
            },
        );
        fake.remove_window(term);
        let s = session(&fake, &dir, &[]);
        let r = s.memory_recall("mousepad").unwrap();
        assert!(matches!(
            r.recall.candidates()[0].target,
            Recalled::Window {
                presence: deskpilot_memory::Presence::Minimized,
                ..
            }
        ));
        let r = s.memory_recall("终端").unwrap();
        assert!(
            matches!(
                r.recall.candidates()[0].target,
                Recalled::Window {
                    presence: deskpilot_memory::Presence::Gone { .. },
                    ..
                }
            ),
            "{r:?}"
        );
    }

    #[test]
    fn blocklisted_windows_never_reach_memory_files() {
        let dir = TempDir::new("remember-privacy");
        let fake = FakeDesktop::new(400, 200);
        let vault = fake.add_window(FakeWindow::new("SecretVault", Rect::new(0, 0, 200, 200)));
        let s = session(&fake, &dir, &["secretvault"]);
        traced("screenshot", || shot(&s, vault));
        s.memory_stats().unwrap();
        for f in std::fs::read_dir(dir.path()).unwrap() {
            let text = std::fs::read_to_string(f.unwrap().path()).unwrap();
            assert!(!text.to_lowercase().contains("secretvault"), "{text}");
        }
    }

    #[test]
    fn controls_under_a_privacy_mask_never_reach_memory_files() {
        use deskpilot_backend::fake::{element, tree};
        use deskpilot_types::Role;
        let dir = TempDir::new("remember-mask");
        let fake = FakeDesktop::new(400, 200);
        let w = fake.add_window(FakeWindow::new("Ledger", Rect::new(0, 0, 400, 200)));
        let button = |name: &str, bounds| {
            element(Role::Button, name)
                .child_of(0, 1)
                .actions(&["click"])
                .bounds(bounds)
        };
        fake.set_tree(
            w,
            tree([
                element(Role::Window, "Ledger")
                    .actions(&["click"])
                    .bounds(Rect::new(0, 0, 400, 200)),
                button("Visible Apply", Rect::new(10, 150, 80, 20)),
                button("IBAN DE89 3704", Rect::new(250, 30, 100, 20)),
            ]),
        );
        let mut config = EngineConfig {
            memory: MemorySettings {
                enabled: true,
                dir: Some(dir.path().to_path_buf()),
                ..MemorySettings::default()
            },
            ..EngineConfig::default()
        };
        config.mask_regions = vec![Rect::new(200, 0, 200, 100)];
        let s = Session::standalone(fake.desktop(), config);
        traced("get_window_state", || {
            s.window_state(&crate::tree::TreeRequest::new(
                crate::window::WindowRef::Id(w),
            ))
            .unwrap()
        });
        s.memory_stats().unwrap();
        let mut all = String::new();
        for f in std::fs::read_dir(dir.path()).unwrap() {
            all.push_str(&std::fs::read_to_string(f.unwrap().path()).unwrap());
        }
        assert!(
            all.contains("Visible Apply"),
            "unmasked controls are remembered: {all}"
        );
        assert!(!all.contains("IBAN"), "{all}");
    }

    /// A password field known by its state alone (UI Automation's `IsPassword` on an `Edit`,
    /// MSAA's `PROTECTED`) is remembered as one: no value, no mask characters.
    #[test]
    fn a_password_field_is_remembered_by_its_state_without_its_text() {
        use deskpilot_backend::fake::{element, tree};
        use deskpilot_types::Role;
        let dir = TempDir::new("remember-password");
        let fake = FakeDesktop::new(400, 200);
        let w = fake.add_window(FakeWindow::new("Sign in", Rect::new(0, 0, 400, 200)));
        fake.set_tree(
            w,
            tree([
                element(Role::Window, "Sign in").bounds(Rect::new(0, 0, 400, 200)),
                element(Role::Edit, "Password")
                    .child_of(0, 1)
                    .bounds(Rect::new(10, 50, 200, 24))
                    .password("hunter2hunter")
                    .platform_role("Edit"),
            ]),
        );
        let s = session(&fake, &dir, &[]);
        let snapshot = traced("get_window_state", || {
            s.window_state(&crate::tree::TreeRequest::new(
                crate::window::WindowRef::Id(w),
            ))
            .unwrap()
        });
        let o = element_observation(w, &snapshot.elements[1], "0/0".into(), None).unwrap();
        assert!(o.password && o.value.is_none(), "{o:?}");
        s.memory_stats().unwrap();
        let mut all = String::new();
        for f in std::fs::read_dir(dir.path()).unwrap() {
            all.push_str(&std::fs::read_to_string(f.unwrap().path()).unwrap_or_default());
        }
        assert!(all.contains("Password"), "the field is remembered: {all}");
        assert!(!all.contains('●'), "{all}");
    }
}
