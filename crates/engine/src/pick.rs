//! UI context picks (the UI Context Protocol): what a person pointed at — a window, a
//! control, or a region — as typed facts ([`PickFacts`]) that each carry their source and
//! confidence, the screen and the pick's crop as PNG, and one output directory written
//! atomically. The endpoint and the page where the person picks and approves are
//! `deskpilot-picker`'s; the JSON and Markdown an agent reads are rendered by the MCP kit
//! (`kit::pick`); this is the desktop side.
//!
//! Sources: the window from the window system (`x11`, `win32`), a control from the platform's
//! accessibility (`atspi`, `uia`, `msaa`), a region as drawn (`visual`), text from the tree
//! when it has any, else from `ocr` with the reader's confidence. Privacy masks are painted
//! into both images before anything is written, and OCR reads the masked pixels.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use deskpilot_types::{Point, Rect, WindowInfo};
use serde::Serialize;

use crate::coords::ViewGeometry;
use crate::decorate::Decorations;
use crate::pipeline::{self, ImageFormat};
use crate::tree::{Element, TreeRequest};
use crate::{
    capture::CaptureTarget, engine::WindowFilter, error::Error, ocr::OcrRequest, session::Session,
    window::WindowRef,
};

/// What a person picked.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum PickKind {
    Window,
    Control,
    Region,
}

/// A pick: a point (window or control) or a rectangle (region), in physical pixels.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Pick {
    Window(Point),
    Control(Point),
    Region(Rect),
}

/// What is under a point: the topmost window there, and its smallest control holding it.
#[derive(Debug, Clone, Serialize)]
pub struct Hover {
    pub window: Option<WindowInfo>,
    pub control: Option<Element>,
    /// What to outline: the control, else the window.
    pub bounds: Option<Rect>,
    /// `Button "Save"`, `window "Untitled - Mousepad"`.
    pub label: String,
    pub source: String,
}

/// An approved-to-be context: its facts and the two images.
#[derive(Debug, Clone)]
pub struct PickContext {
    pub facts: PickFacts,
    pub screen_png: Vec<u8>,
    pub crop_png: Vec<u8>,
    /// The crop, in physical pixels.
    pub crop: Rect,
}

/// What a pick found, each fact with where it came from.
#[derive(Debug, Clone)]
pub struct PickFacts {
    pub kind: PickKind,
    /// When it was picked (`2026-12-01T20:10:05Z`).
    pub picked_at: String,
    /// The whole desktop, physical pixels.
    pub screen: Rect,
    /// The window picked, or the one under a region's centre.
    pub window: Option<PickedWindow>,
    /// The control picked (a control pick that found one).
    pub control: Option<PickedControl>,
    /// The rectangle picked (a region pick; source `visual`, confidence 1).
    pub region: Option<Rect>,
    /// The text there, from the tree when it has any, else read off the pixels.
    pub text: Option<PickedText>,
}

/// A picked window, as the window system describes it (confidence 1).
#[derive(Debug, Clone, PartialEq)]
pub struct PickedWindow {
    pub info: WindowInfo,
    /// `x11`, `win32`, or `visual` where the platform names none.
    pub source: &'static str,
}

/// A picked control, as the platform's accessibility describes it (confidence 1).
#[derive(Debug, Clone)]
pub struct PickedControl {
    pub element: Element,
    /// Its bounds (the window's frame when the tree gave none).
    pub bounds: Rect,
    /// The states that hold, by name (`disabled`, `focusable`, `focused`, …).
    pub states: Vec<&'static str>,
    /// `atspi`, `uia`, `msaa`, …
    pub source: String,
}

/// Text found at a pick.
#[derive(Debug, Clone, PartialEq)]
pub struct PickedText {
    pub value: String,
    /// The tree's source, or `ocr`.
    pub source: String,
    /// 1 for the tree; the reader's mean confidence (0–1) for OCR.
    pub confidence: f64,
}

/// The names of a pick directory's files.
pub const PICK_FILES: [&str; 4] = ["context.json", "context.md", "screenshot.png", "crop.png"];

/// `atspi-cache` → `atspi`: the platform's accessibility, whichever way it was read.
fn tree_source(source: &str) -> &str {
    source.split('-').next().unwrap_or(source)
}

fn states(e: &Element) -> Vec<&'static str> {
    [
        (!e.enabled, "disabled"),
        (e.focusable, "focusable"),
        (e.focused, "focused"),
        (e.selected, "selected"),
        (e.checked, "checked"),
        (e.expanded, "expanded"),
        (e.editable, "editable"),
    ]
    .into_iter()
    .filter_map(|(on, s)| on.then_some(s))
    .collect()
}

/// The element's descendants (by parent links), itself first.
fn subtree(elements: &[Element], root: usize) -> Vec<&Element> {
    let mut out = vec![&elements[root]];
    let mut i = 0;
    while i < out.len() {
        let parent = out[i].index;
        out.extend(elements.iter().filter(|e| e.parent == Some(parent)));
        i += 1;
    }
    out
}

/// The text of some elements, each distinct piece once, in order.
fn text_of(elements: &[&Element]) -> String {
    let mut seen: Vec<&str> = Vec::new();
    for e in elements {
        for t in [Some(e.name.as_str()), e.value.as_deref()]
            .into_iter()
            .flatten()
        {
            let t = t.trim();
            if !t.is_empty() && !seen.contains(&t) {
                seen.push(t);
            }
        }
    }
    seen.join("\n")
}

/// `2026-12-01T20:10:05Z`.
pub fn utc_stamp(t: SystemTime) -> String {
    let secs = t.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs());
    let (days, rest) = (secs / 86_400, secs % 86_400);
    // Civil date from days since 1970-01-01 (Howard Hinnant's algorithm).
    let z = days as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z",
        rest / 3600,
        rest % 3600 / 60,
        rest % 60
    )
}

impl Session {
    /// Runs `f` with the windows of the processes in `pids` (the picker's own page) out of
    /// the way — minimized, then brought back — so the pixels `f` captures are the desktop's,
    /// not the page's.
    pub fn without_windows_of<R>(&self, pids: &[u32], f: impl FnOnce() -> R) -> R {
        if pids.is_empty() {
            return f();
        }
        let hidden: Vec<WindowInfo> = self
            .list_windows(&WindowFilter::default())
            .unwrap_or_default()
            .into_iter()
            .filter(|w| w.pid.is_some_and(|p| pids.contains(&p)) && !w.state.minimized)
            .collect();
        for w in &hidden {
            let _ = self
                .desktop()
                .window_control
                .window_op(w.id, deskpilot_backend::WindowOp::Minimize);
        }
        // Polled: the window manager unmaps them a moment later.
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(2);
        while std::time::Instant::now() < deadline
            && self
                .list_windows(&WindowFilter::default())
                .is_ok_and(|all| {
                    all.iter()
                        .any(|w| hidden.iter().any(|h| h.id == w.id) && !w.state.minimized)
                })
        {
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        // The windows that were under them redraw on their own time: wait until two looks at
        // the screen agree.
        if !hidden.is_empty()
            && let Ok(status) = self.status()
        {
            let look = || {
                self.desktop()
                    .capture
                    .capture(status.desktop)
                    .ok()
                    .map(|f| crate::signature::signature(&f))
            };
            let mut last = look();
            let deadline = std::time::Instant::now() + std::time::Duration::from_millis(1500);
            while std::time::Instant::now() < deadline {
                std::thread::sleep(std::time::Duration::from_millis(60));
                let now = look();
                if now.is_some() && now == last {
                    break;
                }
                last = now;
            }
        }
        let r = f();
        for w in &hidden {
            let _ = self
                .desktop()
                .window_control
                .window_op(w.id, deskpilot_backend::WindowOp::Activate);
        }
        r
    }

    /// Lets the person pick on the real screen: the windows of `exclude` (the picker's page)
    /// step aside, what is under the pointer is outlined (its control, or its window for
    /// `PickKind::Window`), one click picks it and one drag picks a region. `None`: cancelled
    /// (right click) or `timeout`.
    pub fn pick_on_screen(
        &self,
        kind: PickKind,
        exclude: &[u32],
        timeout: std::time::Duration,
    ) -> Result<Option<Pick>, Error> {
        let screen = self.desktop().screen_pick.clone();
        let gesture = self.without_windows_of(exclude, || {
            let mut outline = |p: Point| -> Option<Rect> {
                let h = self.pick_hover(p, exclude).ok()?;
                match kind {
                    PickKind::Region => None,
                    PickKind::Window => h.window.map(|w| w.frame),
                    PickKind::Control => h.bounds,
                }
            };
            screen.pick_on_screen(&mut outline, timeout)
        })?;
        Ok(gesture.map(|g| match (g, kind) {
            (deskpilot_backend::Gesture::Drag(r), _) => Pick::Region(r),
            (deskpilot_backend::Gesture::Click(p), PickKind::Window) => Pick::Window(p),
            (deskpilot_backend::Gesture::Click(p), _) => Pick::Control(p),
        }))
    }

    /// The topmost window at `p` (windows of the processes in `exclude` — the picker's own
    /// page — are looked through) and its smallest on-screen control holding `p`.
    pub fn pick_hover(&self, p: Point, exclude: &[u32]) -> Result<Hover, Error> {
        self.hover_and_tree(p, exclude).map(|(h, _)| h)
    }

    /// The window's tree, without a screenshot.
    fn tree_of(&self, window: deskpilot_types::WindowId) -> Result<crate::tree::Snapshot, Error> {
        let mut request = TreeRequest::new(WindowRef::Id(window));
        request.include_screenshot = false;
        self.window_state(&request)
    }

    /// [`Session::pick_hover`] and the tree it was read from, for a pick that needs more of it.
    fn hover_and_tree(
        &self,
        p: Point,
        exclude: &[u32],
    ) -> Result<(Hover, Option<crate::tree::Snapshot>), Error> {
        let window = self
            .list_windows(&WindowFilter::default())?
            .into_iter()
            .filter(|w| !w.state.minimized && w.frame.contains(p))
            .filter(|w| w.pid.is_none_or(|pid| !exclude.contains(&pid)))
            .min_by_key(|w| w.z);
        let Some(window) = window else {
            let nothing = Hover {
                window: None,
                control: None,
                bounds: None,
                label: "the desktop".into(),
                source: "visual".into(),
            };
            return Ok((nothing, None));
        };
        let tree = self.tree_of(window.id).ok();
        let control = tree.as_ref().and_then(|t| {
            t.elements
                .iter()
                .filter(|e| e.parent.is_some() && e.onscreen)
                .filter(|e| e.bounds.is_some_and(|b| b.contains(p) && b.width > 0))
                .min_by_key(|e| e.bounds.map_or(u64::MAX, |b| b.area()))
                .cloned()
        });
        let window_source = self.window_source();
        let hover = match control {
            Some(c) => Hover {
                label: format!("{:?} \"{}\"", c.role, c.name),
                bounds: c.bounds,
                source: tree
                    .as_ref()
                    .map_or("visual".into(), |t| tree_source(&t.source).to_string()),
                control: Some(c),
                window: Some(window),
            },
            None => Hover {
                label: format!("window \"{}\"", window.title),
                bounds: Some(window.frame),
                source: window_source.into(),
                control: None,
                window: Some(window),
            },
        };
        Ok((hover, tree))
    }

    fn window_source(&self) -> &'static str {
        match self.desktop().info.platform {
            "windows" => "win32",
            "x11" => "x11",
            _ => "visual",
        }
    }

    /// The screen now, masked, as PNG at its own resolution.
    fn native_png(&self, rect: Rect) -> Result<Vec<u8>, Error> {
        let masks = self.masks_now(rect, None);
        let mut frame = self.desktop().capture.capture(rect)?;
        // The deployment's regions and every password field on screen.
        masks.paint(&mut frame);
        let view = ViewGeometry::new(frame.rect, frame.rect.width, frame.rect.height);
        let mut scratch = Vec::new();
        Ok(pipeline::encode(
            &frame,
            &view,
            ImageFormat::Png,
            &mut scratch,
            &Decorations::default(),
        )?
        .bytes)
    }

    /// The text in `rect` read off the (masked) pixels, and the reader's mean confidence (0–1).
    fn ocr_text(&self, rect: Rect) -> Option<(String, f64)> {
        let mut request = OcrRequest::new(CaptureTarget::Region(rect));
        request.format = Some(ImageFormat::Png);
        let r = self
            .ocr(&request)
            .inspect_err(|e| tracing::warn!("no OCR text for the pick: {e}"))
            .ok()?;
        if r.lines.is_empty() {
            return None;
        }
        let confidence = r
            .lines
            .iter()
            .map(|l| f64::from(l.line.confidence))
            .sum::<f64>()
            / r.lines.len() as f64
            / 100.0;
        let text = r
            .lines
            .iter()
            .map(|l| l.line.text.as_str())
            .collect::<Vec<_>>()
            .join("\n");
        Some((text, (confidence * 100.0).round() / 100.0))
    }

    /// The facts of `pick`, with the screen and the crop; `exclude` as for [`Session::pick_hover`].
    pub fn pick_context(&self, pick: Pick, exclude: &[u32]) -> Result<PickContext, Error> {
        self.without_windows_of(exclude, || self.pick_context_now(pick, exclude))
    }

    fn pick_context_now(&self, pick: Pick, exclude: &[u32]) -> Result<PickContext, Error> {
        let desktop = self.status()?.desktop;
        let screen_png = self.native_png(desktop)?;
        let window_source = self.window_source();
        let picked = |w: &WindowInfo| PickedWindow {
            info: w.clone(),
            source: window_source,
        };
        let ocr = |rect: Rect| {
            self.ocr_text(rect).map(|(value, confidence)| PickedText {
                value,
                source: "ocr".into(),
                confidence,
            })
        };
        let mut facts = PickFacts {
            kind: PickKind::Region,
            picked_at: utc_stamp(SystemTime::now()),
            screen: desktop,
            window: None,
            control: None,
            region: None,
            text: None,
        };
        let crop = match pick {
            Pick::Window(p) | Pick::Control(p) => {
                let (hover, tree) = self.hover_and_tree(p, exclude)?;
                let Some(window) = hover.window.clone() else {
                    return Err(Error::InvalidArgument {
                        message: format!("no window at ({}, {}); pick a region instead", p.x, p.y),
                    });
                };
                facts.window = Some(picked(&window));
                match (pick, &hover.control) {
                    (Pick::Control(_), Some(c)) => {
                        let bounds = c.bounds.unwrap_or(window.frame);
                        // The tree the control was found in (a control implies one).
                        let inside = tree
                            .as_ref()
                            .and_then(|tree| {
                                let i = tree.elements.iter().position(|e| e.token == c.token)?;
                                Some(text_of(&subtree(&tree.elements, i)))
                            })
                            .unwrap_or_default();
                        facts.control = Some(PickedControl {
                            element: c.clone(),
                            bounds,
                            states: states(c),
                            source: hover.source.clone(),
                        });
                        facts.text = if inside.is_empty() {
                            ocr(bounds)
                        } else {
                            Some(PickedText {
                                value: inside,
                                source: hover.source.clone(),
                                confidence: 1.0,
                            })
                        };
                        facts.kind = PickKind::Control;
                        bounds
                    }
                    _ => {
                        facts.text = ocr(window.frame);
                        facts.kind = PickKind::Window;
                        window.frame
                    }
                }
            }
            Pick::Region(r) => {
                let r = r
                    .intersect(&desktop)
                    .ok_or_else(|| Error::RegionOutsideScreen { region: r, desktop })?;
                facts.region = Some(r);
                // The tree's text of the controls wholly inside, else the pixels read.
                let (hover, tree) = self.hover_and_tree(r.center(), exclude)?;
                if let Some(w) = &hover.window {
                    facts.window = Some(picked(w));
                    if let Some(tree) = tree {
                        let inside: Vec<&Element> = tree
                            .elements
                            .iter()
                            .filter(|e| {
                                e.parent.is_some()
                                    && e.bounds.is_some_and(|b| r.intersect(&b) == Some(b))
                            })
                            .collect();
                        let from_tree = text_of(&inside);
                        if !from_tree.is_empty() {
                            facts.text = Some(PickedText {
                                value: from_tree,
                                source: tree_source(&tree.source).to_string(),
                                confidence: 1.0,
                            });
                        }
                    }
                }
                if facts.text.is_none() {
                    facts.text = ocr(r);
                }
                facts.kind = PickKind::Region;
                r
            }
        };
        let crop_png = self.native_png(crop)?;
        Ok(PickContext {
            facts,
            screen_png,
            crop_png,
            crop,
        })
    }
}

/// Writes a pick's four files under `root` — `json` and `markdown` as rendered for an agent,
/// the two images — in a directory that appears whole or not at all (written under a
/// temporary name, synced, then renamed). Returns the directory.
pub fn write_pick(
    root: &Path,
    ctx: &PickContext,
    json: &[u8],
    markdown: &str,
) -> std::io::Result<PathBuf> {
    std::fs::create_dir_all(root)?;
    let stamp = utc_stamp(SystemTime::now()).replace(':', "-");
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    let name = format!("{stamp}-{nanos:09}-{}", json_kind(ctx.facts.kind));
    let tmp = root.join(format!(".tmp-{name}"));
    std::fs::create_dir(&tmp)?;
    let write = |file: &str, bytes: &[u8]| -> std::io::Result<()> {
        let mut f = std::fs::File::create(tmp.join(file))?;
        f.write_all(bytes)?;
        f.sync_all()
    };
    let done = write(PICK_FILES[0], json)
        .and_then(|()| write(PICK_FILES[1], markdown.as_bytes()))
        .and_then(|()| write(PICK_FILES[2], &ctx.screen_png))
        .and_then(|()| write(PICK_FILES[3], &ctx.crop_png));
    if let Err(e) = done {
        let _ = std::fs::remove_dir_all(&tmp);
        return Err(e);
    }
    let dir = root.join(&name);
    std::fs::rename(&tmp, &dir)?;
    if let Ok(d) = std::fs::File::open(root) {
        let _ = d.sync_all();
    }
    Ok(dir)
}

fn json_kind(k: PickKind) -> &'static str {
    match k {
        PickKind::Window => "window",
        PickKind::Control => "control",
        PickKind::Region => "region",
    }
}

/// Removes directories a pick left half-written (a crash between create and rename).
pub fn clean_partial(root: &Path) {
    let Ok(entries) = std::fs::read_dir(root) else {
        return;
    };
    for e in entries.flatten() {
        if e.file_name().to_string_lossy().starts_with(".tmp-") {
            let _ = std::fs::remove_dir_all(e.path());
        }
    }
}

#[cfg(test)]
mod tests {
    use deskpilot_backend::FakeDesktop;
    use deskpilot_backend::fake::FakeWindow;

    use super::*;
    use crate::config::EngineConfig;

    #[test]
    fn stamps_are_utc_civil_dates() {
        let t = UNIX_EPOCH + std::time::Duration::from_secs(1_796_155_805);
        assert_eq!(utc_stamp(t), "2026-12-01T20:10:05Z");
        assert_eq!(utc_stamp(UNIX_EPOCH), "1970-01-01T00:00:00Z");
        let leap = UNIX_EPOCH + std::time::Duration::from_secs(951_782_400);
        assert_eq!(utc_stamp(leap), "2000-02-29T00:00:00Z");
    }

    #[test]
    fn a_window_pick_names_its_window_and_writes_whole_directories() {
        let fake = FakeDesktop::new(800, 600);
        fake.add_window(FakeWindow {
            fill: [0, 200, 0],
            ..FakeWindow::new("editor", Rect::new(100, 100, 300, 200))
        });
        let s = Session::standalone(fake.desktop(), EngineConfig::default());
        let hover = s.pick_hover(Point::new(150, 150), &[]).unwrap();
        assert_eq!(hover.window.as_ref().unwrap().title, "editor");
        assert_eq!(hover.bounds, Some(Rect::new(100, 100, 300, 200)));
        let nothing = s.pick_hover(Point::new(10, 10), &[]).unwrap();
        assert!(nothing.window.is_none());
        // Looked through: the picker's own page.
        let pid = hover.window.as_ref().unwrap().pid.unwrap();
        assert!(
            s.pick_hover(Point::new(150, 150), &[pid])
                .unwrap()
                .window
                .is_none()
        );

        let ctx = s
            .pick_context(Pick::Window(Point::new(150, 150)), &[])
            .unwrap();
        assert_eq!(ctx.facts.kind, PickKind::Window);
        let window = ctx.facts.window.as_ref().unwrap();
        assert_eq!(window.info.title, "editor");
        assert_eq!(window.source, "visual");
        assert!(ctx.facts.control.is_none());
        assert_eq!(ctx.crop, Rect::new(100, 100, 300, 200));

        let root = std::env::temp_dir().join(format!("deskpilot-pick-test-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        std::fs::create_dir_all(root.join(".tmp-left-by-a-crash")).unwrap();
        clean_partial(&root);
        let dir = write_pick(&root, &ctx, br#"{"kind":"window"}"#, "# UI context").unwrap();
        for f in PICK_FILES {
            assert!(dir.join(f).is_file(), "{f}");
        }
        let entries: Vec<String> = std::fs::read_dir(&root)
            .unwrap()
            .flatten()
            .map(|e| e.file_name().to_string_lossy().to_string())
            .collect();
        assert_eq!(entries.len(), 1, "{entries:?}");
        assert!(!entries[0].starts_with(".tmp-"));
        assert_eq!(
            std::fs::read(dir.join("context.json")).unwrap(),
            br#"{"kind":"window"}"#
        );
        assert_eq!(
            std::fs::read_to_string(dir.join("context.md")).unwrap(),
            "# UI context"
        );
        let _ = std::fs::remove_dir_all(&root);
    }

    #[test]
    fn privacy_masks_are_painted_into_both_images() {
        let fake = FakeDesktop::new(400, 300);
        fake.add_window(FakeWindow {
            fill: [0, 200, 0],
            ..FakeWindow::new("secret", Rect::new(0, 0, 400, 300))
        });
        let config = EngineConfig {
            mask_regions: vec![Rect::new(10, 10, 20, 20)],
            ..EngineConfig::default()
        };
        let s = Session::standalone(fake.desktop(), config);
        let ctx = s
            .pick_context(Pick::Region(Rect::new(0, 0, 100, 100)), &[])
            .unwrap();
        let pixel = |png: &[u8], x: usize, y: usize| {
            let d = png::Decoder::new(std::io::Cursor::new(png));
            let mut r = d.read_info().unwrap();
            let mut buf = vec![0; r.output_buffer_size().unwrap()];
            let info = r.next_frame(&mut buf).unwrap();
            let at = (y * info.width as usize + x) * 3;
            [buf[at], buf[at + 1], buf[at + 2]]
        };
        assert_eq!(
            pixel(&ctx.crop_png, 15, 15),
            [0, 0, 0],
            "masked in the crop"
        );
        assert_eq!(pixel(&ctx.crop_png, 50, 50), [0, 200, 0]);
        assert_eq!(
            pixel(&ctx.screen_png, 15, 15),
            [0, 0, 0],
            "masked on the screen"
        );
    }

    #[test]
    fn a_region_outside_the_screen_is_refused() {
        let fake = FakeDesktop::new(800, 600);
        let s = Session::standalone(fake.desktop(), EngineConfig::default());
        let r = s.pick_context(Pick::Region(Rect::new(900, 900, 10, 10)), &[]);
        assert!(matches!(r, Err(Error::RegionOutsideScreen { .. })), "{r:?}");
    }
}
