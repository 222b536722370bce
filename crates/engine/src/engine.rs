//! `Engine`: the operations surfaces call, built from backend capabilities.

use std::sync::Mutex;
use std::time::{Duration, Instant};

use deskpilot_backend::{BackendInfo, Desktop, Frame, WindowCapture};
use deskpilot_types::{Monitor, Rect, WindowId, WindowInfo};

use crate::Error;
use crate::Session;
use crate::coords::{ImageBudget, ViewGeometry};
use crate::decorate::{Decorations, Pin};
use crate::note::{Cover, Fallback, Note};
use crate::pipeline::{self, EncodedImage, ImageFormat};
use crate::registry::{ScreenshotId, ScreenshotRecord};
use crate::safety::{GuardStatus, SafetyConfig};
use crate::session::IdKind;

/// Deployment settings the engine applies to every call.
#[derive(Debug, Clone, PartialEq)]
pub struct EngineConfig {
    /// Default image budget.
    pub budget: ImageBudget,
    /// Default encoding.
    pub format: ImageFormat,
    /// Physical rectangles painted black in every capture. Set by the deployment, never by a tool argument.
    pub mask_regions: Vec<Rect>,
    /// Blocklist, dry run and policy switches for mutating actions.
    pub safety: SafetyConfig,
    /// The screen outline screenshots can carry (`uiSummary`).
    pub outline: crate::OutlineConfig,
    /// The app-skill library and its hint line (`skills`, `skillsDir`, `skillsHint`).
    pub skills: crate::SkillsSettings,
    /// `hitTest`: what a pointer action does with a covered point when the call does not say.
    pub hit_test: crate::HitTestMode,
    /// `coordinates: physical`: x/y are screen pixels when the call does not say.
    pub physical_coordinates: bool,
    /// `requestTimeoutMs`: the longest a desktop call may take before the surface gives up
    /// (`None`: the profile's default).
    pub request_timeout: Option<Duration>,
    /// `screenshotTimeoutMs`: the same for captures.
    pub screenshot_timeout: Option<Duration>,
    /// How screenshots reach the client (`screenshot.inline`, `screenshot.saveToDisk`).
    pub images: ImageDelivery,
}

/// How a profile hands screenshots to its client.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ImageDelivery {
    /// The client takes image blocks (`screenshot.inline`, default true).
    pub inline: bool,
    /// Where the client takes no image blocks, write the bytes to a per-user temporary
    /// directory and say where (`screenshot.saveToDisk`, default true; seed 004's `savedPath`).
    pub save_to_disk: bool,
}

impl Default for ImageDelivery {
    fn default() -> Self {
        ImageDelivery {
            inline: true,
            save_to_disk: true,
        }
    }
}

impl Default for EngineConfig {
    fn default() -> Self {
        EngineConfig {
            budget: ImageBudget::default(),
            format: ImageFormat::Jpeg { quality: 80 },
            mask_regions: Vec::new(),
            safety: SafetyConfig::default(),
            outline: crate::OutlineConfig::default(),
            skills: crate::SkillsSettings::default(),
            hit_test: crate::HitTestMode::Fail,
            physical_coordinates: false,
            request_timeout: None,
            screenshot_timeout: None,
            images: ImageDelivery::default(),
        }
    }
}

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

/// The newest signature of one capture target.
#[derive(Debug)]
pub(crate) struct Reference {
    id: ScreenshotId,
    rect: Rect,
    signature: crate::signature::Signature,
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

/// What a capture's reference signature is kept under: its window, or its rectangle.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum RefKey {
    Window(WindowId),
    Area(Rect),
}

/// A zoom request after argument parsing.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ZoomRequest {
    /// The screenshot the region was read from; the last one when `None`.
    pub of: Option<ScreenshotId>,
    /// `[x, y, width, height]` in that screenshot's image pixels.
    pub region: [f64; 4],
    /// Image pixels per physical pixel wanted (1 = native, up to 4).
    pub scale: f64,
    pub max_width: Option<u32>,
    pub format: Option<ImageFormat>,
}

/// Filter for `list_windows`: case-insensitive substrings.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct WindowFilter {
    /// Matches the title or the process name.
    pub text: String,
}

/// What `status` reports.
#[derive(Debug, Clone)]
pub struct StatusReport {
    pub backend: BackendInfo,
    pub monitors: Vec<Monitor>,
    pub desktop: Rect,
    pub window_count: usize,
    pub active_window: Option<WindowInfo>,
    pub last_screenshot: Option<ScreenshotRecord>,
    pub mask_regions: usize,
    /// The deployment's gates for mutating actions.
    pub safety: SafetyConfig,
    /// The pointer in physical pixels, when the platform reports it.
    pub cursor: Option<deskpilot_types::Point>,
    /// Kill switch, overlay and the count of mutating actions.
    pub guard: GuardStatus,
}

pub(crate) use crate::note::clamp_max_width;

/// The platform-neutral core. Cheap to share behind an `Arc`; every method blocks.
#[derive(Debug)]
pub struct Engine {
    pub(crate) desktop: Desktop,
    config: EngineConfig,
    buffers: Mutex<Buffers>,
    pub(crate) guard: std::sync::Arc<crate::safety::Guard>,
    /// Screenshot and snapshot ids, unique in the process, and who was issued them.
    pub(crate) ids: crate::session::Ids,

    /// App skills: built-ins and the user layer.
    pub(crate) skills: deskpilot_skills::Library,
}

/// Pixel buffers kept between screenshots, so a full-screen capture reuses its pages instead
/// of faulting in ~10 MB of fresh memory every call. Concurrent screenshots simply find the
/// pool empty and allocate.
#[derive(Debug, Default)]
struct Buffers {
    frame: Vec<u8>,
    scaled: Vec<u8>,
}

impl Engine {
    pub fn new(desktop: Desktop, config: EngineConfig) -> Self {
        let guard = std::sync::Arc::new(crate::safety::Guard::default());
        guard.listen(&*desktop.overlay);
        let skills =
            deskpilot_skills::Library::new(&config.skills.library, &|k| std::env::var(k).ok());
        Engine {
            guard,
            skills,
            desktop,
            config,
            buffers: Mutex::new(Buffers::default()),
            ids: Default::default(),
        }
    }

    /// The environment a program started on this desktop needs (its display, bus, …).
    pub fn launch_env(&self) -> Vec<(String, String)> {
        self.desktop.window_control.launch_env()
    }

    pub fn config(&self) -> &EngineConfig {
        &self.config
    }

    /// What the indicator paints now, for frame comparisons to leave out: its fixed regions
    /// and, while a pointer mark follows the pointer, the mark's square around the pointer.
    pub(crate) fn overlay_regions(&self) -> Vec<Rect> {
        let overlay = &self.desktop.overlay;
        let mut regions = overlay.regions();
        if let Some(side) = overlay.pointer_mark()
            && let Ok(p) = self.desktop.pointer.position()
        {
            let half = (side / 2) as i32;
            regions.push(Rect::new(p.x - half, p.y - half, side, side));
        }
        regions
    }

    /// Windows topmost first, narrowed by `filter`.
    pub fn list_windows(&self, filter: &WindowFilter) -> Result<Vec<WindowInfo>, Error> {
        let mut windows = self.desktop.windows.list_windows()?;
        let needle = filter.text.trim().to_lowercase();
        if !needle.is_empty() {
            windows.retain(|w| {
                w.title.to_lowercase().contains(&needle)
                    || w.process
                        .as_deref()
                        .is_some_and(|p| p.to_lowercase().contains(&needle))
                    || w.class.to_lowercase().contains(&needle)
            });
        }
        Ok(windows)
    }

    /// One window by id.
    pub fn window(&self, id: WindowId) -> Result<WindowInfo, Error> {
        self.desktop
            .windows
            .list_windows()?
            .into_iter()
            .find(|w| w.id == id)
            .ok_or(Error::WindowNotFound(id))
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
        pins: &dyn Fn(&ViewGeometry) -> Vec<Pin>,
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
        let pin = window.as_ref().map(|w: &WindowInfo| (w.id, w.pid, w.frame));
        let format = request.format.unwrap_or(self.config.format);
        let c = self.capture_view(
            rect,
            drawn,
            |r| ViewGeometry::fit(r, budget),
            pin,
            format,
            decorations,
        )?;
        Ok(c.into_screenshot(window, notes))
    }

    /// Where a capture of `target` comes from: its rectangle (clipped to the desktop), the
    /// window it is pinned to, the window's own drawing when it is covered and the backend can
    /// capture it alone, and notes about all that.
    pub(crate) fn resolve_target(&self, target: CaptureTarget) -> Result<Resolved, Error> {
        let mut notes = Vec::new();
        let desktop = self.desktop.screens.desktop_bounds()?;
        let mut window = None;
        // The window's own drawing, when it is covered and the backend can capture it alone.
        let mut drawn = None;
        let rect = match target {
            CaptureTarget::Screen => desktop,
            CaptureTarget::Monitor(index) => {
                let monitors = self.desktop.screens.monitors()?;
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
                let windows = self.desktop.windows.list_windows()?;
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
                    let own = self.desktop.capture.capture_window(w, clipped);
                    notes.push(Note::Fallback(match own {
                        Ok(WindowCapture::Captured(frame)) => {
                            drawn = Some(frame);
                            Fallback::OwnDrawing { covered_by: by }
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
    pub(crate) fn capture_view(
        &self,
        rect: Rect,
        drawn: Option<Frame>,
        geometry: impl FnOnce(Rect) -> ViewGeometry,
        pin: Option<(WindowId, Option<u32>, Rect)>,
        format: ImageFormat,
        decorations: &dyn Fn(&ViewGeometry) -> Decorations,
    ) -> Result<Captured, Error> {
        if self.config.safety.overlay == crate::safety::OverlayMode::Always {
            self.arm(false);
        }
        let started = Instant::now();
        let mut pool = std::mem::take(&mut *self.buffers.lock().unwrap_or_else(|e| e.into_inner()));
        let view = geometry(rect);
        let mut scaled = std::mem::take(&mut pool.scaled);
        let mut done = None;
        // Masks, signature, scaling and encoding run on the frame where the backend lends it
        // (X11: the shared-memory segment itself), so a full screen is never copied whole.
        let mut process = |frame: &mut deskpilot_backend::FrameMut<'_>| {
            let capture_time = started.elapsed();
            let masked_regions = pipeline::apply_masks(frame, &self.config.mask_regions);
            let signature = crate::signature::signature(frame);
            let image = pipeline::encode(frame, &view, format, &mut scaled, &decorations(&view));
            done = Some((capture_time, masked_regions, signature, image));
        };
        let lent = match drawn {
            Some(mut frame) => {
                process(&mut frame.view_mut());
                Ok(Vec::new())
            }
            None => self.desktop.capture.capture_with(
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
        self.shots
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(id, view, pin);
        if let Some((window, _, _)) = pin {
            self.observe_window(window, "screenshot");
        }
        let key = match pin {
            Some((window, _, _)) => RefKey::Window(window),
            None => RefKey::Area(view.capture),
        };
        let overlay = self.overlay_regions();
        let previous = self
            .references
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(
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

    /// A closer look at part of a screenshot: the physical pixels behind an image-space
    /// `region` of screenshot `of` (the last one when `None`), captured now at native
    /// resolution times `scale` (1–4, within the image budget). The result is a screenshot of
    /// its own, pinned to the same window as its source, so points read off it map back.
    pub fn zoom(&self, request: &ZoomRequest) -> Result<Screenshot, Error> {
        let source = match request.of {
            Some(id) => self.screenshot_record(id)?,
            None => self
                .shots
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .last()
                .cloned()
                .ok_or(Error::NoReferenceScreenshot)?,
        };
        let [x, y, w, h] = request.region;
        let rect = source.view.image_rect_to_physical(x, y, w, h)?;
        if !(1.0..=4.0).contains(&request.scale) {
            return Err(Error::InvalidArgument {
                message: format!("scale {} must be between 1 and 4", request.scale),
            });
        }
        let windows = self.desktop.windows.list_windows()?;
        let window = crate::pointer::recheck_pin(&windows, source.window)?;
        let mut notes = vec![Note::Zoomed {
            of: source.id,
            region: request.region,
            physical: rect,
        }];
        let mut budget = self.config.budget;
        if let Some(requested) = request.max_width {
            budget.max_width = clamp_max_width(requested, &mut notes);
        }
        let scale = request.scale;
        let geometry = |r: Rect| {
            let wanted_w = (r.width as f64 * scale).round();
            let wanted_h = (r.height as f64 * scale).round();
            let by_width = budget.max_width as f64 / wanted_w;
            let by_pixels = (budget.max_pixels as f64 / (wanted_w * wanted_h)).sqrt();
            let fit = by_width.min(by_pixels).min(1.0);
            ViewGeometry::new(
                r,
                ((wanted_w * fit).floor() as u32).max(1),
                ((wanted_h * fit).floor() as u32).max(1),
            )
        };
        let format = request.format.unwrap_or(self.config.format);
        let c = self.capture_view(rect, None, geometry, source.window, format, &|_| {
            Decorations::default()
        })?;
        let view = c.view;
        if view.scale < source.view.scale {
            notes.push(Note::ZoomNotCloser { scale: view.scale });
        }
        Ok(c.into_screenshot(window, notes))
    }

    /// A remembered screenshot, or `UnknownScreenshot`.
    pub fn screenshot_record(&self, id: ScreenshotId) -> Result<ScreenshotRecord, Error> {
        let record = self
            .shots
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(id)
            .cloned();
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
        self.shots
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .last()
            .cloned()
    }

    /// Backend, monitors, windows and the last screenshot.
    pub fn status(&self) -> Result<StatusReport, Error> {
        let monitors = self.desktop.screens.monitors()?;
        let desktop = self.desktop.screens.desktop_bounds()?;
        let windows = self.desktop.windows.list_windows()?;
        let last_screenshot = self
            .shots
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .last()
            .cloned();
        Ok(StatusReport {
            backend: self.desktop.info.clone(),
            monitors,
            desktop,
            window_count: windows.len(),
            active_window: windows.iter().find(|w| w.state.active).cloned(),
            last_screenshot,
            mask_regions: self.config.mask_regions.len(),
            safety: self.config.safety.clone(),
            cursor: self.desktop.pointer.position().ok(),
            guard: GuardStatus {
                approver: self.approver().is_some(),
                ..self.guard_status()
            },
        })
    }
}

#[cfg(test)]
mod tests {
    use deskpilot_backend::FakeDesktop;
    use deskpilot_backend::fake::FakeWindow;
    use deskpilot_types::{ErrorCode, Point, WindowState};

    use super::*;

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
            Some((id, Some(4242), Rect::new(100, 100, 400, 300)))
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
                covered_by: by.clone()
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

#[cfg(test)]
mod zoom_tests {
    use deskpilot_backend::FakeDesktop;
    use deskpilot_types::{ErrorCode, Point};

    use super::*;
    use crate::{CoordinateSpace, HitTestMode, PointerTarget};

    #[test]
    fn zoom_maps_back_to_the_same_physical_pixels() {
        let fake = FakeDesktop::new(1920, 1080);
        fake.paint(Rect::new(1000, 500, 8, 8), [255, 0, 0]);
        let e = Session::standalone(fake.desktop(), EngineConfig::default());
        let zoom = |region, scale| ZoomRequest {
            of: None,
            region,
            scale,
            max_width: None,
            format: Some(ImageFormat::Png),
        };
        assert_eq!(
            e.zoom(&zoom([0.0, 0.0, 10.0, 10.0], 1.0))
                .unwrap_err()
                .code(),
            ErrorCode::NoReferenceScreenshot
        );
        let shot = e
            .screenshot(&ScreenshotRequest {
                target: CaptureTarget::Screen,
                max_width: Some(800),
                format: None,
            })
            .unwrap();
        // 800/1920: image (400, 200) shows physical (960, 480).
        let z = e.zoom(&zoom([400.0, 200.0, 40.0, 20.0], 2.0)).unwrap();
        assert_eq!(z.view.capture, Rect::new(960, 480, 96, 48));
        assert_eq!((z.view.width, z.view.height), (192, 96));
        assert!(z.id > shot.id);
        // The red square's top-left in the zoom: (1000-960)*2, (500-480)*2.
        let out = e
            .click(
                PointerTarget {
                    x: 81.0,
                    y: 41.0,
                    space: CoordinateSpace::Image {
                        screenshot_id: None,
                    },
                },
                deskpilot_backend::Button::Left,
                1,
                &[],
                HitTestMode::Fail,
            )
            .unwrap();
        assert_eq!(out.point, Point::new(1000, 500));
        assert_eq!(
            e.zoom(&zoom([0.0, 0.0, 500.0, 10.0], 1.0))
                .unwrap_err()
                .code(),
            ErrorCode::InvalidArgument,
            "outside the 192-wide zoom image"
        );
    }
}
