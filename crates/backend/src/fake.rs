//! `FakeDesktop`: a scriptable in-memory desktop for unit tests.
//!
//! It holds monitors, a stack of windows and one BGRX framebuffer covering the virtual
//! desktop. Tests add windows (which paints them), paint regions, change window state and
//! read pixels back; the engine sees exactly what a real backend would return. Nothing here
//! touches the OS, and nothing sleeps unless a test asks for a hung application
//! (`hang_password_fields`).
//!
//! Scripted trees act like a toolkit: actions flip states, a container given a selection
//! (`allow_selection`) selects its children, `focus` and a pointer press focus an element, and
//! keys typed go into the focused editable element (ctrl+a selects its text first; a password
//! field keeps one mask character per character, as toolkits report it). Tests move,
//! rename or re-sort elements between reads with `update_tree`, and take capabilities away
//! with `lack` to stand in for a backend that cannot re-read or hit-test elements. The trees
//! themselves are written with [`element`] and [`tree`].

mod element;

use std::sync::{Arc, Mutex, MutexGuard};

use deskpilot_types::{Key, Monitor, Point, Rect, WindowId, WindowInfo, WindowState};

use crate::{
    BackendInfo, Button, Capture, Clipboard, Desktop, Keyboard, Pointer, Screens, WindowCapture,
    WindowControl, WindowOp, Windows,
    error::Error,
    frame::{Frame, PixelFormat},
    overlay::{GuardEvent, GuardListener, Overlay, OverlayStyle},
    tree::{Accessibility, ElementHandle, ElementStates, RawTree, TreeLimits},
};

pub use element::{FakeElement, element, tree};

/// How a scripted element formats the text it is given (see [`FakeDesktop::format_values`]).
pub type Format = fn(&str) -> String;

/// A scriptable desktop: monitors, windows (topmost first) and a framebuffer.
#[derive(Debug, Clone)]
pub struct FakeDesktop {
    state: Arc<Mutex<State>>,
    overlay: FakeOverlay,
    ocr: FakeOcr,
}

#[derive(Debug)]
struct State {
    monitors: Vec<Monitor>,
    windows: Vec<WindowInfo>,
    framebuffer: Frame,
    next_id: u64,
    captures: usize,
    pointer: Point,
    /// Moves the pointer ignores (it "sticks"), for receipt tests.
    stuck_moves: usize,
    events: Vec<PointerEvent>,
    keys: Vec<(Key, bool)>,
    typed: String,
    /// Every input event in order, as text (`"key ctrl down"`, `"button left down (10, 20)"`).
    input_log: Vec<String>,
    /// The next `n` window operations are ignored (a stubborn window manager).
    ignored_ops: usize,
    /// Windows that stay open when asked to close (they "ask to save").
    prompting: Vec<WindowId>,
    clipboard: Option<String>,
    launch_env: Vec<(String, String)>,
    trees: Vec<(WindowId, RawTree)>,
    tree_reads: usize,
    /// What `capture_window` answers per window (see `set_own_drawing`).
    own_drawings: Vec<(WindowId, Option<[u8; 3]>)>,
    /// Windows whose `capture_window` fails (see `fail_own_drawing`).
    own_drawing_fails: Vec<WindowId>,
    hit: Option<WindowId>,
    installed: Vec<crate::apps::InstalledApp>,
    /// Accessibility operations answered `Unsupported` (see `lack`).
    lacking: Vec<&'static str>,
    /// Containers with a selection interface (see `allow_selection`).
    selectable: Vec<ElementHandle>,
    /// Elements that accept `set_value` and keep their text (see `ignore_set_value`).
    ignores_set_value: Vec<ElementHandle>,
    /// How an element formats what it is given (see `format_values`).
    formats: Vec<(ElementHandle, Format)>,
    /// Elements whose hit test answers "something else is here" (see `cover_element`).
    covered: Vec<ElementHandle>,
    /// Windows an action opens (see `open_on_action`).
    opens: Vec<(ElementHandle, FakeWindow)>,
    /// Every accessibility action done, in order.
    actions_done: Vec<(ElementHandle, String)>,
    /// `password_fields` answers only after its deadline (see `hang_password_fields`).
    password_fields_hang: bool,
    /// How many times `password_fields` was asked.
    password_lookups: usize,
    /// Modifiers held now.
    held: Vec<Key>,
    /// ctrl+a selected the focused element's text: the next typing replaces it.
    all_selected: bool,
}

/// One synthetic pointer event the fake received.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PointerEvent {
    Move(Point),
    Button {
        button: Button,
        down: bool,
        at: Point,
    },
    Wheel {
        dx: i32,
        dy: i32,
        at: Point,
    },
}

/// What a test says about a window it adds.
#[derive(Debug, Clone)]
pub struct FakeWindow {
    pub title: String,
    pub class: String,
    pub pid: u32,
    pub process: String,
    pub frame: Rect,
    /// Colour the client area is painted with.
    pub fill: [u8; 3],
}

impl FakeWindow {
    pub fn new(title: &str, frame: Rect) -> Self {
        FakeWindow {
            title: title.to_string(),
            class: "Fake".to_string(),
            pid: 4242,
            process: "fake".to_string(),
            frame,
            fill: [200, 200, 200],
        }
    }
}

impl FakeDesktop {
    /// One monitor of `width`×`height` at the origin.
    pub fn new(width: u32, height: u32) -> Self {
        Self::with_monitors(&[Rect::new(0, 0, width, height)])
    }

    /// Several monitors; the first is primary. Origins may be negative.
    pub fn with_monitors(rects: &[Rect]) -> Self {
        let bounds = rects.iter().fold(Rect::default(), |acc, r| acc.union(r));
        let monitors = rects
            .iter()
            .enumerate()
            .map(|(i, r)| Monitor {
                index: i as u32,
                name: format!("FAKE-{i}"),
                rect: *r,
                primary: i == 0,
                scale: 1.0,
            })
            .collect();
        let framebuffer = Frame {
            rect: bounds,
            format: PixelFormat::Bgrx,
            data: vec![0; bounds.area() as usize * 4],
        };
        FakeDesktop {
            state: Arc::new(Mutex::new(State {
                monitors,
                windows: Vec::new(),
                framebuffer,
                next_id: 0x40_0001,
                captures: 0,
                pointer: Point::new(0, 0),
                stuck_moves: 0,
                events: Vec::new(),
                keys: Vec::new(),
                typed: String::new(),
                input_log: Vec::new(),
                ignored_ops: 0,
                prompting: Vec::new(),
                clipboard: None,
                launch_env: Vec::new(),
                trees: Vec::new(),
                tree_reads: 0,
                own_drawings: Vec::new(),
                own_drawing_fails: Vec::new(),
                hit: None,
                installed: Vec::new(),
                lacking: Vec::new(),
                selectable: Vec::new(),
                ignores_set_value: Vec::new(),
                formats: Vec::new(),
                covered: Vec::new(),
                opens: Vec::new(),
                actions_done: Vec::new(),
                held: Vec::new(),
                all_selected: false,
                password_fields_hang: false,
                password_lookups: 0,
            })),
            overlay: FakeOverlay::default(),
            ocr: FakeOcr::default(),
        }
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        // A panicking test thread must not poison every later assertion.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// A [`Desktop`] whose capabilities are all this fake.
    pub fn desktop(&self) -> Desktop {
        let info = BackendInfo {
            platform: "fake",
            display: "fake:0".to_string(),
            capture_method: "memory".to_string(),
            window_manager: Some("fake-wm".to_string()),
        };
        Desktop::from_backend(info, Arc::new(self.clone()))
            .with_overlay(Arc::new(self.overlay.clone()))
            .with_ocr(Arc::new(self.ocr.clone()))
    }

    /// The fake's OCR engine, to write text on the screen for it.
    pub fn ocr(&self) -> &FakeOcr {
        &self.ocr
    }

    /// The fake's indicator, to press Esc on it or kill it.
    pub fn overlay(&self) -> &FakeOverlay {
        &self.overlay
    }

    /// Adds a window on top of the stack, makes it active and paints its client area.
    pub fn add_window(&self, w: FakeWindow) -> WindowId {
        add_window(&mut self.lock(), w)
    }
}

/// [`FakeDesktop::add_window`] on the locked state (an action may open a window).
fn add_window(s: &mut State, w: FakeWindow) -> WindowId {
    {
        let id = WindowId(s.next_id);
        s.next_id += 1;
        for other in &mut s.windows {
            other.state.active = false;
        }
        // A 20 px title bar, like a simple window manager draws.
        let client = Rect::new(
            w.frame.x,
            w.frame.y + 20,
            w.frame.width,
            w.frame.height.saturating_sub(20),
        );
        s.framebuffer.fill(w.frame, [40, 40, 90]);
        s.framebuffer.fill(client, w.fill);
        s.windows.insert(
            0,
            WindowInfo {
                id,
                title: w.title,
                class: w.class,
                pid: Some(w.pid),
                process: Some(w.process),
                frame: w.frame,
                client,
                state: WindowState {
                    minimized: false,
                    maximized: false,
                    active: true,
                    visible: true,
                },
                z: 0,
                monitor: None,
            },
        );
        renumber(&mut s.windows);
        id
    }
}

impl FakeDesktop {
    /// Removes a window (its pixels stay until painted over, like a real screen without redraw).
    pub fn remove_window(&self, id: WindowId) {
        let mut s = self.lock();
        s.windows.retain(|w| w.id != id);
        renumber(&mut s.windows);
    }

    /// Changes a window's state flags.
    pub fn set_state(&self, id: WindowId, state: WindowState) {
        let mut s = self.lock();
        if let Some(w) = s.windows.iter_mut().find(|w| w.id == id) {
            w.state = state;
        }
    }

    /// Paints a rectangle of the framebuffer (physical coordinates).
    pub fn paint(&self, rect: Rect, rgb: [u8; 3]) {
        self.lock().framebuffer.fill(rect, rgb);
    }

    /// Moves a window (frame and client) to a new frame rectangle.
    pub fn move_window(&self, id: WindowId, frame: Rect) {
        let mut s = self.lock();
        if let Some(w) = s.windows.iter_mut().find(|w| w.id == id) {
            let (dx, dy) = (frame.x - w.frame.x, frame.y - w.frame.y);
            w.client = Rect::new(
                w.client.x + dx,
                w.client.y + dy,
                frame.width,
                frame.height.saturating_sub(20),
            );
            w.frame = frame;
        }
    }

    /// The next `n` pointer moves are ignored (the pointer stays put).
    pub fn stick_pointer(&self, n: usize) {
        self.lock().stuck_moves = n;
    }

    /// Every pointer event received so far.
    pub fn pointer_events(&self) -> Vec<PointerEvent> {
        self.lock().events.clone()
    }

    /// Every key press (`true`) and release received so far.
    pub fn key_events(&self) -> Vec<(Key, bool)> {
        self.lock().keys.clone()
    }

    /// Everything typed with `type_text` so far.
    pub fn typed(&self) -> String {
        self.lock().typed.clone()
    }

    /// Every input event in order, as text: `"key ctrl down"`, `"button left down (10, 20)"`,
    /// `"wheel 0 3 (10, 20)"`, `"type hello"`.
    pub fn input_log(&self) -> Vec<String> {
        self.lock().input_log.clone()
    }

    /// The next `n` window operations are accepted but ignored.
    pub fn ignore_window_ops(&self, n: usize) {
        self.lock().ignored_ops = n;
    }

    /// `id` stays open when asked to close, like an editor asking to save.
    pub fn prompt_on_close(&self, id: WindowId) {
        self.lock().prompting.push(id);
    }

    /// What [`WindowControl::launch_env`] returns.
    pub fn set_launch_env(&self, env: Vec<(String, String)>) {
        self.lock().launch_env = env;
    }

    /// What [`Accessibility::tree`] returns for `window` (budgets are applied by the fake).
    pub fn set_tree(&self, window: WindowId, tree: RawTree) {
        let mut s = self.lock();
        s.trees.retain(|(w, _)| *w != window);
        s.trees.push((window, tree));
    }

    /// Changes the tree `window` serves from now on (move, rename, re-sort, remove elements):
    /// what the application did between two reads.
    pub fn update_tree(&self, window: WindowId, f: impl FnOnce(&mut RawTree)) {
        let mut s = self.lock();
        if let Some((_, tree)) = s.trees.iter_mut().find(|(w, _)| *w == window) {
            f(tree);
        }
    }

    /// Makes the accessibility operation `op` (`"live"`, `"hits"`, `"states"`, `"select"`,
    /// `"set_value"`, `"read_text"`, `"focus"`) answer `Unsupported`, like a backend without it.
    pub fn lack(&self, op: &'static str) {
        self.lock().lacking.push(op);
    }

    /// Gives the element `container` a selection interface: its children can be selected.
    pub fn allow_selection(&self, container: &ElementHandle) {
        self.lock().selectable.push(container.clone());
    }

    /// `set_value` on `element` is accepted and changes nothing (Gecko's `SetTextContents`).
    pub fn ignore_set_value(&self, element: &ElementHandle) {
        self.lock().ignores_set_value.push(element.clone());
    }

    /// `element` keeps `format(text)` of whatever text it is given (a number field).
    pub fn format_values(&self, element: &ElementHandle, format: Format) {
        self.lock().formats.push((element.clone(), format));
    }

    /// The toolkit's hit test at any point answers another element than `element`.
    pub fn cover_element(&self, element: &ElementHandle) {
        self.lock().covered.push(element.clone());
    }

    /// Running any action of `element` opens `window` (a dialog, a menu).
    pub fn open_on_action(&self, element: &ElementHandle, window: FakeWindow) {
        self.lock().opens.push((element.clone(), window));
    }

    /// Every accessibility action done so far: the element and the action's name.
    pub fn actions_done(&self) -> Vec<(ElementHandle, String)> {
        self.lock().actions_done.clone()
    }

    /// The element behind `handle` as the scripted trees hold it now.
    pub fn element(&self, handle: &ElementHandle) -> Option<crate::tree::RawElement> {
        self.lock()
            .trees
            .iter()
            .flat_map(|(_, t)| t.elements.iter())
            .find(|e| e.handle == *handle)
            .cloned()
    }

    /// How many trees have been read.
    pub fn tree_reads(&self) -> usize {
        self.lock().tree_reads
    }

    /// How many captures have been taken.
    pub fn capture_count(&self) -> usize {
        self.lock().captures
    }

    /// What capturing `window` alone gives: its own drawing in one colour (`Some`), or a blank
    /// result (`None`). Windows without one answer `Unsupported`.
    pub fn set_own_drawing(&self, window: WindowId, rgb: Option<[u8; 3]>) {
        let mut s = self.lock();
        s.own_drawings.retain(|(w, _)| *w != window);
        s.own_drawings.push((window, rgb));
    }

    /// Makes capturing `window` alone fail with a timeout (a hung window's `PrintWindow`).
    pub fn fail_own_drawing(&self, window: WindowId) {
        self.lock().own_drawing_fails.push(window);
    }

    /// Makes `password_fields` answer a second after its deadline, like an application that
    /// hangs: a capture must not wait for it.
    pub fn hang_password_fields(&self, hang: bool) {
        self.lock().password_fields_hang = hang;
    }

    /// How many times [`Accessibility::password_fields`] was asked.
    pub fn password_lookups(&self) -> usize {
        self.lock().password_lookups
    }

    /// Makes the platform hit test answer `window` for every point (`None`: no answer, so the
    /// engine decides from the stacking order).
    pub fn set_hit(&self, window: Option<WindowId>) {
        self.lock().hit = window;
    }
}

impl State {
    /// `Unsupported` when a test took `op` away.
    fn check(&self, op: &'static str) -> Result<(), Error> {
        if self.lacking.contains(&op) {
            return Err(Error::Unsupported {
                what: op,
                reason: "the fake was told to lack it".to_string(),
            });
        }
        Ok(())
    }

    fn element_mut(&mut self, handle: &ElementHandle) -> Option<&mut crate::tree::RawElement> {
        self.trees
            .iter_mut()
            .flat_map(|(_, t)| t.elements.iter_mut())
            .find(|e| e.handle == *handle)
    }

    /// Moves keyboard focus to `handle` (no element keeps it elsewhere).
    fn focus(&mut self, handle: &ElementHandle) {
        for e in self
            .trees
            .iter_mut()
            .flat_map(|(_, t)| t.elements.iter_mut())
        {
            e.states.focused = e.handle == *handle;
        }
        self.all_selected = false;
    }

    /// `text` as `handle` keeps it.
    fn formatted(&self, handle: &ElementHandle, text: &str) -> String {
        match self.formats.iter().find(|(h, _)| h == handle) {
            Some((_, f)) => f(text),
            None => text.to_string(),
        }
    }

    /// What typing `text` does to the focused editable element.
    fn type_into_focused(&mut self, text: &str) {
        let replace = std::mem::take(&mut self.all_selected);
        let Some(handle) = self
            .trees
            .iter()
            .flat_map(|(_, t)| t.elements.iter())
            .find(|e| e.states.focused && e.states.editable)
            .map(|e| e.handle.clone())
        else {
            return;
        };
        let old = self
            .element_mut(&handle)
            .and_then(|e| e.value.clone())
            .unwrap_or_default();
        let new = if replace {
            text.to_string()
        } else {
            old + text
        };
        let new = self.formatted(&handle, &new);
        if let Some(e) = self.element_mut(&handle) {
            // A password field shows (and its text reads as) one mask character per character.
            e.value = Some(if e.states.protected {
                "●".repeat(new.chars().count())
            } else {
                new
            });
        }
    }
}

fn renumber(windows: &mut [WindowInfo]) {
    for (z, w) in windows.iter_mut().enumerate() {
        w.z = z as u32;
    }
}

impl Screens for FakeDesktop {
    fn monitors(&self) -> Result<Vec<Monitor>, Error> {
        Ok(self.lock().monitors.clone())
    }

    fn desktop_bounds(&self) -> Result<Rect, Error> {
        Ok(self.lock().framebuffer.rect)
    }
}

impl Windows for FakeDesktop {
    fn list_windows(&self) -> Result<Vec<WindowInfo>, Error> {
        Ok(self.lock().windows.clone())
    }

    fn window_at(&self, _p: Point) -> Result<Option<WindowId>, Error> {
        Ok(self.lock().hit)
    }
}

impl Capture for FakeDesktop {
    fn capture_window(&self, window: &WindowInfo, rect: Rect) -> Result<WindowCapture, Error> {
        let s = self.lock();
        if s.own_drawing_fails.contains(&window.id) {
            return Err(Error::Timeout {
                operation: "capturing the window alone".to_string(),
                after: std::time::Duration::from_secs(1),
            });
        }
        Ok(match s.own_drawings.iter().find(|(w, _)| *w == window.id) {
            None => WindowCapture::Unsupported,
            Some((_, None)) => WindowCapture::Blank,
            Some((_, Some([r, g, b]))) => WindowCapture::Captured(Frame {
                rect,
                format: PixelFormat::Bgrx,
                data: [*b, *g, *r, 0].repeat(rect.area() as usize),
            }),
        })
    }

    fn capture(&self, rect: Rect) -> Result<Frame, Error> {
        let mut s = self.lock();
        s.captures += 1;
        let fb = &s.framebuffer;
        if rect.is_empty() || rect.intersect(&fb.rect) != Some(rect) {
            return Err(Error::OutsideDesktop {
                rect,
                desktop: fb.rect,
            });
        }
        let stride = fb.rect.width as usize * 4;
        let x0 = (rect.x as i64 - fb.rect.x as i64) as usize;
        let y0 = (rect.y as i64 - fb.rect.y as i64) as usize;
        let mut data = Vec::with_capacity(rect.area() as usize * 4);
        for row in y0..y0 + rect.height as usize {
            data.extend_from_slice(
                &fb.data[row * stride + x0 * 4..row * stride + (x0 + rect.width as usize) * 4],
            );
        }
        Ok(Frame {
            rect,
            format: fb.format,
            data,
        })
    }
}

impl Pointer for FakeDesktop {
    fn position(&self) -> Result<Point, Error> {
        Ok(self.lock().pointer)
    }

    fn move_to(&self, p: Point) -> Result<(), Error> {
        let mut s = self.lock();
        s.events.push(PointerEvent::Move(p));
        if s.stuck_moves > 0 {
            s.stuck_moves -= 1;
        } else {
            s.pointer = p;
        }
        Ok(())
    }

    fn button(&self, button: Button, down: bool) -> Result<(), Error> {
        let mut s = self.lock();
        let at = s.pointer;
        s.events.push(PointerEvent::Button { button, down, at });
        // A press focuses the smallest focusable element under the pointer, as toolkits do.
        if down {
            let under = s
                .trees
                .iter()
                .flat_map(|(_, t)| t.elements.iter())
                .filter(|e| e.states.focusable && e.bounds.is_some_and(|b| b.contains(at)))
                .min_by_key(|e| e.bounds.map_or(0, |b| b.area()))
                .map(|e| e.handle.clone());
            if let Some(h) = under {
                s.focus(&h);
            }
        }
        let entry = format!(
            "button {} {} ({}, {})",
            format!("{button:?}").to_lowercase(),
            if down { "down" } else { "up" },
            at.x,
            at.y
        );
        s.input_log.push(entry);
        Ok(())
    }

    fn wheel(&self, dx: i32, dy: i32) -> Result<(), Error> {
        let mut s = self.lock();
        let at = s.pointer;
        s.events.push(PointerEvent::Wheel { dx, dy, at });
        s.input_log
            .push(format!("wheel {dx} {dy} ({}, {})", at.x, at.y));
        Ok(())
    }
}

impl Keyboard for FakeDesktop {
    fn key(&self, key: Key, down: bool) -> Result<(), Error> {
        let mut s = self.lock();
        s.keys.push((key, down));
        match (key, down) {
            (Key::Ctrl | Key::Shift | Key::Alt | Key::Super, true) => s.held.push(key),
            (Key::Ctrl | Key::Shift | Key::Alt | Key::Super, false) => s.held.retain(|k| *k != key),
            (Key::Char('a'), true) if s.held.contains(&Key::Ctrl) => s.all_selected = true,
            (Key::Backspace | Key::Delete, true) if s.all_selected => s.type_into_focused(""),
            _ => {}
        }
        let name = match key {
            Key::Char(c) => c.to_string(),
            Key::F(n) => format!("f{n}"),
            other => format!("{other:?}").to_lowercase(),
        };
        s.input_log
            .push(format!("key {name} {}", if down { "down" } else { "up" }));
        Ok(())
    }

    fn type_text(&self, text: &str) -> Result<(), Error> {
        let mut s = self.lock();
        s.type_into_focused(text);
        s.typed.push_str(text);
        s.input_log.push(format!("type {text}"));
        Ok(())
    }
}

impl FakeDesktop {
    /// The apps `installed_apps` answers with.
    pub fn set_installed(&self, apps: Vec<crate::apps::InstalledApp>) {
        self.lock().installed = apps;
    }
}

impl WindowControl for FakeDesktop {
    fn installed_apps(&self) -> Result<Vec<crate::apps::InstalledApp>, Error> {
        Ok(self.lock().installed.clone())
    }

    /// An obedient window manager: every operation applies at once (unless
    /// [`FakeDesktop::ignore_window_ops`] says otherwise).
    fn window_op(&self, id: WindowId, op: WindowOp) -> Result<(), Error> {
        let mut s = self.lock();
        let Some(index) = s.windows.iter().position(|w| w.id == id) else {
            return Err(Error::WindowNotFound(id));
        };
        if s.ignored_ops > 0 {
            s.ignored_ops -= 1;
            return Ok(());
        }
        let screen = s.monitors.first().map(|m| m.rect).unwrap_or_default();
        match op {
            WindowOp::Activate => {
                let mut w = s.windows.remove(index);
                w.state.minimized = false;
                w.state.visible = true;
                for other in &mut s.windows {
                    other.state.active = false;
                }
                w.state.active = true;
                s.windows.insert(0, w);
            }
            WindowOp::Minimize => {
                let w = &mut s.windows[index];
                w.state.minimized = true;
                w.state.visible = false;
                w.state.active = false;
            }
            WindowOp::Maximize => {
                let w = &mut s.windows[index];
                w.state.maximized = true;
                w.frame = screen;
                w.client = Rect::new(
                    screen.x,
                    screen.y + 20,
                    screen.width,
                    screen.height.saturating_sub(20),
                );
            }
            WindowOp::Restore => {
                let w = &mut s.windows[index];
                w.state.minimized = false;
                w.state.maximized = false;
                w.state.visible = true;
            }
            WindowOp::Close => {
                if !s.prompting.contains(&id) {
                    s.windows.remove(index);
                }
            }
            WindowOp::SetFrame(frame) => {
                let w = &mut s.windows[index];
                w.frame = frame;
                w.client = Rect::new(
                    frame.x,
                    frame.y + 20,
                    frame.width,
                    frame.height.saturating_sub(20),
                );
            }
        }
        renumber(&mut s.windows);
        Ok(())
    }

    fn launch_env(&self) -> Vec<(String, String)> {
        self.lock().launch_env.clone()
    }
}

impl Accessibility for FakeDesktop {
    fn tree(&self, window: &WindowInfo, limits: &TreeLimits) -> Result<RawTree, Error> {
        let mut s = self.lock();
        s.tree_reads += 1;
        let Some((_, tree)) = s.trees.iter().find(|(w, _)| *w == window.id) else {
            return Err(Error::Unsupported {
                what: "accessibility tree",
                reason: format!("window {} exposes no tree", window.id),
            });
        };
        let mut tree = tree.clone();
        let before = tree.elements.len();
        // Depth-first order with parents first: truncating keeps every parent index valid.
        let mut kept = Vec::new();
        let mut map = vec![None; before];
        for (i, e) in tree.elements.iter().enumerate() {
            if kept.len() >= limits.max_elements || e.depth > limits.max_depth {
                continue;
            }
            if e.parent.is_some_and(|p| map[p].is_none()) {
                continue;
            }
            let mut e = e.clone();
            e.parent = e.parent.and_then(|p| map[p]);
            map[i] = Some(kept.len());
            kept.push(e);
        }
        tree.complete = kept.len() == before;
        tree.elements = kept;
        Ok(tree)
    }

    /// Acts like a toolkit: "toggle" / "click" flip `checked`, "press" flips `expanded`,
    /// "select" selects; any other advertised action is accepted and changes nothing.
    fn do_action(&self, element: &ElementHandle, action: &str) -> Result<(), Error> {
        let mut s = self.lock();
        let e = s
            .trees
            .iter_mut()
            .flat_map(|(_, t)| t.elements.iter_mut())
            .find(|e| e.handle == *element)
            .ok_or_else(|| Error::Unsupported {
                what: "accessibility actions",
                reason: format!("UnknownObject {}", element.0),
            })?;
        if !e.actions.iter().any(|a| a.eq_ignore_ascii_case(action)) {
            return Err(Error::Unsupported {
                what: "accessibility actions",
                reason: format!("no action {action}"),
            });
        }
        match action.to_ascii_lowercase().as_str() {
            "toggle" | "click" | "check" | "uncheck" => e.states.checked = !e.states.checked,
            "press" => e.states.expanded = !e.states.expanded,
            "select" => e.states.selected = true,
            _ => {}
        }
        s.actions_done.push((element.clone(), action.to_string()));
        let opened: Vec<FakeWindow> = s
            .opens
            .iter()
            .filter(|(h, _)| h == element)
            .map(|(_, w)| w.clone())
            .collect();
        for w in opened {
            add_window(&mut s, w);
        }
        Ok(())
    }

    /// Replaces the element's text, unless told to ignore it (`ignore_set_value`) or to
    /// format it (`format_values`).
    fn set_value(&self, element: &ElementHandle, value: &str) -> Result<(), Error> {
        let mut s = self.lock();
        s.check("set_value")?;
        if s.ignores_set_value.contains(element) {
            return Ok(());
        }
        let value = s.formatted(element, value);
        let e = s.element_mut(element).ok_or_else(|| Error::ElementGone {
            reason: format!("UnknownObject {}", element.0),
        })?;
        if !e.states.editable {
            return Err(Error::Unsupported {
                what: "setting values",
                reason: "the element holds no editable text".to_string(),
            });
        }
        e.value = Some(value);
        Ok(())
    }

    /// The element's value (empty without one).
    fn read_text(&self, element: &ElementHandle) -> Result<String, Error> {
        let mut s = self.lock();
        s.check("read_text")?;
        s.element_mut(element)
            .map(|e| e.value.clone().unwrap_or_default())
            .ok_or_else(|| Error::ElementGone {
                reason: format!("UnknownObject {}", element.0),
            })
    }

    fn focus(&self, element: &ElementHandle) -> Result<(), Error> {
        let mut s = self.lock();
        s.check("focus")?;
        if s.element_mut(element).is_none() {
            return Err(Error::ElementGone {
                reason: format!("UnknownObject {}", element.0),
            });
        }
        s.focus(element);
        Ok(())
    }

    /// Selects the element in its parent when the parent was given a selection
    /// (`allow_selection`); single selection, like a file manager's list.
    fn select(&self, element: &ElementHandle) -> Result<(), Error> {
        let mut s = self.lock();
        s.check("select")?;
        let selectable = s.selectable.clone();
        for (_, tree) in &mut s.trees {
            let Some(i) = tree.elements.iter().position(|e| e.handle == *element) else {
                continue;
            };
            let Some(parent) = tree.elements[i].parent else {
                break;
            };
            if !selectable.contains(&tree.elements[parent].handle) {
                break;
            }
            for e in tree
                .elements
                .iter_mut()
                .filter(|e| e.parent == Some(parent))
            {
                e.states.selected = false;
            }
            tree.elements[i].states.selected = true;
            return Ok(());
        }
        Err(Error::Unsupported {
            what: "selecting elements",
            reason: "the element's container has no selection interface".to_string(),
        })
    }

    fn states(&self, element: &ElementHandle) -> Result<ElementStates, Error> {
        let s = self.lock();
        s.check("states")?;
        s.trees
            .iter()
            .flat_map(|(_, t)| t.elements.iter())
            .find(|e| e.handle == *element)
            .map(|e| e.states)
            .ok_or_else(|| Error::Unsupported {
                what: "reading element states",
                reason: format!("UnknownObject {}", element.0),
            })
    }

    /// The element as the scripted tree holds it now; an element no tree holds is gone.
    fn live(&self, element: &ElementHandle) -> Result<crate::tree::LiveElement, Error> {
        let s = self.lock();
        s.check("live")?;
        s.trees
            .iter()
            .flat_map(|(_, t)| t.elements.iter())
            .find(|e| e.handle == *element)
            .map(|e| crate::tree::LiveElement {
                role: e.role,
                name: e.name.clone(),
                states: e.states,
                bounds: e.bounds,
            })
            .ok_or_else(|| Error::ElementGone {
                reason: format!("UnknownObject {}", element.0),
            })
    }

    /// The protected, on-screen elements with bounds of the windows' scripted trees (no tree
    /// is read, `tree_reads` does not move); `lack("password_fields")` makes it fail.
    fn password_fields(
        &self,
        windows: &[WindowInfo],
        deadline: std::time::Instant,
    ) -> Result<crate::tree::PasswordFields, Error> {
        let hang = {
            let mut s = self.lock();
            s.check("password_fields")?;
            s.password_lookups += 1;
            s.password_fields_hang
        };
        if hang {
            let late = deadline + std::time::Duration::from_secs(1);
            std::thread::sleep(late.saturating_duration_since(std::time::Instant::now()));
        }
        let s = self.lock();
        let fields = windows
            .iter()
            .filter_map(|w| s.trees.iter().find(|(id, _)| *id == w.id))
            .flat_map(|(id, t)| {
                t.elements
                    .iter()
                    .filter(|e| e.states.protected && e.states.onscreen)
                    .filter_map(|e| {
                        Some(crate::tree::PasswordField {
                            window: *id,
                            bounds: e.bounds?,
                        })
                    })
            })
            .collect();
        Ok(crate::tree::PasswordFields {
            fields,
            unanswered: Vec::new(),
        })
    }

    /// The point hits the element when it lies inside its bounds (and no test covered it).
    fn hits(&self, element: &ElementHandle, at: Point) -> Result<bool, Error> {
        let s = self.lock();
        s.check("hits")?;
        let e = s
            .trees
            .iter()
            .flat_map(|(_, t)| t.elements.iter())
            .find(|e| e.handle == *element)
            .ok_or_else(|| Error::ElementGone {
                reason: format!("UnknownObject {}", element.0),
            })?;
        Ok(!s.covered.contains(element) && e.bounds.is_some_and(|b| b.contains(at)))
    }
}

impl Clipboard for FakeDesktop {
    fn read_text(&self) -> Result<Option<String>, Error> {
        Ok(self.lock().clipboard.clone())
    }

    fn write_text(&self, text: &str) -> Result<(), Error> {
        self.lock().clipboard = Some(text.to_string());
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use deskpilot_types::Point;

    use super::*;

    #[test]
    fn windows_stack_topmost_first_and_paint_the_framebuffer() {
        let fake =
            FakeDesktop::with_monitors(&[Rect::new(0, 0, 100, 100), Rect::new(-50, 0, 50, 100)]);
        let a = fake.add_window(FakeWindow {
            fill: [255, 0, 0],
            ..FakeWindow::new("a", Rect::new(-40, 10, 60, 50))
        });
        let b = fake.add_window(FakeWindow::new("b", Rect::new(30, 30, 40, 40)));
        let list = fake.list_windows().unwrap();
        assert_eq!(
            list.iter()
                .map(|w| (w.id, w.z, w.state.active))
                .collect::<Vec<_>>(),
            [(b, 0, true), (a, 1, false)]
        );
        let frame = fake.capture(Rect::new(-50, 0, 150, 100)).unwrap();
        assert_eq!(frame.rgb_at(Point::new(-40, 40)), Some([255, 0, 0]));
        assert_eq!(
            frame.rgb_at(Point::new(-40, 10)),
            Some([40, 40, 90]),
            "title bar"
        );
        assert!(matches!(
            fake.capture(Rect::new(90, 90, 20, 20)),
            Err(Error::OutsideDesktop { .. })
        ));
    }
}

/// The fake's indicator: records what it was asked and lets a test press Esc or kill it.
#[derive(Clone, Default)]
pub struct FakeOverlay {
    inner: Arc<Mutex<OverlayState>>,
}

#[derive(Default)]
struct OverlayState {
    listener: Option<GuardListener>,
    visible: bool,
    shows: usize,
    last_style: Option<OverlayStyle>,
    own_escapes: usize,
    /// `show` fails with this.
    broken: Option<String>,
}

impl std::fmt::Debug for FakeOverlay {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let s = self.lock();
        f.debug_struct("FakeOverlay")
            .field("visible", &s.visible)
            .field("shows", &s.shows)
            .finish_non_exhaustive()
    }
}

impl FakeOverlay {
    fn lock(&self) -> MutexGuard<'_, OverlayState> {
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn emit(&self, event: GuardEvent) {
        let listener = self.lock().listener.clone();
        if let Some(l) = listener {
            l(event);
        }
    }

    /// A human presses Esc: heard only while visible and listening, as on a real desktop.
    pub fn press_escape(&self) {
        let heard = {
            let mut s = self.lock();
            if s.own_escapes > 0 {
                s.own_escapes -= 1;
                false
            } else {
                s.visible && s.last_style.as_ref().is_some_and(|st| st.esc_stop)
            }
        };
        if heard {
            self.emit(GuardEvent::Escape);
        }
    }

    /// The indicator dies unexpectedly.
    pub fn die(&self) {
        self.lock().visible = false;
        self.emit(GuardEvent::GuardExited("killed by the test".to_string()));
    }

    /// The input host dies.
    pub fn host_dies(&self) {
        self.emit(GuardEvent::HostExited(
            "connection lost in the test".to_string(),
        ));
    }

    /// Makes every later `show` fail with `reason`.
    pub fn break_with(&self, reason: &str) {
        self.lock().broken = Some(reason.to_string());
    }

    /// How many times the indicator was brought up from hidden.
    pub fn shows(&self) -> usize {
        self.lock().shows
    }

    /// The style of the last `show`.
    pub fn last_style(&self) -> Option<OverlayStyle> {
        self.lock().last_style.clone()
    }
}

impl Overlay for FakeOverlay {
    fn set_listener(&self, listener: GuardListener) {
        self.lock().listener = Some(listener);
    }

    fn show(&self, style: &OverlayStyle) -> Result<(), Error> {
        let mut s = self.lock();
        if let Some(reason) = &s.broken {
            return Err(Error::os("overlay", reason.clone()));
        }
        if !s.visible {
            s.shows += 1;
        }
        s.visible = true;
        s.last_style = Some(style.clone());
        Ok(())
    }

    fn hide(&self) -> Result<(), Error> {
        self.lock().visible = false;
        Ok(())
    }

    fn visible(&self) -> bool {
        self.lock().visible
    }

    fn regions(&self) -> Vec<Rect> {
        Vec::new()
    }

    fn expect_own_escape(&self) {
        self.lock().own_escapes += 1;
    }
}

/// A written word: its gray level, text, confidence and language.
type FakeWord = (u8, String, f32, String);

/// An OCR engine for tests: a word "is written" wherever the gray image has pixels of exactly
/// a registered gray level (paint `[v, v, v]` to get level `v`); its box is their bounding box.
/// A privacy mask paints it black, so a masked word is never read.
#[derive(Debug, Clone, Default)]
pub struct FakeOcr {
    words: Arc<Mutex<Vec<FakeWord>>>,
    reads: Arc<std::sync::atomic::AtomicUsize>,
}

impl FakeOcr {
    /// Pixels of gray `level` read as `text` with `confidence`, in language `eng`.
    pub fn write(&self, level: u8, text: &str, confidence: f32) {
        self.words.lock().unwrap_or_else(|e| e.into_inner()).push((
            level,
            text.to_string(),
            confidence,
            "eng".to_string(),
        ));
    }

    /// How many images were read.
    pub fn reads(&self) -> usize {
        self.reads.load(std::sync::atomic::Ordering::Relaxed)
    }
}

impl crate::ocr::Ocr for FakeOcr {
    fn info(&self) -> crate::ocr::OcrInfo {
        crate::ocr::OcrInfo {
            engine: "fake".to_string(),
            languages: Ok(vec!["eng".to_string()]),
            default_languages: vec!["eng".to_string()],
            fix: None,
        }
    }

    fn recognize(
        &self,
        image: &crate::ocr::GrayImage,
        request: &crate::ocr::OcrRequest,
    ) -> Result<crate::ocr::OcrPage, Error> {
        if let Some(other) = request.languages.iter().find(|l| *l != "eng") {
            return Err(Error::OcrLanguageMissing {
                language: other.clone(),
                installed: vec!["eng".to_string()],
                fix: None,
            });
        }
        self.reads
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let words = self.words.lock().unwrap_or_else(|e| e.into_inner()).clone();
        let mut lines = Vec::new();
        for (level, text, confidence, language) in words {
            let (mut x0, mut y0, mut x1, mut y1) = (u32::MAX, u32::MAX, 0, 0);
            for (i, v) in image.data.iter().enumerate() {
                if *v == level {
                    let (x, y) = (i as u32 % image.width, i as u32 / image.width);
                    x0 = x0.min(x);
                    y0 = y0.min(y);
                    x1 = x1.max(x);
                    y1 = y1.max(y);
                }
            }
            if x0 <= x1 && y0 <= y1 {
                let word = deskpilot_types::OcrWord {
                    text,
                    confidence,
                    bounds: Rect::new(x0 as i32, y0 as i32, x1 - x0 + 1, y1 - y0 + 1),
                    language,
                };
                lines.push(deskpilot_types::OcrLine::from_words(vec![word]));
            }
        }
        Ok(crate::ocr::OcrPage {
            lines,
            engine: "fake".to_string(),
            languages: vec!["eng".to_string()],
            elapsed: std::time::Duration::from_millis(1),
            reused: (0, 1),
        })
    }
}
