//! Captures of one session: a target (screen, monitor, window, region) resolved to pixels,
//! masked, scaled, encoded and registered under a new screenshot id, its reference signature
//! refreshed for `compare`; what it shows instead of the target is a typed [`Fallback`] note.
//! The registry lookups (`screenshot_record`, `last_screenshot`) live here too.

use std::time::{Duration, Instant};

use deskpilot_backend::{Frame, WindowCapture};
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
        // Masks, signature, scaling and encoding run on the frame where the backend lends it
        // (X11: the shared-memory segment itself), so a full screen is never copied whole.
        let mut process = |frame: &mut deskpilot_backend::FrameMut<'_>| {
            let capture_time = started.elapsed();
            let masked_regions = pipeline::apply_masks(frame, &self.config.mask_regions);
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
