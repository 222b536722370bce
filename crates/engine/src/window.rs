//! Window management with verification: every operation is sent to the window manager and
//! then the window list is polled until the effect shows (or a deadline passes), so the
//! result always reports the state the window is really in.
//!
//! Targets are a window id, a `title_match` or an app name that must match exactly one window
//! (`AMBIGUOUS_WINDOW` lists the candidates otherwise), or the window a session is looking at
//! ([`WindowRef`]). Which window a reference names is decided here and nowhere else: profiles
//! hand in a [`WindowRef`] and word the typed refusal.

use crate::action::{Effect, Outcome, Route};
use std::time::{Duration, Instant};

use deskpilot_backend::WindowOp;
use deskpilot_types::{Rect, WindowId, WindowInfo};

use crate::note::{Chosen, Note};
use crate::registry::{KeyTarget, Pin};
use crate::{error::Error, safety::Mutation, session::Session};

/// How long an operation may take to show in the window list.
const OP_WAIT: Duration = Duration::from_millis(2000);
/// How long focus may take before the one retry.
const FOCUS_WAIT: Duration = Duration::from_millis(1000);
/// How long a closing window may take to disappear before the call reports it still open.
const CLOSE_WAIT: Duration = Duration::from_millis(1500);
const POLL: Duration = Duration::from_millis(10);

/// Which window an action addresses.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WindowRef {
    /// The window this session last looked at (its last window screenshot or snapshot), else
    /// the active window.
    Current,
    Id(WindowId),
    /// Case-insensitive substring of the title or process name; must match exactly one window.
    TitleMatch(String),
    /// A window of an app, named by its process or window class ([`is_app`]). Without `id` the
    /// app must have exactly one window (`NoAppWindow` / `AmbiguousApp` otherwise); with `id`
    /// that window, which must belong to the app (`NotAppWindow`).
    App {
        name: String,
        id: Option<WindowId>,
    },
    /// The active window; when none is active, what [`WindowRef::Current`] names.
    Active,
    /// The window this session was last handed element paths for
    /// ([`Session::issue_paths`]), else [`WindowRef::Active`].
    PathsWindow,
}

/// Whether `name` names `w`'s app: its process (`.exe` optional) or its window class, compared
/// case-insensitively — the one rule for naming an app.
pub(crate) fn is_app(w: &WindowInfo, name: &str) -> bool {
    let want = name.trim().to_lowercase();
    let want = want.strip_suffix(".exe").unwrap_or(&want);
    let process = w.process.as_deref().unwrap_or("").to_lowercase();
    let process = process.strip_suffix(".exe").unwrap_or(&process);
    process == want || w.class.to_lowercase() == want
}

/// What to do to a window.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WindowAction {
    Focus,
    Minimize,
    Maximize,
    Restore,
    Close,
    /// Put the frame's top-left corner here (physical pixels).
    Move {
        x: i32,
        y: i32,
    },
    /// Make the frame this size, keeping its top-left corner.
    Resize {
        width: u32,
        height: u32,
    },
}

impl WindowAction {
    /// The verb used in results and labels.
    pub fn verb(self) -> &'static str {
        match self {
            WindowAction::Focus => "focus",
            WindowAction::Minimize => "minimize",
            WindowAction::Maximize => "maximize",
            WindowAction::Restore => "restore",
            WindowAction::Close => "close",
            WindowAction::Move { .. } => "move",
            WindowAction::Resize { .. } => "resize",
        }
    }
}

/// What a window action did.
#[derive(Debug, Clone)]
pub struct WindowOutcome {
    /// The window before the action.
    pub before: WindowInfo,
    /// The window after the action; `None` once it closed.
    pub after: Option<WindowInfo>,
    /// Anything the caller should know (the window manager adjusted the request, the window
    /// did not close, …).
    pub notes: Vec<WindowNote>,
    /// Whether the window ended in the requested state.
    pub confirmed: bool,
}

/// A fact beside a window action's outcome. `Display` is the default wording; it serializes
/// as that wording.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WindowNote {
    /// The first activation did not take; a second one did.
    FocusRetried,
    /// The window is still open after a close and the wait for it.
    StillOpen { waited: Duration },
    /// A minimized or maximized window was restored before it was moved or resized.
    RestoredFirst,
    /// The window manager placed the window elsewhere than asked.
    Adjusted { frame: Rect, asked: Rect },
    /// A minimized window came back but its client area was not drawn and settled after `waited`.
    NotDrawn { waited: Duration },
}

impl std::fmt::Display for WindowNote {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            WindowNote::FocusRetried => f.write_str("focus took a second request"),
            WindowNote::StillOpen { waited } => write!(
                f,
                "the window is still open after {} ms: the app may be asking to save changes (take a screenshot)",
                waited.as_millis()
            ),
            WindowNote::RestoredFirst => f.write_str("the window was restored first"),
            WindowNote::NotDrawn { waited } => write!(
                f,
                "the window came back from minimized but had not finished repainting after {} ms (take a screenshot before acting on its pixels)",
                waited.as_millis()
            ),
            WindowNote::Adjusted { frame, asked } => write!(
                f,
                "the window manager adjusted the request: the frame is {frame} instead of {asked} (size increments, size limits or screen edges)"
            ),
        }
    }
}

impl serde::Serialize for WindowNote {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

impl Outcome for WindowOutcome {
    fn route(&self) -> Route {
        Route::WindowManager
    }

    fn judged(&self) -> Option<(Effect, &'static str)> {
        let effect = if self.confirmed {
            Effect::Confirmed
        } else {
            Effect::SuspectedNoop
        };
        Some((effect, "the window manager's state"))
    }
}

impl Session {
    /// The one window `target` names.
    pub fn resolve_window(&self, target: &WindowRef) -> Result<WindowInfo, Error> {
        self.resolve_window_noted(target, &mut Vec::new())
    }

    /// Like [`Session::resolve_window`]; for [`WindowRef::Current`] a note says which window
    /// was taken and why.
    pub fn resolve_window_noted(
        &self,
        target: &WindowRef,
        notes: &mut Vec<Note>,
    ) -> Result<WindowInfo, Error> {
        let windows = self.desktop().windows.list_windows()?;
        match target {
            WindowRef::Current => self.current_window(&windows, notes),
            WindowRef::Active => self.active_window(&windows, notes),
            WindowRef::PathsWindow => match self.paths_window() {
                Some(id) => find(&windows, &WindowRef::Id(id)),
                None => self.active_window(&windows, notes),
            },
            other => find(&windows, other),
        }
    }

    /// The active window, else (none active) what [`WindowRef::Current`] names.
    fn active_window(
        &self,
        windows: &[WindowInfo],
        notes: &mut Vec<Note>,
    ) -> Result<WindowInfo, Error> {
        match windows.iter().find(|w| w.state.active) {
            Some(w) => Ok(w.clone()),
            None => self.current_window(windows, notes),
        }
    }

    /// The window this session last looked at, else the active one; a note says which and why.
    fn current_window(
        &self,
        windows: &[WindowInfo],
        notes: &mut Vec<Note>,
    ) -> Result<WindowInfo, Error> {
        let observed = self.observed();
        if let Some((id, how)) = observed
            && let Some(w) = windows.iter().find(|w| w.id == id)
        {
            notes.push(Note::WindowChosen {
                id: w.id,
                label: w.label(),
                by: Chosen::LastObserved(how),
            });
            return Ok(w.clone());
        }
        match windows.iter().find(|w| w.state.active) {
            Some(w) => {
                notes.push(Note::WindowChosen {
                    id: w.id,
                    label: w.label(),
                    by: Chosen::Active {
                        observed_gone: observed.is_some(),
                    },
                });
                Ok(w.clone())
            }
            None => Err(Error::InvalidArgument {
                message: "no window given, none was looked at yet and no window is active: name one (window id or title)".to_string(),
            }),
        }
    }

    /// Applies `action` and waits until the window list shows it.
    pub fn window_action(
        &self,
        target: &WindowRef,
        action: WindowAction,
    ) -> Result<WindowOutcome, Error> {
        let before = self.resolve_window(target)?;
        self.note_window(&before);
        let id = before.id;
        let kind = match action {
            WindowAction::Close => Mutation::CloseWindow,
            _ => Mutation::Other,
        };
        // Focusing is a read in dsh-computer-use's model (it changes what is shown, not any app).
        if !matches!(action, WindowAction::Focus) {
            self.gate(
                kind,
                &format!("window {} {}", action.verb(), before.label()),
            )?;
        }
        let mut notes = Vec::new();
        match action {
            WindowAction::Focus => {
                for attempt in 0..2 {
                    self.desktop()
                        .window_control
                        .window_op(id, WindowOp::Activate)?;
                    // Active and, for a minimized window, restored: a window manager may
                    // announce the active window before it has mapped it again.
                    if let Some(w) =
                        self.poll_window(id, FOCUS_WAIT, |w| w.state.active && !w.state.minimized)?
                    {
                        if attempt > 0 {
                            notes.push(WindowNote::FocusRetried);
                        }
                        if before.state.minimized && !self.wait_drawn(&w)? {
                            notes.push(WindowNote::NotDrawn {
                                waited: crate::perceive::DRAW_WAIT,
                            });
                        }
                        self.aim_keys(KeyTarget::Window(Pin::of(&w)));
                        return Ok(WindowOutcome {
                            before,
                            after: Some(w),
                            notes,
                            confirmed: true,
                        });
                    }
                }
                let windows = self.desktop().windows.list_windows()?;
                Err(Error::FocusRefused {
                    id,
                    title: before.title,
                    active: windows
                        .iter()
                        .find(|w| w.state.active)
                        .map(|w| format!("\"{}\" ({})", w.title, w.id)),
                })
            }
            WindowAction::Close => {
                self.desktop()
                    .window_control
                    .window_op(id, WindowOp::Close)?;
                let deadline = Instant::now() + CLOSE_WAIT;
                loop {
                    let windows = self.desktop().windows.list_windows()?;
                    let now = windows.into_iter().find(|w| w.id == id);
                    let Some(still) = now else {
                        return Ok(WindowOutcome {
                            before,
                            after: None,
                            notes,
                            confirmed: true,
                        });
                    };
                    if Instant::now() >= deadline {
                        notes.push(WindowNote::StillOpen { waited: CLOSE_WAIT });
                        return Ok(WindowOutcome {
                            before,
                            after: Some(still),
                            notes,
                            confirmed: false,
                        });
                    }
                    std::thread::sleep(POLL);
                }
            }
            WindowAction::Minimize => self
                .apply(id, WindowOp::Minimize, "minimize", |w| w.state.minimized)
                .map(|after| WindowOutcome {
                    before,
                    after: Some(after),
                    notes,
                    confirmed: true,
                }),
            WindowAction::Maximize => {
                if before.state.minimized {
                    self.apply(id, WindowOp::Restore, "restore", |w| !w.state.minimized)?;
                }
                self.apply(id, WindowOp::Maximize, "maximize", |w| w.state.maximized)
                    .map(|after| WindowOutcome {
                        before,
                        after: Some(after),
                        notes,
                        confirmed: true,
                    })
            }
            WindowAction::Restore => {
                let after = self.apply(id, WindowOp::Restore, "restore", |w| {
                    !w.state.minimized && !w.state.maximized
                })?;
                if before.state.minimized && !self.wait_drawn(&after)? {
                    notes.push(WindowNote::NotDrawn {
                        waited: crate::perceive::DRAW_WAIT,
                    });
                }
                self.aim_keys(KeyTarget::Window(Pin::of(&after)));
                Ok(WindowOutcome {
                    before,
                    after: Some(after),
                    notes,
                    confirmed: true,
                })
            }
            WindowAction::Move { x, y } => {
                let frame = Rect::new(x, y, before.frame.width, before.frame.height);
                self.place(before, frame, notes)
            }
            WindowAction::Resize { width, height } => {
                if !(1..=16384).contains(&width) || !(1..=16384).contains(&height) {
                    return Err(Error::InvalidArgument {
                        message: format!("size {width}x{height} must be 1..=16384 on each side"),
                    });
                }
                let frame = Rect::new(before.frame.x, before.frame.y, width, height);
                self.place(before, frame, notes)
            }
        }
    }

    /// Moves / resizes: un-minimizes and un-maximizes first (window managers ignore
    /// geometry requests for maximized windows), then places and compares.
    fn place(
        &self,
        before: WindowInfo,
        frame: Rect,
        mut notes: Vec<WindowNote>,
    ) -> Result<WindowOutcome, Error> {
        let id = before.id;
        let monitors = self.desktop().screens.monitors()?;
        if !monitors.iter().any(|m| m.rect.intersect(&frame).is_some()) {
            return Err(Error::InvalidArgument {
                message: format!(
                    "{frame} would put the window outside every monitor ({})",
                    monitors
                        .iter()
                        .map(|m| m.rect.to_string())
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            });
        }
        if before.state.minimized || before.state.maximized {
            self.apply(id, WindowOp::Restore, "restore", |w| {
                !w.state.minimized && !w.state.maximized
            })?;
            notes.push(WindowNote::RestoredFirst);
        }
        self.desktop()
            .window_control
            .window_op(id, WindowOp::SetFrame(frame))?;
        let start = self.window(id)?.frame;
        if let Some(after) = self.poll_window(id, OP_WAIT, |w| w.frame == frame)? {
            return Ok(WindowOutcome {
                before,
                after: Some(after),
                notes,
                confirmed: true,
            });
        }
        let after = self.window(id)?;
        if after.frame == before.frame && after.frame == start {
            return Err(Error::WindowOpFailed {
                op: "move/resize",
                id,
                message: format!(
                    "the window manager left the window at {} (asked for {frame})",
                    after.frame
                ),
            });
        }
        notes.push(WindowNote::Adjusted {
            frame: after.frame,
            asked: frame,
        });
        Ok(WindowOutcome {
            before,
            after: Some(after),
            notes,
            confirmed: true,
        })
    }

    /// Sends `op`, waits for `done`; `WINDOW_OP_FAILED` when it never shows.
    fn apply(
        &self,
        id: WindowId,
        op: WindowOp,
        name: &'static str,
        done: impl Fn(&WindowInfo) -> bool,
    ) -> Result<WindowInfo, Error> {
        self.desktop().window_control.window_op(id, op)?;
        match self.poll_window(id, OP_WAIT, &done)? {
            Some(w) => Ok(w),
            None => {
                let now = self.window(id)?;
                Err(Error::WindowOpFailed {
                    op: name,
                    id,
                    message: format!(
                        "after {} ms the window is {}",
                        OP_WAIT.as_millis(),
                        describe_state(&now)
                    ),
                })
            }
        }
    }

    /// Polls the window until `done` holds; `None` at the deadline. A window that vanished
    /// is `WINDOW_NOT_FOUND`.
    fn poll_window(
        &self,
        id: WindowId,
        wait: Duration,
        done: impl Fn(&WindowInfo) -> bool,
    ) -> Result<Option<WindowInfo>, Error> {
        let deadline = Instant::now() + wait;
        loop {
            let w = self.window(id)?;
            if done(&w) {
                return Ok(Some(w));
            }
            if Instant::now() >= deadline {
                return Ok(None);
            }
            std::thread::sleep(POLL);
        }
    }
}

/// `minimized`, `maximized, active`, `normal` …
pub fn describe_state(w: &WindowInfo) -> String {
    let mut parts = Vec::new();
    if w.state.minimized {
        parts.push("minimized");
    }
    if w.state.maximized {
        parts.push("maximized");
    }
    if !w.state.minimized && !w.state.maximized {
        parts.push("normal");
    }
    if w.state.active {
        parts.push("active");
    }
    format!("{} at {}", parts.join(", "), w.frame)
}

/// The window an explicit reference (id, title, app) names among `windows`.
fn find(windows: &[WindowInfo], target: &WindowRef) -> Result<WindowInfo, Error> {
    match target {
        WindowRef::Id(id) => windows
            .iter()
            .find(|w| w.id == *id)
            .cloned()
            .ok_or(Error::WindowNotFound(*id)),
        WindowRef::TitleMatch(text) => by_title(windows, text),
        WindowRef::App { name, id } => by_app(windows, name, *id),
        WindowRef::Current | WindowRef::Active | WindowRef::PathsWindow => windows
            .iter()
            .find(|w| w.state.active)
            .cloned()
            .ok_or_else(|| Error::InvalidArgument {
                message: "no window given and no window is active".to_string(),
            }),
    }
}

/// The one window whose title or process name contains `text`, case-insensitively.
fn by_title(windows: &[WindowInfo], text: &str) -> Result<WindowInfo, Error> {
    let needle = text.trim().to_lowercase();
    if needle.is_empty() {
        return Err(Error::InvalidArgument {
            message: "the title to match is empty".to_string(),
        });
    }
    let hits: Vec<&WindowInfo> = windows
        .iter()
        .filter(|w| {
            w.title.to_lowercase().contains(&needle)
                || w.process
                    .as_deref()
                    .is_some_and(|p| p.to_lowercase().contains(&needle))
        })
        .collect();
    match hits.as_slice() {
        [one] => Ok((*one).clone()),
        [] => Err(Error::NoWindowMatches {
            needle: text.to_string(),
            titles: windows
                .iter()
                .take(20)
                .map(|w| format!("\"{}\"", w.title))
                .collect(),
        }),
        many => Err(Error::AmbiguousWindow {
            needle: text.to_string(),
            candidates: many
                .iter()
                .map(|w| format!("{} {}", w.id, w.label()))
                .collect(),
        }),
    }
}

/// Window `id` of app `name`, or (no id) the app's only window.
fn by_app(windows: &[WindowInfo], name: &str, id: Option<WindowId>) -> Result<WindowInfo, Error> {
    let app = name.trim();
    if app.is_empty() {
        return Err(Error::InvalidArgument {
            message: "the app name is empty".to_string(),
        });
    }
    if let Some(id) = id {
        let w = find(windows, &WindowRef::Id(id))?;
        if !is_app(&w, app) {
            return Err(Error::NotAppWindow {
                id,
                app: app.to_string(),
                process: w.process,
            });
        }
        return Ok(w);
    }
    let hits: Vec<&WindowInfo> = windows.iter().filter(|w| is_app(w, app)).collect();
    match hits.as_slice() {
        [one] => Ok((*one).clone()),
        [] => Err(Error::NoAppWindow {
            app: app.to_string(),
        }),
        many => Err(Error::AmbiguousApp {
            app: app.to_string(),
            windows: many.iter().map(|w| (*w).clone()).collect(),
        }),
    }
}

#[cfg(test)]
mod tests {
    use deskpilot_backend::FakeDesktop;
    use deskpilot_backend::fake::FakeWindow;
    use deskpilot_types::ErrorCode;

    use super::*;
    use crate::config::EngineConfig;

    fn setup() -> (FakeDesktop, Session, WindowId, WindowId) {
        let fake = FakeDesktop::new(1920, 1080);
        let a = fake.add_window(FakeWindow {
            process: "mousepad".into(),
            ..FakeWindow::new("notes.txt - Mousepad", Rect::new(0, 0, 800, 600))
        });
        let b = fake.add_window(FakeWindow {
            process: "xterm".into(),
            ..FakeWindow::new("xterm", Rect::new(100, 100, 400, 300))
        });
        let e = Session::standalone(fake.desktop(), EngineConfig::default());
        (fake, e, a, b)
    }

    #[test]
    fn title_match_must_name_one_window() {
        let (fake, e, a, _) = setup();
        assert_eq!(
            e.resolve_window(&WindowRef::TitleMatch("MOUSEPAD".into()))
                .unwrap()
                .id,
            a
        );
        fake.add_window(FakeWindow {
            process: "mousepad".into(),
            ..FakeWindow::new("other.txt - Mousepad", Rect::new(0, 0, 10, 10))
        });
        let err = e
            .resolve_window(&WindowRef::TitleMatch("mousepad".into()))
            .unwrap_err();
        assert_eq!(err.code(), ErrorCode::AmbiguousWindow);
        let text = err.to_string();
        assert!(
            text.contains("notes.txt") && text.contains("other.txt"),
            "{text}"
        );
        assert_eq!(
            e.resolve_window(&WindowRef::TitleMatch("gimp".into()))
                .unwrap_err()
                .code(),
            ErrorCode::WindowNotFound
        );
    }

    #[test]
    fn an_app_names_its_one_window_by_process_or_class_with_or_without_exe() {
        let (fake, e, a, b) = setup();
        let app = |name: &str, id: Option<WindowId>| WindowRef::App {
            name: name.into(),
            id,
        };
        assert_eq!(e.resolve_window(&app("Mousepad.EXE", None)).unwrap().id, a);
        assert_eq!(e.resolve_window(&app("xterm", Some(b))).unwrap().id, b);
        assert!(matches!(
            e.resolve_window(&app("xterm", Some(a))),
            Err(Error::NotAppWindow { id, .. }) if id == a
        ));
        assert!(matches!(
            e.resolve_window(&app("gimp", None)),
            Err(Error::NoAppWindow { .. })
        ));
        // A title that merely contains the name is no window of the app.
        fake.add_window(FakeWindow {
            process: "mousepad".into(),
            ..FakeWindow::new("other.txt - Mousepad", Rect::new(0, 0, 10, 10))
        });
        let Err(Error::AmbiguousApp { windows, .. }) = e.resolve_window(&app("mousepad", None))
        else {
            panic!("two mousepad windows are ambiguous");
        };
        assert_eq!(windows.len(), 2);
    }

    #[test]
    fn the_paths_window_is_the_last_one_handed_paths_else_the_active_one() {
        let (_fake, e, a, b) = setup();
        e.window_action(&WindowRef::Id(b), WindowAction::Focus)
            .unwrap();
        assert_eq!(e.resolve_window(&WindowRef::Active).unwrap().id, b);
        assert_eq!(e.resolve_window(&WindowRef::PathsWindow).unwrap().id, b);
        let mut request = crate::tree::TreeRequest::new(WindowRef::Id(a));
        request.include_screenshot = false;
        let snapshot = e.window_state(&request).unwrap();
        e.issue_paths(&snapshot);
        assert_eq!(e.resolve_window(&WindowRef::PathsWindow).unwrap().id, a);
        assert_eq!(e.resolve_window(&WindowRef::Active).unwrap().id, b);
    }

    #[test]
    fn operations_are_verified_in_the_window_list() {
        let (fake, e, a, _) = setup();
        let out = e
            .window_action(&WindowRef::Id(a), WindowAction::Focus)
            .unwrap();
        assert!(out.confirmed && out.after.unwrap().state.active);
        let out = e
            .window_action(&WindowRef::Id(a), WindowAction::Minimize)
            .unwrap();
        assert!(out.after.unwrap().state.minimized);
        let out = e
            .window_action(&WindowRef::Id(a), WindowAction::Move { x: 50, y: 60 })
            .unwrap();
        assert!(out.notes.contains(&WindowNote::RestoredFirst));
        assert_eq!(out.after.unwrap().frame, Rect::new(50, 60, 800, 600));
        let out = e
            .window_action(
                &WindowRef::Id(a),
                WindowAction::Resize {
                    width: 300,
                    height: 200,
                },
            )
            .unwrap();
        assert_eq!(out.after.unwrap().frame, Rect::new(50, 60, 300, 200));
        assert_eq!(
            e.window_action(&WindowRef::Id(a), WindowAction::Move { x: 5000, y: 0 })
                .unwrap_err()
                .code(),
            ErrorCode::InvalidArgument
        );
        fake.prompt_on_close(a);
        let out = e
            .window_action(&WindowRef::Id(a), WindowAction::Close)
            .unwrap();
        assert!(!out.confirmed && matches!(out.notes[0], WindowNote::StillOpen { .. }));
    }

    #[test]
    fn a_stubborn_window_manager_is_reported() {
        let (fake, e, a, b) = setup();
        fake.ignore_window_ops(2);
        let err = e
            .window_action(&WindowRef::Id(a), WindowAction::Focus)
            .unwrap_err();
        assert_eq!(err.code(), ErrorCode::FocusRefused);
        assert!(err.to_string().contains("xterm"), "{err}");
        fake.ignore_window_ops(1);
        let out = e
            .window_action(&WindowRef::Id(a), WindowAction::Focus)
            .unwrap();
        assert!(out.notes[0] == WindowNote::FocusRetried);
        fake.ignore_window_ops(1);
        assert_eq!(
            e.window_action(&WindowRef::Id(b), WindowAction::Maximize)
                .unwrap_err()
                .code(),
            ErrorCode::WindowOpFailed
        );
        let out = e
            .window_action(&WindowRef::Id(b), WindowAction::Close)
            .unwrap();
        assert!(out.confirmed && out.after.is_none());
    }
}
