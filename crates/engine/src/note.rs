//! Notes: the facts an observation reports beside its result (a region clipped, a window
//! covered, a tree reused or cut), each a typed value with a default wording.
//!
//! A profile that needs to branch on a fact matches the variant ([`Note::Fallback`],
//! [`Note::TokensKept`], …) and may word it its own way; one that does not renders
//! `to_string()`. Nothing above the engine parses a note's text back. A note serializes as
//! its default wording, so `notes` in structured content stays a list of strings.
//! A backend's remarks about the tree it read come typed from the backend ([`TreeNote`]) and
//! are carried as [`Note::Tree`].

use std::fmt;
use std::time::Duration;

use deskpilot_backend::TreeNote;
use deskpilot_types::{ErrorCode, Rect, WindowId};

use crate::registry::ScreenshotId;

/// Smallest and largest `max_width` a caller may ask for.
pub const MAX_WIDTH_RANGE: (u32, u32) = (64, 8192);

/// A window that covers part of another, as a capture saw it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cover {
    pub id: WindowId,
    pub title: String,
}

/// What a capture shows instead of exactly what was asked for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Fallback {
    /// The window is partly covered; the image is the window's own drawing, got by `method`
    /// (`PrintWindow`, `composite`), without what covers it.
    OwnDrawing {
        covered_by: Vec<Cover>,
        method: &'static str,
    },
    /// The window is partly covered and the platform cannot capture a window alone: a screen
    /// grab that shows what covers it.
    Covered { by: Vec<Cover> },
    /// The window is partly covered and capturing it alone gave a blank image: a screen grab
    /// that shows what covers it.
    Blank { by: Vec<Cover> },
    /// The window is partly covered and capturing it alone failed: a screen grab.
    CaptureFailed { by: Vec<Cover>, error: String },
    /// The window is minimized (or gone) now: its area is shown instead (an `observe` after
    /// a minimize or a close).
    AreaInstead {
        window: WindowId,
        minimized: bool,
        area: Rect,
    },
}

/// How a window was chosen when none was named.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Chosen {
    /// The window of this client's last screenshot ("screenshot") or snapshot ("snapshot").
    LastObserved(&'static str),
    /// The active window; `observed_gone` when the last observed window no longer exists.
    Active { observed_gone: bool },
}

/// Why a large window's tree is nearly empty, and what to do about it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NearlyEmpty {
    /// Its process listens for DevTools on this port.
    DevTools { port: u16 },
    /// A Chromium or Electron app without accessibility enabled.
    Chromium,
    /// Anything else.
    Plain,
}

/// One fact beside an observation. `Display` is the default wording.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Note {
    /// A region was clipped to the desktop.
    RegionClipped { region: Rect, clipped: Rect },
    /// Only the part of the window on screen is shown.
    PartlyOffScreen { shown: Rect },
    /// The capture shows something other than exactly what was asked for.
    Fallback(Fallback),
    /// `max_width` was outside [`MAX_WIDTH_RANGE`].
    MaxWidthClamped { requested: u32, used: u32 },
    /// A zoom: which image rectangle of which screenshot it shows.
    Zoomed {
        of: ScreenshotId,
        region: [f64; 4],
        physical: Rect,
    },
    /// The zoom could not be shown closer than its source within the image budget.
    ZoomNotCloser { scale: f64 },
    /// No window was named; this one was used.
    WindowChosen {
        id: WindowId,
        label: String,
        by: Chosen,
    },
    /// A snapshot came without its screenshot.
    NoScreenshot { code: ErrorCode, error: String },
    /// No fresh tree could be read; the window's previous snapshot is shown instead.
    PreviousTree {
        error: String,
        age: Duration,
        snapshot: u64,
    },
    /// No tree could be read at all.
    NoTree { error: String },
    /// The window's structure is unchanged: same snapshot id, its element tokens still work.
    TokensKept { snapshot: u64 },
    /// The tree was cut by the element budget.
    TreeCut {
        elements: usize,
        max_elements: usize,
        max_depth: u32,
    },
    /// A large window exposes almost no accessible elements.
    NearlyEmpty(NearlyEmpty),
    /// The tree text was cut at `max_chars`.
    TextTruncated {
        max_chars: usize,
        shown: usize,
        candidates: usize,
    },
    /// `query` projected the tree.
    Query {
        query: String,
        matching: usize,
        candidates: usize,
        total: usize,
    },
    /// `find_elements` found no close match in the tree, and OCR could not read the window.
    OcrUnreadable { code: ErrorCode, error: String },
    /// `find_elements` found no close match in the tree and read the window's pixels too.
    OcrSearched {
        found: usize,
        lines: usize,
        screenshot: ScreenshotId,
    },
    /// `wait_for` text looked in the accessibility tree only: OCR is unavailable.
    TreeOnly { error: String },
    /// A page element is larger than the viewport: its visible part is shown.
    LargerThanViewport,
    /// A page image is not on the desktop (headless browser, or its window not found): its
    /// x/y are for reading only.
    PageOffDesktop { headless: bool },
    /// A backend's remark about the tree it read (a time limit ran out, coordinates were
    /// converted, the tree came from MSAA).
    Tree(TreeNote),
}

impl fmt::Display for Cover {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "\"{}\" ({})", self.title, self.id)
    }
}

/// `"A" (0x1), "B" (0x2)`.
fn covers(by: &[Cover]) -> String {
    by.iter()
        .map(Cover::to_string)
        .collect::<Vec<_>>()
        .join(", ")
}

impl fmt::Display for Fallback {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Fallback::OwnDrawing { covered_by, method } => write!(
                f,
                "the window is partly covered by {}; this image is the window's own drawing \
                 ({method}), without them",
                covers(covered_by)
            ),
            Fallback::Blank { by } => write!(
                f,
                "the window is partly covered by {}; capturing the window alone gave a blank \
                 image, so this is a screen grab that shows them: focus it first to see all of it",
                covers(by)
            ),
            Fallback::Covered { by } => write!(
                f,
                "the window is partly covered by {}; focus it first to see all of it",
                covers(by)
            ),
            Fallback::CaptureFailed { by, error } => write!(
                f,
                "the window is partly covered by {} and capturing it alone failed ({error}), \
                 so this is a screen grab that shows them: focus it first to see all of it",
                covers(by)
            ),
            Fallback::AreaInstead {
                window,
                minimized,
                area,
            } => write!(
                f,
                "window {window} is {}; showing its area {area} instead",
                if *minimized { "minimized" } else { "gone" }
            ),
        }
    }
}

impl fmt::Display for Note {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Note::RegionClipped { region, clipped } => {
                write!(f, "region {region} was clipped to the desktop: {clipped}")
            }
            Note::PartlyOffScreen { shown } => {
                write!(f, "only the part of the window on screen is shown: {shown}")
            }
            Note::Fallback(fallback) => fallback.fmt(f),
            Note::MaxWidthClamped { requested, used } => {
                let (lo, hi) = MAX_WIDTH_RANGE;
                write!(
                    f,
                    "max_width {requested} is outside {lo}..={hi}; used {used}"
                )
            }
            Note::Zoomed {
                of,
                region: [x, y, w, h],
                physical,
            } => write!(
                f,
                "zoom of screenshot {of} at image ({x}, {y}, {w}x{h}) = physical {physical}"
            ),
            Note::ZoomNotCloser { scale } => write!(
                f,
                "the region is too large to show closer than the source within the image budget (scale {scale:.3})"
            ),
            Note::WindowChosen {
                id,
                label,
                by: Chosen::LastObserved(how),
            } => write!(
                f,
                "no window given: used {id} {label}, the window of your last {how}"
            ),
            Note::WindowChosen {
                id,
                label,
                by: Chosen::Active { observed_gone },
            } => write!(
                f,
                "no window given: used the active window {id} {label}{}",
                if *observed_gone {
                    " (the window of your last screenshot or snapshot is gone)"
                } else {
                    ""
                }
            ),
            Note::NoScreenshot { code, error } => write!(f, "no screenshot: {code} ({error})"),
            Note::PreviousTree {
                error,
                age,
                snapshot,
            } => write!(
                f,
                "no fresh accessibility tree: {error}. Shown instead: the tree read {:.1} s ago (snapshot s{snapshot}); it may be out of date, and acting on it waits for the app. The screenshot is current.",
                age.as_secs_f64()
            ),
            Note::NoTree { error } => write!(
                f,
                "no accessibility tree: {error}. Work from the screenshot (click by coordinates)."
            ),
            Note::TokensKept { snapshot } => write!(
                f,
                "the window's structure is unchanged since snapshot s{snapshot}: same id, its tokens still work (names, values, states and bounds are fresh)"
            ),
            Note::TreeCut {
                elements,
                max_elements,
                max_depth,
            } => write!(
                f,
                "the tree was cut at {elements} elements (max_elements {max_elements}, max_depth {max_depth}); raise them or use query"
            ),
            Note::NearlyEmpty(NearlyEmpty::DevTools { port }) => write!(
                f,
                "this large window exposes almost no accessible elements, but its process listens for DevTools on port {port}: browser_attach (port {port}, or this window_id) drives its pages by ref"
            ),
            Note::NearlyEmpty(NearlyEmpty::Chromium) => f.write_str(
                "this large window exposes almost no accessible elements: Chromium and Electron apps build their tree only with accessibility enabled. For web content, restart it with --remote-debugging-port=9222 (Electron apps too) and browser_attach, or browser_launch a fresh Chromium; else work from the screenshot and ocr",
            ),
            Note::NearlyEmpty(NearlyEmpty::Plain) => f.write_str(
                "this large window exposes almost no accessible elements — work from the screenshot (and ocr)",
            ),
            Note::TextTruncated {
                max_chars,
                shown,
                candidates,
            } => write!(
                f,
                "tree text truncated at max_chars {max_chars}: showing {shown} of {candidates} elements; narrow it with query or raise max_chars"
            ),
            Note::Query {
                query,
                matching,
                candidates,
                total,
            } => write!(
                f,
                "query \"{query}\": {matching} matching elements shown with their ancestors ({candidates} of {total} elements); indexes are the full tree's"
            ),
            Note::OcrUnreadable { code, error } => write!(
                f,
                "the tree has no close match and OCR could not read the window: {code} ({error})"
            ),
            Note::OcrSearched {
                found,
                lines,
                screenshot,
            } => write!(
                f,
                "the accessibility tree has no close match, so the window's pixels were read too: OCR \
                 found {found} matching lines of {lines} (source ocr, screenshot {screenshot}); click one at its image \
                 point with that screenshot_id"
            ),
            Note::TreeOnly { error } => {
                write!(f, "looked in the accessibility tree only: {error}")
            }
            Note::LargerThanViewport => {
                f.write_str("the element is larger than the viewport; its visible part is shown")
            }
            Note::PageOffDesktop { headless: true } => f.write_str(
                "the browser is headless: this image is not on the desktop, so its x/y are for reading only; act with browser_click by ref",
            ),
            Note::PageOffDesktop { headless: false } => f.write_str(
                "the page's window was not found on the desktop (another tab in front, minimized, or elsewhere): this image's x/y are for reading only; act with browser_click by ref",
            ),
            Note::Tree(note) => note.fmt(f),
        }
    }
}

impl serde::Serialize for Note {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

impl From<Note> for String {
    fn from(note: Note) -> Self {
        note.to_string()
    }
}

/// Clamps a requested `max_width` to [`MAX_WIDTH_RANGE`], noting it when it moved.
pub(crate) fn clamp_max_width<N: From<Note>>(requested: u32, notes: &mut Vec<N>) -> u32 {
    let (lo, hi) = MAX_WIDTH_RANGE;
    let used = requested.clamp(lo, hi);
    if used != requested {
        notes.push(Note::MaxWidthClamped { requested, used }.into());
    }
    used
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_note_serializes_as_its_wording() {
        let n = Note::TokensKept { snapshot: 3 };
        assert_eq!(
            serde_json::to_value(vec![n.clone()]).unwrap(),
            serde_json::json!([n.to_string()])
        );
        let mut notes: Vec<String> = Vec::new();
        assert_eq!(clamp_max_width(10, &mut notes), 64);
        assert_eq!(notes, ["max_width 10 is outside 64..=8192; used 64"]);
    }

    #[test]
    fn typed_notes_keep_their_wording() {
        assert_eq!(
            Note::TreeOnly {
                error: "OCR_UNAVAILABLE".to_string()
            }
            .to_string(),
            "looked in the accessibility tree only: OCR_UNAVAILABLE"
        );
        assert_eq!(
            Note::PageOffDesktop { headless: true }.to_string(),
            "the browser is headless: this image is not on the desktop, so its x/y are for reading \
             only; act with browser_click by ref"
        );
        assert_eq!(
            Note::Tree(TreeNote::MenuBarUnreadable).to_string(),
            TreeNote::MenuBarUnreadable.to_string()
        );
        assert_eq!(
            serde_json::to_value(Note::LargerThanViewport).unwrap(),
            "the element is larger than the viewport; its visible part is shown"
        );
    }
}
