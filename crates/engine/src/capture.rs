//! Captures of one session: a target (screen, monitor, window, region) resolved to pixels,
//! masked, scaled, encoded and registered under a new screenshot id, its reference signature
//! refreshed for `compare`; what it shows instead of the target is a typed [`Fallback`] note.
//! The registry lookups (`screenshot_record`, `last_screenshot`) live here too.
//!
//! Privacy masks ([`Masks`]) are the configured `mask_regions` and every password field showing
//! in the capture. The password fields are asked of the backend
//! ([`Accessibility::password_fields`]: one cheap question per application, never a tree walk)
//! on a worker thread while the pixels are grabbed, and waited for at most
//! [`PASSWORD_LOOKUP`]: a hung application costs a capture that long, never the capture
//! itself. Invariant: every path that hands out pixels (screenshots, zooms, OCR, perception,
//! memory's hashes) paints the same masks before anything reads the frame.
//!
//! [`Accessibility::password_fields`]: deskpilot_backend::Accessibility::password_fields

use std::sync::mpsc;
use std::time::{Duration, Instant};

use deskpilot_backend::{Frame, PasswordFields, WindowCapture};
use deskpilot_types::{Rect, WindowId, WindowInfo};

use crate::coords::ViewGeometry;
use crate::decorate::{Decorations, Marker};
use crate::ids::IdKind;
use crate::note::{Cover, Fallback, Note, clamp_max_width};
use crate::pipeline::{self, EncodedImage, ImageFormat};
use crate::registry::{Pin, RefKey, Reference, ScreenshotId, ScreenshotRecord};
use crate::{error::Error, session::Session};

/// What to capture.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CaptureTarget {
    /// The whole virtual desktop.
    Screen,
    /// One monitor by index.
    Monitor(u32),
    /// One window's frame as it appears on screen.
    Window(WindowId),
    /// A physical rectangle; clipped to the desktop.
    Region(Rect),
}

/// A screenshot request after argument parsing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ScreenshotRequest {
    pub target: CaptureTarget,
    /// Overrides the configured `max_width` for this call.
    pub max_width: Option<u32>,
    /// Overrides the configured format for this call.
    pub format: Option<ImageFormat>,
}

/// A screenshot as handed to a surface.
#[derive(Debug, Clone)]
pub struct Screenshot {
    pub id: ScreenshotId,
    pub view: ViewGeometry,
    pub image: EncodedImage,
    /// The window the screenshot is pinned to.
    pub window: Option<WindowInfo>,
    /// How many privacy masks were painted.
    pub masked_regions: usize,
    /// Things the caller should know (clamped arguments, clipped regions, covered windows).
    pub notes: Vec<Note>,
    pub capture_time: Duration,
    /// Change against the previous capture of the same target, when there was one.
    pub change: Option<Change>,
}

impl Screenshot {
    /// What this capture shows instead of exactly what was asked for, when anything.
    pub fn fallback(&self) -> Option<&Fallback> {
        self.notes.iter().find_map(|n| match n {
            Note::Fallback(f) => Some(f),
            _ => None,
        })
    }
}

/// How a capture differs from the previous capture of the same target.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Change {
    /// More than a caret's worth of the signature's cells moved.
    pub changed: bool,
    /// Share of cells that moved.
    pub ratio: f64,
    /// The screenshot the comparison was made against.
    pub since: ScreenshotId,
}

/// A capture target resolved to pixels.
pub(crate) struct Resolved {
    pub rect: Rect,
    pub window: Option<WindowInfo>,
    pub drawn: Option<Frame>,
    pub notes: Vec<Note>,
}

/// One capture, encoded and registered.
pub(crate) struct Captured {
    pub id: ScreenshotId,
    pub view: ViewGeometry,
    pub image: EncodedImage,
    pub masked_regions: usize,
    pub capture_time: Duration,
    pub change: Option<Change>,
}

impl Captured {
    /// The screenshot a surface is handed: this capture with the window it is pinned to and
    /// the notes gathered on the way.
    pub(crate) fn into_screenshot<N: Into<Note>>(
        self,
        window: Option<WindowInfo>,
        notes: Vec<N>,
    ) -> Screenshot {
        let notes = notes.into_iter().map(Into::into).collect();
        Screenshot {
            id: self.id,
            view: self.view,
            image: self.image,
            window,
            masked_regions: self.masked_regions,
            notes,
            capture_time: self.capture_time,
            change: self.change,
        }
    }
}

/// The longest a capture waits for the password fields on screen.
pub(crate) const PASSWORD_LOOKUP: Duration = Duration::from_millis(150);
/// What the backend is given of [`PASSWORD_LOOKUP`]: the rest is the worker's own slack.
const PASSWORD_LOOKUP_BACKEND: Duration = Duration::from_millis(120);

/// What one capture paints over, in physical pixels.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Masks {
    /// The configured `mask_regions`.
    pub regions: Vec<Rect>,
    /// Each password field's visible parts (a field partly under another window is the parts
    /// of it that show).
    pub fields: Vec<Vec<Rect>>,
    /// Windows whose password fields could not be looked for in time.
    pub unanswered: Vec<WindowId>,
}

impl Masks {
    /// Paints every mask that touches the frame black; returns how many did (a password field
    /// counts once, however many parts of it show).
    pub(crate) fn paint<D: AsMut<[u8]>>(&self, frame: &mut Frame<D>) -> usize {
        let fields: usize = self
            .fields
            .iter()
            .map(|parts| usize::from(pipeline::apply_masks(frame, parts) > 0))
            .sum();
        pipeline::apply_masks(frame, &self.regions) + fields
    }
}

/// The password fields of `windows` (topmost first) as they show in `rect`: each clipped to its
/// window and, unless the frame is `own` window's own drawing, cut by the windows above it.
fn visible_fields(
    found: &PasswordFields,
    windows: &[WindowInfo],
    rect: Rect,
    own: Option<WindowId>,
) -> Vec<Vec<Rect>> {
    found
        .fields
        .iter()
        .filter_map(|f| {
            let w = windows.iter().find(|w| w.id == f.window)?;
            let mut parts = vec![f.bounds.intersect(&w.frame)?];
            if own.is_none() {
                for above in windows
                    .iter()
                    .filter(|o| o.z < w.z && o.state.visible && !o.state.minimized)
                {
                    parts = parts
                        .into_iter()
                        .flat_map(|p| subtract(p, above.frame))
                        .collect();
                }
            }
            let parts: Vec<Rect> = parts
                .into_iter()
                .filter_map(|p| p.intersect(&rect))
                .collect();
            (!parts.is_empty()).then_some(parts)
        })
        .collect()
}

/// `a` without `b`: up to four rectangles (above, below, left and right of the overlap).
fn subtract(a: Rect, b: Rect) -> Vec<Rect> {
    let Some(i) = a.intersect(&b) else {
        return vec![a];
    };
    let mut out = Vec::new();
    let span = |from: i64, to: i64| (to - from) as u32;
    if i.y > a.y {
        out.push(Rect::new(a.x, a.y, a.width, span(a.y.into(), i.y.into())));
    }
    if i.bottom() < a.bottom() {
        out.push(Rect::new(
            a.x,
            i.bottom() as i32,
            a.width,
            span(i.bottom(), a.bottom()),
        ));
    }
    if i.x > a.x {
        out.push(Rect::new(a.x, i.y, span(a.x.into(), i.x.into()), i.height));
    }
    if i.right() < a.right() {
        out.push(Rect::new(
            i.right() as i32,
            i.y,
            span(i.right(), a.right()),
            i.height,
        ));
    }
    out
}

/// A look for the password fields of one capture, running beside the grab.
pub(crate) struct PendingMasks {
    regions: Vec<Rect>,
    answer: Option<mpsc::Receiver<Masks>>,
    started: Instant,
}

impl PendingMasks {
    /// The masks, once the look has answered or [`PASSWORD_LOOKUP`] after it started; a look
    /// that did not answer in time leaves the configured regions alone (and says so in the log).
    pub(crate) fn wait(self) -> Masks {
        let Some(answer) = self.answer else {
            return Masks {
                regions: self.regions,
                ..Masks::default()
            };
        };
        let left = PASSWORD_LOOKUP.saturating_sub(self.started.elapsed());
        match answer.recv_timeout(left) {
            Ok(masks) => masks,
            Err(_) => {
                tracing::warn!(
                    after_ms = PASSWORD_LOOKUP.as_millis() as u64,
                    "password fields: the look did not answer in time; nothing but the \
                     configured regions is masked in this capture"
                );
                Masks {
                    regions: self.regions,
                    ..Masks::default()
                }
            }
        }
    }
}

impl Session {
    /// Starts looking for the password fields that show in `rect` (a capture about to be
    /// taken; `own`: the frame is that window's own drawing, not the screen) on a worker
    /// thread; [`PendingMasks::wait`] takes the answer.
    pub(crate) fn masks_for(&self, rect: Rect, own: Option<WindowId>) -> PendingMasks {
        let regions = self.config.mask_regions.clone();
        let started = Instant::now();
        let desktop = self.desktop();
        let (tx, rx) = mpsc::sync_channel(1);
        let configured = regions.clone();
        let look = move || {
            let deadline = started + PASSWORD_LOOKUP_BACKEND;
            let spawned = started.elapsed();
            let windows = match desktop.windows.list_windows() {
                Ok(ws) => ws,
                Err(e) => {
                    tracing::debug!(error = %e, "password fields: no window list");
                    Vec::new()
                }
            };
            let shown: Vec<WindowInfo> = windows
                .iter()
                .filter(|w| match own {
                    Some(id) => w.id == id,
                    None => {
                        w.state.visible && !w.state.minimized && w.frame.intersect(&rect).is_some()
                    }
                })
                .cloned()
                .collect();
            let listed = started.elapsed();
            let found = if shown.is_empty() {
                PasswordFields::default()
            } else {
                match desktop.accessibility.password_fields(&shown, deadline) {
                    Ok(found) => found,
                    Err(e) => {
                        tracing::debug!(error = %e, "password fields: the backend could not look");
                        PasswordFields::default()
                    }
                }
            };
            let fields = visible_fields(&found, &windows, rect, own);
            tracing::debug!(
                windows = shown.len(),
                fields = fields.len(),
                unanswered = found.unanswered.len(),
                spawn_ms = spawned.as_secs_f64() * 1e3,
                list_ms = (listed - spawned).as_secs_f64() * 1e3,
                lookup_ms = started.elapsed().as_secs_f64() * 1e3,
                "password fields"
            );
            let _ = tx.send(Masks {
                regions: configured,
                fields,
                unanswered: found.unanswered,
            });
        };
        let answer = std::thread::Builder::new()
            .name("deskpilot-password-fields".into())
            .spawn(look)
            .map_err(|e| tracing::warn!(error = %e, "password fields: no worker thread"))
            .ok()
            .map(|_| rx);
        PendingMasks {
            regions,
            answer,
            started,
        }
    }

    /// The masks of a capture of `rect` (`own`: that window's own drawing), waited for.
    pub(crate) fn masks_now(&self, rect: Rect, own: Option<WindowId>) -> Masks {
        self.masks_for(rect, own).wait()
    }
}

impl Session {
    /// Captures, masks, scales and encodes; records the geometry under a new screenshot id.
    pub fn screenshot(&self, request: &ScreenshotRequest) -> Result<Screenshot, Error> {
        self.screenshot_decorated(request, &|_| Decorations::default())
    }

    /// A screenshot with numbered pins drawn on it; `pins` maps the view to pins in image space.
    pub fn screenshot_with_pins(
        &self,
        request: &ScreenshotRequest,
        pins: &dyn Fn(&ViewGeometry) -> Vec<Marker>,
    ) -> Result<Screenshot, Error> {
        self.screenshot_decorated(request, &|view| Decorations {
            pins: pins(view),
            ..Decorations::default()
        })
    }

    /// A screenshot with decorations drawn on it; `decorations` maps the view to what to draw
    /// in image space. They change only the pixels: geometry, registration and the reference
    /// signature are those of a plain screenshot.
    pub fn screenshot_decorated(
        &self,
        request: &ScreenshotRequest,
        decorations: &dyn Fn(&ViewGeometry) -> Decorations,
    ) -> Result<Screenshot, Error> {
        self.screenshot_fitted(request, decorations, None)
    }

    /// A screenshot whose longest edge is at most `edge` image pixels, whatever the configured
    /// width and pixel budget (computer-use-mcp's rule: `scale` = image / physical pixels, the
    /// same on both axes, never above 1).
    pub fn screenshot_longest_edge(
        &self,
        request: &ScreenshotRequest,
        edge: u32,
    ) -> Result<Screenshot, Error> {
        if edge == 0 {
            return Err(Error::InvalidArgument {
                message: "the longest edge of an image must be at least 1 pixel".to_string(),
            });
        }
        self.screenshot_fitted(request, &|_| Decorations::default(), Some(edge))
    }

    fn screenshot_fitted(
        &self,
        request: &ScreenshotRequest,
        decorations: &dyn Fn(&ViewGeometry) -> Decorations,
        edge: Option<u32>,
    ) -> Result<Screenshot, Error> {
        let Resolved {
            rect,
            window,
            drawn,
            mut notes,
        } = self.resolve_target(request.target)?;
        let mut budget = self.config.budget;
        if let Some(requested) = request.max_width {
            budget.max_width = clamp_max_width(requested, &mut notes);
        }
        if let Some(edge) = edge {
            budget = crate::coords::ImageBudget::longest_edge(rect, edge);
        }
        let pin = window.as_ref().map(Pin::of);
        let format = request.format.unwrap_or(self.config.format);
        // Memory hashes a window's own pixels: on screen uncovered, or its own drawing.
        let own_pixels = notes
            .iter()
            .all(|n| !matches!(n, Note::Fallback(f) if !matches!(f, Fallback::OwnDrawing { .. })));
        if let Some(w) = &window {
            self.note_window(w);
        }
        let hash = window.as_ref().filter(|_| own_pixels);
        let mut remember = |frame: &deskpilot_backend::FrameMut<'_>| {
            if let Some(w) = hash {
                self.remember_hash(w, frame, rect);
            }
        };
        let c = self.capture_view(
            rect,
            drawn,
            |r| ViewGeometry::fit(r, budget),
            pin,
            format,
            decorations,
            Some(&mut remember),
        )?;
        Ok(c.into_screenshot(window, notes))
    }

    /// Where a capture of `target` comes from: its rectangle (clipped to the desktop), the
    /// window it is pinned to, the window's own drawing when it is covered and the backend can
    /// capture it alone, and notes about all that.
    pub(crate) fn resolve_target(&self, target: CaptureTarget) -> Result<Resolved, Error> {
        let mut notes = Vec::new();
        let desktop = self.desktop().screens.desktop_bounds()?;
        let mut window = None;
        // The window's own drawing, when it is covered and the backend can capture it alone.
        let mut drawn = None;
        let rect = match target {
            CaptureTarget::Screen => desktop,
            CaptureTarget::Monitor(index) => {
                let monitors = self.desktop().screens.monitors()?;
                let Some(m) = monitors.iter().find(|m| m.index == index) else {
                    return Err(Error::InvalidArgument {
                        message: format!(
                            "no monitor {index}; monitors are {}",
                            monitors
                                .iter()
                                .map(|m| format!("{} ({})", m.index, m.rect))
                                .collect::<Vec<_>>()
                                .join(", ")
                        ),
                    });
                };
                m.rect
            }
            CaptureTarget::Region(region) => {
                if region.is_empty() {
                    return Err(Error::InvalidArgument {
                        message: format!(
                            "region {region} is empty: width and height must be at least 1"
                        ),
                    });
                }
                let clipped = region
                    .intersect(&desktop)
                    .ok_or(Error::RegionOutsideScreen { region, desktop })?;
                if clipped != region {
                    notes.push(Note::RegionClipped { region, clipped });
                }
                clipped
            }
            CaptureTarget::Window(id) => {
                let windows = self.desktop().windows.list_windows()?;
                let w = windows
                    .iter()
                    .find(|w| w.id == id)
                    .ok_or(Error::WindowNotFound(id))?;
                if w.state.minimized {
                    return Err(Error::WindowMinimized {
                        id,
                        title: w.title.clone(),
                    });
                }
                let on_screen = w.frame.intersect(&desktop).filter(|_| w.state.visible);
                let Some(clipped) = on_screen else {
                    return Err(Error::WindowNotVisible {
                        id,
                        title: w.title.clone(),
                    });
                };
                if clipped != w.frame {
                    notes.push(Note::PartlyOffScreen { shown: clipped });
                }
                let by: Vec<Cover> = windows
                    .iter()
                    .filter(|o| {
                        o.z < w.z && o.state.visible && o.frame.intersect(&clipped).is_some()
                    })
                    .map(|o| Cover {
                        id: o.id,
                        title: o.title.clone(),
                    })
                    .collect();
                if !by.is_empty() {
                    let own = self.desktop().capture.capture_window(w, clipped);
                    notes.push(Note::Fallback(match own {
                        Ok(WindowCapture::Captured(frame)) => {
                            drawn = Some(frame);
                            Fallback::OwnDrawing {
                                covered_by: by,
                                method: self.desktop().capture.window_capture_method(),
                            }
                        }
                        Ok(WindowCapture::Blank) => Fallback::Blank { by },
                        Ok(WindowCapture::Unsupported) => Fallback::Covered { by },
                        Err(e) => Fallback::CaptureFailed {
                            by,
                            error: e.to_string(),
                        },
                    }));
                }
                window = Some(w.clone());
                clipped
            }
        };

        Ok(Resolved {
            rect,
            window,
            drawn,
            notes,
        })
    }

    /// Captures `rect`, masks, scales to `geometry(rect)`, decorates, encodes and registers it;
    /// the undecorated, masked frame becomes its target's reference signature.
    ///
    /// `inspect` sees the masked frame before it is scaled (memory's dHash, perception's
    /// pixel statistics).
    #[allow(clippy::too_many_arguments)] // independent inputs of the one capture path
    pub(crate) fn capture_view(
        &self,
        rect: Rect,
        drawn: Option<Frame>,
        geometry: impl FnOnce(Rect) -> ViewGeometry,
        pin: Option<Pin>,
        format: ImageFormat,
        decorations: &dyn Fn(&ViewGeometry) -> Decorations,
        mut inspect: Option<&mut dyn FnMut(&deskpilot_backend::FrameMut<'_>)>,
    ) -> Result<Captured, Error> {
        if self.config.safety.overlay == crate::safety::OverlayMode::Always {
            self.arm(false);
        }
        let started = Instant::now();
        let mut pool = std::mem::take(&mut *self.buffers.lock().unwrap_or_else(|e| e.into_inner()));
        let view = geometry(rect);
        let mut scaled = std::mem::take(&mut pool.scaled);
        let mut done = None;
        // Looked for while the pixels are grabbed; a window's own drawing has its fields alone.
        let own = drawn.as_ref().and(pin.map(|p| p.window));
        let mut masks = Some(self.masks_for(rect, own));
        // How long the grabbed frame waited for the password fields: what they add to a capture.
        let mut masks_wait = Duration::ZERO;
        // Masks, signature, scaling and encoding run on the frame where the backend lends it
        // (X11: the shared-memory segment itself), so a full screen is never copied whole.
        let mut process = |frame: &mut deskpilot_backend::FrameMut<'_>| {
            let capture_time = started.elapsed();
            let waiting = Instant::now();
            let masks = masks.take().map(PendingMasks::wait).unwrap_or_default();
            masks_wait = waiting.elapsed();
            let masked_regions = masks.paint(frame);
            if let Some(inspect) = inspect.as_mut() {
                inspect(frame);
            }
            let signature = crate::signature::signature(frame);
            let image = pipeline::encode(frame, &view, format, &mut scaled, &decorations(&view));
            done = Some((capture_time, masked_regions, signature, image));
        };
        let lent = match drawn {
            Some(mut frame) => {
                process(&mut frame.view_mut());
                Ok(Vec::new())
            }
            None => self.desktop().capture.capture_with(
                rect,
                std::mem::take(&mut pool.frame),
                &mut process,
            ),
        };
        pool.scaled = scaled;
        let lent = lent.map(|buffer| pool.frame = buffer);
        *self.buffers.lock().unwrap_or_else(|e| e.into_inner()) = pool;
        lent?;
        let Some((capture_time, masked_regions, signature, image)) = done else {
            return Err(Error::Internal {
                message: "the backend returned without lending the frame".to_string(),
            });
        };
        let image = image?;
        let id = self.ids.issue(IdKind::Screenshot, self.id());
        self.shots_now().insert(id, view, pin);
        self.aim_keys(crate::registry::KeyTarget::Screenshot(id));
        if let Some(pin) = pin {
            self.observe_window(pin.window, "screenshot");
        }
        let key = match pin {
            Some(pin) => RefKey::Window(pin.window),
            None => RefKey::Area(view.capture),
        };
        let overlay = self.overlay_regions();
        let previous = self.references_now().insert(
            key,
            Reference {
                id,
                rect: view.capture,
                signature: signature.clone(),
            },
        );
        let change = previous.filter(|old| old.rect == view.capture).map(|old| {
            let d = crate::signature::difference(&old.signature, &signature, &overlay);
            Change {
                changed: d.changed,
                ratio: d.ratio,
                since: old.id,
            }
        });
        tracing::debug!(
            id,
            capture_ms = capture_time.as_secs_f64() * 1e3,
            masks_wait_ms = masks_wait.as_secs_f64() * 1e3,
            resize_ms = image.resize_time.as_secs_f64() * 1e3,
            encode_ms = image.encode_time.as_secs_f64() * 1e3,
            bytes = image.bytes.len(),
            "screenshot"
        );
        Ok(Captured {
            id,
            view,
            image,
            masked_regions,
            capture_time,
            change,
        })
    }

    /// A remembered screenshot, or `UnknownScreenshot`.
    pub fn screenshot_record(&self, id: ScreenshotId) -> Result<ScreenshotRecord, Error> {
        let record = self.shots_now().get(id).cloned();
        record.ok_or_else(|| {
            if self.foreign(IdKind::Screenshot, id) {
                Error::ForeignReference {
                    what: format!("screenshot {id}"),
                }
            } else {
                Error::UnknownScreenshot(id)
            }
        })
    }

    /// The last screenshot this session took.
    pub fn last_screenshot(&self) -> Option<ScreenshotRecord> {
        self.shots_now().last().cloned()
    }
}

#[cfg(test)]
mod tests {
    use deskpilot_backend::FakeDesktop;
    use deskpilot_backend::fake::FakeWindow;
    use deskpilot_types::{ErrorCode, Point, WindowState};

    use super::*;
    use crate::{config::EngineConfig, engine::WindowFilter};

    fn engine(fake: &FakeDesktop, config: EngineConfig) -> Session {
        Session::standalone(fake.desktop(), config)
    }

    fn req(target: CaptureTarget) -> ScreenshotRequest {
        ScreenshotRequest {
            target,
            max_width: None,
            format: Some(ImageFormat::Png),
        }
    }

    fn decode_png(bytes: &[u8]) -> (u32, u32, Vec<u8>) {
        let decoder = png::Decoder::new(std::io::Cursor::new(bytes));
        let mut reader = decoder.read_info().unwrap();
        let mut buf = vec![0; reader.output_buffer_size().unwrap()];
        let info = reader.next_frame(&mut buf).unwrap();
        (info.width, info.height, buf)
    }

    #[test]
    fn a_replaced_desktop_forgets_what_was_issued_on_the_old_one() {
        let fake = FakeDesktop::new(640, 480);
        let session = engine(&fake, EngineConfig::default());
        let shot = session.screenshot(&req(CaptureTarget::Screen)).unwrap();
        assert!(session.screenshot_record(shot.id).is_ok());
        let stand_in = deskpilot_backend::Desktop::restarting("fake", "test".into());
        session.engine().replace_desktop(stand_in);
        let e = session.screenshot(&req(CaptureTarget::Screen)).unwrap_err();
        assert_eq!(e.code(), ErrorCode::DesktopRestarting, "{e}");
        session
            .engine()
            .replace_desktop(FakeDesktop::new(640, 480).desktop());
        assert_eq!(
            session.screenshot_record(shot.id).unwrap_err().code(),
            ErrorCode::UnknownScreenshot,
            "an id of the old desktop is not taken for the new one's"
        );
        assert!(session.last_screenshot().is_none());
        assert!(session.screenshot(&req(CaptureTarget::Screen)).is_ok());
        assert_eq!(session.engine().desktop_generation(), 2);
    }

    #[test]
    fn window_screenshot_shows_the_window_and_maps_back() {
        let fake = FakeDesktop::new(1920, 1080);
        let id = fake.add_window(FakeWindow {
            fill: [0, 255, 0],
            ..FakeWindow::new("editor", Rect::new(100, 100, 400, 300))
        });
        let e = engine(&fake, EngineConfig::default());
        let shot = e.screenshot(&req(CaptureTarget::Window(id))).unwrap();
        assert_eq!(shot.view.capture, Rect::new(100, 100, 400, 300));
        let (w, h, px) = decode_png(&shot.image.bytes);
        assert_eq!((w, h), (400, 300));
        let i = ((150 * w + 200) * 3) as usize;
        assert_eq!(&px[i..i + 3], &[0, 255, 0]);
        assert_eq!(
            shot.view.image_to_physical(0.0, 0.0).unwrap(),
            Point::new(100, 100)
        );
        assert_eq!(
            e.screenshot_record(shot.id).unwrap().window,
            Some(Pin {
                window: id,
                pid: Some(4242),
                frame: Rect::new(100, 100, 400, 300)
            })
        );
    }

    #[test]
    fn a_covered_window_is_shown_as_it_draws_itself_or_the_screen_with_a_note() {
        let fake = FakeDesktop::new(800, 600);
        let below = fake.add_window(FakeWindow {
            fill: [0, 255, 0],
            ..FakeWindow::new("below", Rect::new(0, 0, 400, 300))
        });
        let above = fake.add_window(FakeWindow {
            fill: [255, 0, 0],
            ..FakeWindow::new("above", Rect::new(200, 0, 400, 300))
        });
        let e = engine(&fake, EngineConfig::default());
        let pixel = |shot: &Screenshot, x: u32| {
            let (w, _, px) = decode_png(&shot.image.bytes);
            let i = ((50 * w + x) * 3) as usize;
            [px[i], px[i + 1], px[i + 2]]
        };
        let by = vec![Cover {
            id: above,
            title: "above".to_string(),
        }];
        // No window capture on this platform: the screen, covering window included.
        let shot = e.screenshot(&req(CaptureTarget::Window(below))).unwrap();
        assert_eq!(pixel(&shot, 300), [255, 0, 0]);
        assert_eq!(shot.fallback(), Some(&Fallback::Covered { by: by.clone() }));
        assert!(shot.notes[0].to_string().contains("focus it first"));
        // A blank answer: still the screen, and the fallback says why.
        fake.set_own_drawing(below, None);
        let shot = e.screenshot(&req(CaptureTarget::Window(below))).unwrap();
        assert_eq!(pixel(&shot, 300), [255, 0, 0]);
        assert_eq!(shot.fallback(), Some(&Fallback::Blank { by: by.clone() }));
        assert!(shot.notes[0].to_string().contains("blank image"));
        // The window's own drawing, without what covers it.
        fake.set_own_drawing(below, Some([0, 0, 255]));
        let shot = e.screenshot(&req(CaptureTarget::Window(below))).unwrap();
        assert_eq!(pixel(&shot, 300), [0, 0, 255]);
        assert_eq!(shot.view.capture, Rect::new(0, 0, 400, 300));
        assert_eq!(
            shot.fallback(),
            Some(&Fallback::OwnDrawing {
                covered_by: by.clone(),
                method: "PrintWindow"
            })
        );
        assert!(shot.notes[0].to_string().contains("PrintWindow"));
        // Capturing it alone fails: the screen, and the error is kept.
        fake.fail_own_drawing(below);
        let shot = e.screenshot(&req(CaptureTarget::Window(below))).unwrap();
        assert_eq!(pixel(&shot, 300), [255, 0, 0]);
        match shot.fallback() {
            Some(Fallback::CaptureFailed { by: b, error }) => {
                assert_eq!(b, &by);
                assert!(error.contains("did not finish"), "{error}");
            }
            other => panic!("{other:?}"),
        }
        // An uncovered window is never captured alone.
        let alone = fake.add_window(FakeWindow {
            fill: [9, 9, 9],
            ..FakeWindow::new("alone", Rect::new(0, 400, 100, 100))
        });
        fake.set_own_drawing(alone, Some([0, 0, 255]));
        let shot = e.screenshot(&req(CaptureTarget::Window(alone))).unwrap();
        assert!(shot.notes.is_empty(), "{:?}", shot.notes);
        assert_eq!(shot.fallback(), None);
        assert_eq!(pixel(&shot, 50), [9, 9, 9]);
    }

    #[test]
    fn masks_apply_to_every_capture_and_are_counted() {
        let fake = FakeDesktop::new(200, 100);
        fake.paint(Rect::new(0, 0, 200, 100), [255, 255, 255]);
        let config = EngineConfig {
            mask_regions: vec![Rect::new(0, 0, 10, 10)],
            ..EngineConfig::default()
        };
        let e = engine(&fake, config);
        let shot = e.screenshot(&req(CaptureTarget::Screen)).unwrap();
        assert_eq!(shot.masked_regions, 1);
        let (_, _, px) = decode_png(&shot.image.bytes);
        assert_eq!(&px[..3], &[0, 0, 0]);
        assert_eq!(&px[30..33], &[255, 255, 255]);
    }

    /// A GTK password dialog at (100, 100) whose field (200, 180, 200x30) shows the mask
    /// characters of what was typed, in grey level 77 (which the fake OCR reads as the text).
    fn password_dialog(fake: &FakeDesktop) -> (WindowId, Rect) {
        use deskpilot_backend::fake::{element, tree};
        use deskpilot_types::Role;
        let field = Rect::new(200, 180, 200, 30);
        let id = fake.add_window(FakeWindow {
            fill: [255, 255, 255],
            ..FakeWindow::new("Password", Rect::new(100, 100, 400, 200))
        });
        fake.paint(field, [77, 77, 77]);
        fake.ocr().write(77, "hunter2hunter", 95.0);
        fake.set_tree(
            id,
            tree([
                element(Role::Dialog, "Password").bounds(Rect::new(100, 100, 400, 200)),
                element(Role::Edit, "Password")
                    .child_of(0, 1)
                    .bounds(field)
                    .password("hunter2hunter"),
            ]),
        );
        (id, field)
    }

    /// The RGB pixel at physical `(x, y)` of a 1:1 PNG screenshot.
    fn rgb(shot: &Screenshot, x: i32, y: i32) -> [u8; 3] {
        let (w, _, px) = decode_png(&shot.image.bytes);
        let (x, y) = (
            (x - shot.view.capture.x) as u32,
            (y - shot.view.capture.y) as u32,
        );
        let i = ((y * w + x) * 3) as usize;
        [px[i], px[i + 1], px[i + 2]]
    }

    /// Regression (issue 39): a screenshot showed a password dialog's field, mask characters
    /// and all, with `masked_regions: 0`.
    #[test]
    fn password_fields_are_painted_over_in_every_capture_and_counted() {
        let fake = FakeDesktop::new(800, 600);
        let (id, field) = password_dialog(&fake);
        let e = engine(&fake, EngineConfig::default());
        let reads = fake.tree_reads();
        for target in [CaptureTarget::Screen, CaptureTarget::Window(id)] {
            let shot = e.screenshot(&req(target)).unwrap();
            assert_eq!(shot.masked_regions, 1, "{target:?}");
            // The whole field is one solid box; the dialog around it is untouched.
            for y in field.y..field.y + field.height as i32 {
                for x in field.x..field.x + field.width as i32 {
                    assert_eq!(rgb(&shot, x, y), [0, 0, 0], "({x}, {y}) of {target:?}");
                }
            }
            assert_eq!(rgb(&shot, 150, 150), [255, 255, 255]);
        }
        assert_eq!(fake.tree_reads(), reads, "a capture reads no tree");
        // OCR never sees it, nor does a zoom.
        let read = e
            .ocr(&crate::ocr::OcrRequest::new(CaptureTarget::Window(id)))
            .unwrap();
        assert!(read.lines.is_empty(), "{:?}", read.lines);
        let z = e
            .zoom(&crate::zoom::ZoomRequest {
                of: None,
                // Of the window screenshot OCR registered: the dialog's 400x200.
                region: [0.0, 0.0, 400.0, 200.0],
                scale: 1.0,
                max_width: None,
                format: Some(ImageFormat::Png),
            })
            .unwrap();
        assert_eq!(z.masked_regions, 1);
        assert_eq!(rgb(&z, 300, 195), [0, 0, 0]);
        // Configured regions still count on their own.
        let e = engine(
            &fake,
            EngineConfig {
                mask_regions: vec![Rect::new(0, 0, 10, 10)],
                ..EngineConfig::default()
            },
        );
        assert_eq!(
            e.screenshot(&req(CaptureTarget::Screen))
                .unwrap()
                .masked_regions,
            2
        );
    }

    #[test]
    fn a_password_field_under_another_window_is_painted_only_where_it_shows() {
        let fake = FakeDesktop::new(800, 600);
        let (id, field) = password_dialog(&fake);
        // A window over the right half of the field.
        let cover = fake.add_window(FakeWindow {
            fill: [0, 128, 255],
            ..FakeWindow::new("cover", Rect::new(300, 50, 300, 300))
        });
        let e = engine(&fake, EngineConfig::default());
        let shot = e.screenshot(&req(CaptureTarget::Screen)).unwrap();
        assert_eq!(shot.masked_regions, 1);
        assert_eq!(rgb(&shot, 250, 195), [0, 0, 0]);
        assert_eq!(rgb(&shot, 350, 195), [0, 128, 255], "the cover shows");
        // The dialog's own drawing shows all of its field: all of it is painted.
        fake.set_own_drawing(id, Some([255, 255, 255]));
        let shot = e.screenshot(&req(CaptureTarget::Window(id))).unwrap();
        assert!(matches!(shot.fallback(), Some(Fallback::OwnDrawing { .. })));
        assert_eq!(shot.masked_regions, 1);
        assert_eq!(rgb(&shot, 350, 195), [0, 0, 0]);
        assert_eq!(rgb(&shot, field.x - 5, 195), [255, 255, 255]);
        // Hidden entirely: nothing to paint.
        fake.move_window(cover, Rect::new(0, 0, 800, 600));
        let shot = e.screenshot(&req(CaptureTarget::Screen)).unwrap();
        assert_eq!(shot.masked_regions, 0);
        assert_eq!(rgb(&shot, 300, 195), [0, 128, 255]);
    }

    #[test]
    fn a_password_look_that_hangs_or_fails_never_holds_up_or_fails_a_capture() {
        let fake = FakeDesktop::new(800, 600);
        password_dialog(&fake);
        let e = engine(&fake, EngineConfig::default());
        fake.hang_password_fields(true);
        let started = Instant::now();
        let shot = e.screenshot(&req(CaptureTarget::Screen)).unwrap();
        let took = started.elapsed();
        assert!(
            took < PASSWORD_LOOKUP + Duration::from_millis(500),
            "{took:?}"
        );
        assert_eq!(shot.masked_regions, 0);
        fake.hang_password_fields(false);
        fake.lack("password_fields");
        let shot = e.screenshot(&req(CaptureTarget::Screen)).unwrap();
        assert_eq!(shot.masked_regions, 0);
    }

    #[test]
    fn subtracting_a_rectangle_leaves_the_parts_around_it() {
        let a = Rect::new(0, 0, 10, 10);
        let area = |parts: &[Rect]| parts.iter().map(Rect::area).sum::<u64>();
        assert_eq!(subtract(a, Rect::new(20, 20, 5, 5)), vec![a]);
        assert!(subtract(a, Rect::new(-5, -5, 30, 30)).is_empty());
        let ring = subtract(a, Rect::new(3, 3, 4, 4));
        assert_eq!((ring.len(), area(&ring)), (4, 100 - 16));
        let half = subtract(a, Rect::new(5, -1, 10, 20));
        assert_eq!(half, vec![Rect::new(0, 0, 5, 10)]);
        for p in &ring {
            assert!(p.intersect(&Rect::new(3, 3, 4, 4)).is_none(), "{p:?}");
        }
    }

    #[test]
    fn bad_targets_get_their_codes() {
        let fake =
            FakeDesktop::with_monitors(&[Rect::new(0, 0, 800, 600), Rect::new(-800, 0, 800, 600)]);
        let id = fake.add_window(FakeWindow::new("min", Rect::new(10, 10, 100, 100)));
        fake.set_state(
            id,
            WindowState {
                minimized: true,
                ..WindowState::default()
            },
        );
        let e = engine(&fake, EngineConfig::default());
        let code = |t| e.screenshot(&req(t)).unwrap_err().code();
        assert_eq!(
            code(CaptureTarget::Window(WindowId(1))),
            ErrorCode::WindowNotFound
        );
        assert_eq!(code(CaptureTarget::Window(id)), ErrorCode::WindowMinimized);
        assert_eq!(
            code(CaptureTarget::Region(Rect::new(5000, 0, 10, 10))),
            ErrorCode::RegionOutsideScreen
        );
        assert_eq!(
            code(CaptureTarget::Region(Rect::new(0, 0, 0, 10))),
            ErrorCode::InvalidArgument
        );
        assert_eq!(code(CaptureTarget::Monitor(7)), ErrorCode::InvalidArgument);
        let left = e.screenshot(&req(CaptureTarget::Monitor(1))).unwrap();
        assert_eq!(left.view.capture, Rect::new(-800, 0, 800, 600));
        let clipped = e
            .screenshot(&req(CaptureTarget::Region(Rect::new(700, 500, 200, 200))))
            .unwrap();
        assert_eq!(clipped.view.capture, Rect::new(700, 500, 100, 100));
        assert_eq!(
            clipped.notes,
            [Note::RegionClipped {
                region: Rect::new(700, 500, 200, 200),
                clipped: Rect::new(700, 500, 100, 100)
            }]
        );
        assert!(clipped.notes[0].to_string().contains("clipped"));
    }

    #[test]
    fn max_width_is_clamped_and_said() {
        let fake = FakeDesktop::new(1920, 1080);
        let e = engine(&fake, EngineConfig::default());
        let shot = e
            .screenshot(&ScreenshotRequest {
                target: CaptureTarget::Screen,
                max_width: Some(10),
                format: None,
            })
            .unwrap();
        assert_eq!(shot.view.width, 64);
        assert!(
            shot.notes.contains(&Note::MaxWidthClamped {
                requested: 10,
                used: 64
            }),
            "{:?}",
            shot.notes
        );
    }

    #[test]
    fn covered_window_is_noted_and_filter_matches_title_or_process() {
        let fake = FakeDesktop::new(1000, 800);
        let below = fake.add_window(FakeWindow::new("Below", Rect::new(0, 0, 400, 400)));
        fake.add_window(FakeWindow {
            process: "overlapper".into(),
            ..FakeWindow::new("Above", Rect::new(200, 200, 400, 400))
        });
        let e = engine(&fake, EngineConfig::default());
        let shot = e.screenshot(&req(CaptureTarget::Window(below))).unwrap();
        assert!(
            shot.notes
                .iter()
                .any(|n| n.to_string().contains("\"Above\"")),
            "{:?}",
            shot.notes
        );
        let found = e
            .list_windows(&WindowFilter {
                text: "OVERLAP".into(),
            })
            .unwrap();
        assert_eq!(
            found.iter().map(|w| w.title.as_str()).collect::<Vec<_>>(),
            ["Above"]
        );
        assert_eq!(e.status().unwrap().active_window.unwrap().title, "Above");
    }
}
