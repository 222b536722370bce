//! The seam between the engine and the operating system.
//!
//! Each capability is a small trait ([`Screens`], [`Windows`], [`Capture`], [`Pointer`],
//! [`Keyboard`], [`WindowControl`], [`Clipboard`]); tree and overlay traits join them as they
//! are built. A platform backend implements
//! the ones it supports and is bundled into a [`Desktop`] that the engine holds. Nothing here
//! knows about images formats, coordinates of screenshots or MCP: backends speak physical
//! virtual-desktop pixels and raw frames only.
//!
//! [`FakeDesktop`] is a scriptable in-memory desktop (windows + framebuffer) that implements
//! every trait, so engine and surface tests run without a display and without sleeps.
//!
//! Invariant: trait methods are blocking and may be slow (they talk to other processes);
//! callers run them on worker threads, never on the async reactor.

pub mod apps;
mod error;
pub mod fake;
mod frame;
pub mod lnk;
mod ocr;
mod overlay;
mod overlay_process;
mod screen_pick;
mod tree;

use std::sync::Arc;

use deskpilot_types::{Key, Monitor, Point, Rect, WindowInfo};

pub use error::{Error, Link};
pub use fake::FakeDesktop;
pub use frame::{Frame, FrameMut, PixelFormat};
pub use ocr::{GrayImage, NoOcr, Ocr, OcrInfo, OcrPage, OcrRequest};
pub use overlay::{
    Escapes, GuardEvent, GuardListener, NoOverlay, Overlay, OverlayStyle, POINTER_MARK, PointerLook,
};
pub use overlay_process::ProcessOverlay;
pub use screen_pick::{Gesture, NoScreenPick, ScreenPick};
pub use tree::{
    Accessibility, ElementHandle, ElementStates, LiveElement, NoUia, PasswordField, PasswordFields,
    RawElement, RawTree, TreeLimits, TreeNote,
};

/// Monitors and the bounds of the virtual desktop.
pub trait Screens: Send + Sync {
    /// Every active monitor, primary first when the platform says which one is primary.
    fn monitors(&self) -> Result<Vec<Monitor>, Error>;

    /// The bounding box of the whole virtual desktop (may have a negative origin).
    fn desktop_bounds(&self) -> Result<Rect, Error>;
}

/// Top-level window listing.
pub trait Windows: Send + Sync {
    /// Every managed top-level window, topmost first (`z == 0` is on top).
    fn list_windows(&self) -> Result<Vec<WindowInfo>, Error>;

    /// The top-level window that would receive a click at `p`, when the platform can say
    /// (Windows' `WindowFromPoint`, which knows about shaped and click-through windows). `None`
    /// lets the engine decide from the listing's stacking order.
    fn window_at(&self, p: Point) -> Result<Option<deskpilot_types::WindowId>, Error> {
        let _ = p;
        Ok(None)
    }

    /// Whether a window's outer size (the one a page reads as `outerWidth`/`outerHeight`)
    /// counts an invisible resize border below its visible frame, as wide as the ones at its
    /// sides: Windows' frames have one, X11 window managers' do not (the default).
    fn resize_border_below(&self) -> bool {
        false
    }
}

/// Pixel capture.
pub trait Capture: Send + Sync {
    /// Grabs what is on screen inside `rect`, which must lie within
    /// [`Screens::desktop_bounds`]; the engine clips before calling.
    fn capture(&self, rect: Rect) -> Result<Frame, Error>;

    /// Like [`Capture::capture`], filling `buffer` (whose allocation a backend should reuse)
    /// so repeated captures do not pay for fresh pages every time.
    fn capture_into(&self, rect: Rect, buffer: Vec<u8>) -> Result<Frame, Error> {
        drop(buffer);
        self.capture(rect)
    }

    /// Grabs `rect` and lends its pixels to `f` for the length of the call, without a copy where
    /// the platform can (X11 lends its MIT-SHM segment). `buffer` is the caller's reusable
    /// allocation for backends that copy; it is handed back (unused by a backend that lends).
    fn capture_with(
        &self,
        rect: Rect,
        buffer: Vec<u8>,
        f: &mut dyn FnMut(&mut FrameMut<'_>),
    ) -> Result<Vec<u8>, Error> {
        let mut frame = self.capture_into(rect, buffer)?;
        f(&mut frame.view_mut());
        Ok(frame.data)
    }

    /// The part `rect` of `window` as the window itself draws it, even where other windows
    /// cover it (Windows' `PrintWindow`). The engine asks only for covered windows and grabs
    /// the screen when the answer is not [`WindowCapture::Captured`].
    fn capture_window(&self, window: &WindowInfo, rect: Rect) -> Result<WindowCapture, Error> {
        let _ = (window, rect);
        Ok(WindowCapture::Unsupported)
    }

    /// How [`Capture::capture_window`] gets a window's own pixels, as results name it
    /// (`PrintWindow` on Windows, `composite` on X11).
    fn window_capture_method(&self) -> &'static str {
        "PrintWindow"
    }
}

/// What [`Capture::capture_window`] got.
#[derive(Debug)]
pub enum WindowCapture {
    /// The window's own pixels for the asked rectangle.
    Captured(Frame),
    /// The platform call succeeded but drew nothing (one flat colour), as cross-process
    /// `PrintWindow` does under Wine and for some GPU-rendered apps.
    Blank,
    /// This backend cannot capture a single window.
    Unsupported,
}

/// A mouse button (the one type every layer uses).
pub use deskpilot_types::MouseButton as Button;

/// Synthetic pointer input.
pub trait Pointer: Send + Sync {
    /// Where the pointer is now, in physical virtual-desktop pixels.
    fn position(&self) -> Result<Point, Error>;
    /// Moves the pointer; returns once the platform has processed the move.
    fn move_to(&self, p: Point) -> Result<(), Error>;
    /// Presses (`down`) or releases a button at the current position.
    fn button(&self, button: Button, down: bool) -> Result<(), Error>;
    /// Scrolls by whole wheel notches: positive `dy` scrolls down, positive `dx` right.
    fn wheel(&self, dx: i32, dy: i32) -> Result<(), Error>;
}

/// Synthetic keyboard input.
pub trait Keyboard: Send + Sync {
    /// Presses (`down`) or releases one key.
    fn key(&self, key: Key, down: bool) -> Result<(), Error>;
    /// Types `text` exactly (any Unicode, newlines and tabs included), returning once the
    /// platform has processed every event.
    fn type_text(&self, text: &str) -> Result<(), Error>;
}

/// A window-manager operation on one top-level window.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WindowOp {
    /// Raise and give keyboard focus (restoring it when minimized).
    Activate,
    Minimize,
    Maximize,
    /// Undo minimize and maximize.
    Restore,
    /// Ask the window to close, as its close button would (unsaved work may prompt).
    Close,
    /// Place the window's outer frame (decorations included) at this physical rectangle.
    SetFrame(Rect),
}

/// Window-manager requests. Each call only sends the request; the engine polls
/// [`Windows::list_windows`] to see whether it took effect.
pub trait WindowControl: Send + Sync {
    fn window_op(&self, id: deskpilot_types::WindowId, op: WindowOp) -> Result<(), Error>;

    /// Environment variables a launched app needs to appear on this desktop (e.g. `DISPLAY`).
    fn launch_env(&self) -> Vec<(String, String)> {
        Vec::new()
    }

    /// The apps a person could start here (desktop entries, Start-menu shortcuts); none by
    /// default.
    fn installed_apps(&self) -> Result<Vec<apps::InstalledApp>, Error> {
        Ok(Vec::new())
    }
}

/// The system clipboard, plain text only.
pub trait Clipboard: Send + Sync {
    /// The clipboard's text; `None` when it is empty or holds no text.
    fn read_text(&self) -> Result<Option<String>, Error>;
    /// Replaces the clipboard's content with `text`; it stays pasteable while this process runs.
    fn write_text(&self, text: &str) -> Result<(), Error>;
}

/// One `deskpilot doctor` check and its outcome.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Check {
    pub name: &'static str,
    pub ok: bool,
    /// What was found.
    pub detail: String,
    /// What to do when the check failed.
    pub fix: Option<String>,
}

/// What a backend says about itself, for `status` and `doctor`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct BackendInfo {
    /// `"x11"`, `"windows"` or `"fake"`.
    pub platform: &'static str,
    /// The display or session the backend is attached to (`":99"`, `"WinSta0\\Default"`).
    pub display: String,
    /// How captures are taken right now, e.g. `"mit-shm"` or `"getimage"`.
    pub capture_method: String,
    /// The window manager or shell, when known.
    pub window_manager: Option<String>,
}

/// One platform's implementation of every capability, as the engine holds it.
#[derive(Clone)]
pub struct Desktop {
    pub info: BackendInfo,
    pub screens: Arc<dyn Screens>,
    pub windows: Arc<dyn Windows>,
    pub capture: Arc<dyn Capture>,
    pub pointer: Arc<dyn Pointer>,
    pub keyboard: Arc<dyn Keyboard>,
    pub window_control: Arc<dyn WindowControl>,
    pub clipboard: Arc<dyn Clipboard>,
    pub accessibility: Arc<dyn Accessibility>,
    /// The indicator and Esc listener; [`NoOverlay`] until a platform installs one.
    pub overlay: Arc<dyn Overlay>,
    /// The text reader for pixels; [`NoOcr`] until a platform installs one.
    pub ocr: Arc<dyn Ocr>,
    /// Picking on the real screen; [`NoScreenPick`] until a platform installs one.
    pub screen_pick: Arc<dyn ScreenPick>,
}

impl std::fmt::Debug for Desktop {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Desktop")
            .field("info", &self.info)
            .finish_non_exhaustive()
    }
}

impl Desktop {
    /// Bundles one object that implements every capability.
    pub fn from_backend<B>(info: BackendInfo, backend: Arc<B>) -> Self
    where
        B: Screens
            + Windows
            + Capture
            + Pointer
            + Keyboard
            + WindowControl
            + Clipboard
            + Accessibility
            + 'static,
    {
        Desktop {
            info,
            screens: backend.clone(),
            windows: backend.clone(),
            capture: backend.clone(),
            pointer: backend.clone(),
            keyboard: backend.clone(),
            window_control: backend.clone(),
            clipboard: backend.clone(),
            accessibility: backend,
            overlay: Arc::new(NoOverlay {
                reason: "this backend has no overlay".to_string(),
            }),
            ocr: Arc::new(NoOcr {
                reason: "this backend has no OCR engine".to_string(),
            }),
            screen_pick: Arc::new(NoScreenPick {
                reason: "this backend cannot pick on screen; pick in the control window's view"
                    .to_string(),
            }),
        }
    }

    /// The same desktop with `pick` for picking on the real screen.
    pub fn with_screen_pick(mut self, pick: Arc<dyn ScreenPick>) -> Self {
        self.screen_pick = pick;
        self
    }

    /// The same desktop with `ocr` as its text reader.
    pub fn with_ocr(mut self, ocr: Arc<dyn Ocr>) -> Self {
        self.ocr = ocr;
        self
    }

    /// The same desktop with `overlay` as its indicator.
    pub fn with_overlay(mut self, overlay: Arc<dyn Overlay>) -> Self {
        self.overlay = overlay;
        self
    }
}

/// Stands in for every capability when no desktop can be reached, so the server still
/// starts and every tool answers `NO_DISPLAY` with the reason instead of failing the boot.
#[derive(Debug)]
struct Unreachable {
    message: String,
    /// A fresh desktop is on its way (rather than none at all).
    restarting: bool,
}

impl Unreachable {
    fn error(&self) -> Error {
        let message = self.message.clone();
        if self.restarting {
            Error::DesktopRestarting { message }
        } else {
            Error::NoDisplay { message }
        }
    }
}

impl Screens for Unreachable {
    fn monitors(&self) -> Result<Vec<Monitor>, Error> {
        Err(self.error())
    }

    fn desktop_bounds(&self) -> Result<Rect, Error> {
        Err(self.error())
    }
}

impl Windows for Unreachable {
    fn list_windows(&self) -> Result<Vec<WindowInfo>, Error> {
        Err(self.error())
    }
}

impl Capture for Unreachable {
    fn capture(&self, _rect: Rect) -> Result<Frame, Error> {
        Err(self.error())
    }
}

impl Pointer for Unreachable {
    fn position(&self) -> Result<Point, Error> {
        Err(self.error())
    }

    fn move_to(&self, _p: Point) -> Result<(), Error> {
        Err(self.error())
    }

    fn button(&self, _button: Button, _down: bool) -> Result<(), Error> {
        Err(self.error())
    }

    fn wheel(&self, _dx: i32, _dy: i32) -> Result<(), Error> {
        Err(self.error())
    }
}

impl Keyboard for Unreachable {
    fn key(&self, _key: Key, _down: bool) -> Result<(), Error> {
        Err(self.error())
    }

    fn type_text(&self, _text: &str) -> Result<(), Error> {
        Err(self.error())
    }
}

impl WindowControl for Unreachable {
    fn window_op(&self, _id: deskpilot_types::WindowId, _op: WindowOp) -> Result<(), Error> {
        Err(self.error())
    }
}

impl Clipboard for Unreachable {
    fn read_text(&self) -> Result<Option<String>, Error> {
        Err(self.error())
    }

    fn write_text(&self, _text: &str) -> Result<(), Error> {
        Err(self.error())
    }
}

impl Accessibility for Unreachable {
    fn tree(&self, _window: &WindowInfo, _limits: &TreeLimits) -> Result<RawTree, Error> {
        Err(self.error())
    }
}

impl Desktop {
    /// A desktop whose every call fails with [`Error::NoDisplay`] carrying `message`.
    pub fn unreachable(platform: &'static str, message: String) -> Self {
        Desktop::stand_in(platform, message, false)
    }

    /// A stand-in while the desktop is brought up again: every call fails at once with
    /// [`Error::DesktopRestarting`] carrying `message`.
    pub fn restarting(platform: &'static str, message: String) -> Self {
        Desktop::stand_in(platform, message, true)
    }

    fn stand_in(platform: &'static str, message: String, restarting: bool) -> Self {
        let info = BackendInfo {
            platform,
            display: if restarting {
                "restarting"
            } else {
                "unreachable"
            }
            .to_string(),
            capture_method: "none".to_string(),
            window_manager: None,
        };
        Desktop::from_backend(
            info,
            Arc::new(Unreachable {
                message,
                restarting,
            }),
        )
    }
}
