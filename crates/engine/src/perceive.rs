//! Dual-channel perception: the window list (structure) checked against one capture of the
//! screen (pixels), so an agent is not misled by a list that names minimized, parked, covered
//! or empty windows as if they were there to be seen.
//!
//! One `list_windows` and one masked capture of the whole desktop; for every top-level window a
//! [`WindowVerdict`] with its evidence, decided in this order:
//!
//! 1. `minimized` — the window manager says so;
//! 2. `hidden` — unmapped, or a client area of at most [`TINY`] pixels in one direction (the
//!    1×1 windows applications park);
//! 3. `offscreen` — more than half of its frame lies off every monitor (the fraction is
//!    reported for every window);
//! 4. `covered` — at least [`COVERED`] of its on-screen part lies under windows above it in the
//!    stacking order (exact union area, and who covers how much);
//! 5. `blank` — the luminance standard deviation of its visible client pixels is under
//!    [`BLANK_STDDEV`]: nothing is drawn there;
//! 6. else `consistent`.
//!
//! `cloaked` (a DWM-cloaked window on Windows) is never produced: the Windows backend leaves
//! cloaked windows out of every list, so no profile is ever offered one to act on.
//!
//! With `own_pixels`, a partly or wholly covered window is also captured alone (Composite on
//! X11, `PrintWindow` on Windows) and `blank` is judged on its own drawing, so blank means
//! blank and not covered.
//!
//! Memory: the list is offered like every listing, fully visible windows (and own drawings)
//! get their dHash from the same masked frame, and the call enters the timeline.

use std::time::{Duration, Instant};

use deskpilot_backend::{Frame, PixelFormat, WindowCapture};
use deskpilot_types::{Monitor, Rect, WindowInfo};

use crate::capture::Screenshot;
use crate::coords::ViewGeometry;
use crate::decorate::Decorations;
use crate::note::{Cover, Note, clamp_max_width};
use crate::pipeline::ImageFormat;
use crate::{error::Error, session::Session};

/// A client area this small in either direction is a parked window, not a window.
pub const TINY: u32 = 2;
/// The share of a window's on-screen part hidden by windows above it that makes it `covered`.
pub const COVERED: f64 = 0.9;
/// The share of a window's frame off every monitor that makes it `offscreen`.
pub const OFFSCREEN: f64 = 0.5;
/// Luminance standard deviation (0-255 scale) under which a window's pixels are `blank`.
pub const BLANK_STDDEV: f64 = 3.0;
/// How long a window brought back from minimized gets to repaint before the call returns.
pub(crate) const DRAW_WAIT: Duration = Duration::from_millis(2000);
/// Between two reads of a repainting window that must agree for it to count as drawn.
const SETTLE_READ: Duration = Duration::from_millis(40);

/// FNV-1a of `bytes`: enough to tell two reads of the same pixels apart from different ones.
fn fnv(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(*b)).wrapping_mul(0x0100_0000_01b3)
    })
}
/// Fewer visible client pixels than this and the pixels cannot tell blank from drawn.
const MIN_SAMPLES: u64 = 64;

/// A perception request after argument parsing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct PerceiveRequest {
    /// Also return the screenshot the verdicts were read from.
    pub include_screenshot: bool,
    /// Overrides the configured `max_width` of that screenshot.
    pub max_width: Option<u32>,
    /// Overrides the configured format of that screenshot.
    pub format: Option<ImageFormat>,
    /// Capture covered windows alone to judge their own drawing (slower: a window that was
    /// never captured alone gets up to half a second to repaint).
    pub own_pixels: bool,
}

/// What the two channels say together about one window.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum WindowVerdict {
    Consistent,
    Minimized,
    Hidden,
    Offscreen,
    Covered,
    Blank,
    /// Windows DWM cloaking; see the module doc.
    Cloaked,
}

impl WindowVerdict {
    /// Every verdict, in the order results count them.
    pub const ALL: [WindowVerdict; 7] = [
        WindowVerdict::Consistent,
        WindowVerdict::Minimized,
        WindowVerdict::Hidden,
        WindowVerdict::Offscreen,
        WindowVerdict::Covered,
        WindowVerdict::Blank,
        WindowVerdict::Cloaked,
    ];

    pub fn name(self) -> &'static str {
        match self {
            WindowVerdict::Consistent => "consistent",
            WindowVerdict::Minimized => "minimized",
            WindowVerdict::Hidden => "hidden",
            WindowVerdict::Offscreen => "offscreen",
            WindowVerdict::Covered => "covered",
            WindowVerdict::Blank => "blank",
            WindowVerdict::Cloaked => "cloaked",
        }
    }
}

/// A window above another and how much of the other's on-screen part it hides.
#[derive(Debug, Clone, PartialEq)]
pub struct Coverer {
    pub cover: Cover,
    /// Share of the covered window's on-screen area under this one (overlaps between
    /// coverers are counted for each).
    pub share: f64,
}

/// A covered window captured alone.
#[derive(Debug, Clone, PartialEq)]
pub enum OwnPixels {
    /// Its own drawing, with the luminance standard deviation of its client area.
    Read {
        method: &'static str,
        stddev: Option<f64>,
    },
    /// The backend captured it but it drew nothing (a window that never repaints).
    Blank {
        method: &'static str,
    },
    /// This backend or window manager cannot capture a window alone.
    Unsupported,
    Failed {
        error: String,
    },
}

/// One window, with the evidence for its verdict.
#[derive(Debug, Clone)]
pub struct WindowPerception {
    pub window: WindowInfo,
    pub verdict: WindowVerdict,
    /// Share of the frame off every monitor (0 when fully on screen).
    pub offscreen: f64,
    /// Share of the frame's on-screen part hidden by windows above it.
    pub covered: f64,
    /// The windows above that hide some of it, topmost first.
    pub covered_by: Vec<Coverer>,
    /// Client pixels on screen and uncovered, the ones the blank test read.
    pub visible_pixels: u64,
    /// Luminance standard deviation of those pixels (0-255), when there were enough.
    pub stddev: Option<f64>,
    /// The window's own drawing, when it was covered and `own_pixels` asked for it.
    pub own: Option<OwnPixels>,
}

/// Every window's verdict, with totals that add up.
#[derive(Debug, Clone)]
pub struct Perception {
    /// Topmost first, as the window list has them.
    pub windows: Vec<WindowPerception>,
    pub monitors: Vec<Monitor>,
    /// The screenshot the verdicts were read from, when asked for.
    pub screenshot: Option<Screenshot>,
    /// Reading the window list.
    pub list_time: Duration,
    /// Capturing the screen and reading its pixels.
    pub capture_time: Duration,
    pub elapsed: Duration,
}

impl Perception {
    pub fn total(&self) -> usize {
        self.windows.len()
    }

    pub fn count(&self, verdict: WindowVerdict) -> usize {
        self.windows.iter().filter(|w| w.verdict == verdict).count()
    }

    pub fn consistent(&self) -> usize {
        self.count(WindowVerdict::Consistent)
    }

    /// Every window that is not `consistent`.
    pub fn inconsistent(&self) -> usize {
        self.total() - self.consistent()
    }
}

/// Area of the union of `rects`, exactly (coordinate compression; a handful of windows).
pub(crate) fn union_area(rects: &[Rect]) -> u64 {
    let rects: Vec<&Rect> = rects.iter().filter(|r| !r.is_empty()).collect();
    let mut xs: Vec<i64> = rects.iter().flat_map(|r| [r.x as i64, r.right()]).collect();
    xs.sort_unstable();
    xs.dedup();
    let mut area = 0u64;
    let mut spans: Vec<(i64, i64)> = Vec::new();
    for slab in xs.windows(2) {
        let (x0, x1) = (slab[0], slab[1]);
        spans.clear();
        spans.extend(
            rects
                .iter()
                .filter(|r| (r.x as i64) <= x0 && r.right() >= x1)
                .map(|r| (r.y as i64, r.bottom())),
        );
        spans.sort_unstable();
        let mut covered = 0i64;
        let mut end = i64::MIN;
        for &(y0, y1) in &spans {
            let start = y0.max(end);
            if y1 > start {
                covered += y1 - start;
            }
            end = end.max(y1);
        }
        area += (covered * (x1 - x0)) as u64;
    }
    area
}

/// Running luminance statistics.
#[derive(Debug, Default, Clone, Copy)]
struct Luma {
    n: u64,
    sum: u64,
    squares: u64,
}

impl Luma {
    fn add_run(&mut self, pixels: &[u8], format: PixelFormat) {
        let (r, g, b) = match format {
            PixelFormat::Bgrx => (2, 1, 0),
            PixelFormat::Rgba => (0, 1, 2),
        };
        for px in pixels.chunks_exact(4) {
            // BT.601 weights scaled by 256.
            let y = (px[r] as u64 * 77 + px[g] as u64 * 150 + px[b] as u64 * 29) >> 8;
            self.sum += y;
            self.squares += y * y;
        }
        self.n += (pixels.len() / 4) as u64;
    }

    fn stddev(&self) -> Option<f64> {
        (self.n >= MIN_SAMPLES).then(|| {
            let n = self.n as f64;
            let mean = self.sum as f64 / n;
            (self.squares as f64 / n - mean * mean).max(0.0).sqrt()
        })
    }
}

/// Luminance of the pixels of `area` in `frame` that no rectangle of `holes` covers.
fn visible_luma<D: AsRef<[u8]>>(frame: &Frame<D>, area: Rect, holes: &[Rect]) -> Luma {
    let mut luma = Luma::default();
    let Some(area) = area.intersect(&frame.rect) else {
        return luma;
    };
    let bytes = frame.bytes();
    let stride = frame.rect.width as usize * 4;
    let mut cuts: Vec<(i64, i64)> = Vec::new();
    for y in area.y as i64..area.bottom() {
        cuts.clear();
        cuts.extend(
            holes
                .iter()
                .filter(|h| h.y as i64 <= y && y < h.bottom())
                .map(|h| (h.x as i64, h.right())),
        );
        cuts.sort_unstable();
        let row = (y - frame.rect.y as i64) as usize * stride;
        let mut x = area.x as i64;
        let runs = |from: i64, to: i64, luma: &mut Luma| {
            if to > from {
                let a = row + (from - frame.rect.x as i64) as usize * 4;
                let b = row + (to - frame.rect.x as i64) as usize * 4;
                luma.add_run(&bytes[a..b], frame.format);
            }
        };
        for &(c0, c1) in &cuts {
            runs(x, c0.min(area.right()), &mut luma);
            x = x.max(c1);
            if x >= area.right() {
                break;
            }
        }
        runs(x, area.right(), &mut luma);
    }
    luma
}

/// Whether the client area of `w` inside `rect` shows nothing: flat, or too small to tell.
pub(crate) fn flat<D: AsRef<[u8]>>(frame: &Frame<D>, w: &WindowInfo, rect: Rect) -> bool {
    let client = if w.client.is_empty() {
        w.frame
    } else {
        w.client
    };
    client
        .intersect(&rect)
        .map(|area| visible_luma(frame, area, &[]).stddev())
        .is_none_or(|s| s.is_none_or(|s| s < BLANK_STDDEV))
}

/// The structure-channel part of one verdict: geometry against monitors and the stack.
struct Geometry {
    /// The frame's parts on each monitor.
    on_screen: Vec<Rect>,
    offscreen: f64,
    covered: f64,
    covered_by: Vec<Coverer>,
    /// Frames of the visible windows above it, clipped to its frame.
    holes: Vec<Rect>,
}

fn geometry(w: &WindowInfo, windows: &[WindowInfo], monitors: &[Monitor]) -> Geometry {
    let frame_area = w.frame.area().max(1);
    let on_screen: Vec<Rect> = monitors
        .iter()
        .filter_map(|m| m.rect.intersect(&w.frame))
        .collect();
    let on_area = union_area(&on_screen).min(frame_area);
    let offscreen = 1.0 - on_area as f64 / frame_area as f64;
    let above: Vec<&WindowInfo> = windows
        .iter()
        .filter(|o| o.z < w.z && o.state.visible && !o.state.minimized && o.id != w.id)
        .collect();
    let holes: Vec<Rect> = above
        .iter()
        .filter_map(|o| o.frame.intersect(&w.frame))
        .collect();
    let hidden_in = |covers: &[Rect]| -> u64 {
        on_screen
            .iter()
            .map(|piece| {
                let parts: Vec<Rect> = covers.iter().filter_map(|c| c.intersect(piece)).collect();
                union_area(&parts)
            })
            .sum()
    };
    let share = |a: u64| {
        if on_area == 0 {
            0.0
        } else {
            (a as f64 / on_area as f64).min(1.0)
        }
    };
    let covered = share(hidden_in(&holes));
    let mut covered_by: Vec<Coverer> = above
        .iter()
        .filter_map(|o| {
            let part = o.frame.intersect(&w.frame)?;
            let a = hidden_in(&[part]);
            (a > 0).then(|| Coverer {
                cover: Cover {
                    id: o.id,
                    title: o.title.clone(),
                },
                share: share(a),
            })
        })
        .collect();
    covered_by.sort_by_key(|c| windows.iter().position(|o| o.id == c.cover.id));
    Geometry {
        on_screen,
        offscreen: offscreen.max(0.0),
        covered,
        covered_by,
        holes,
    }
}

/// The pixel-channel reading of one window in the screen frame.
fn client_luma<D: AsRef<[u8]>>(frame: &Frame<D>, w: &WindowInfo, g: &Geometry) -> Luma {
    let client = if w.client.is_empty() {
        w.frame
    } else {
        w.client
    };
    let mut total = Luma::default();
    for piece in &g.on_screen {
        if let Some(area) = piece.intersect(&client) {
            let l = visible_luma(frame, area, &g.holes);
            total.n += l.n;
            total.sum += l.sum;
            total.squares += l.squares;
        }
    }
    total
}

impl Session {
    /// Reads the window list and the screen once and says, per window, whether the pixels
    /// confirm what the list says.
    pub fn perceive(&self, request: &PerceiveRequest) -> Result<Perception, Error> {
        let started = Instant::now();
        self.note_call();
        let windows = self.desktop().windows.list_windows()?;
        let monitors = self.desktop().screens.monitors()?;
        let desktop = self.desktop().screens.desktop_bounds()?;
        let list_time = started.elapsed();
        let geometries: Vec<Geometry> = windows
            .iter()
            .map(|w| geometry(w, &windows, &monitors))
            .collect();

        let mut lumas: Vec<Luma> = vec![Luma::default(); windows.len()];
        let captured = Instant::now();
        let mut read = |frame: &deskpilot_backend::FrameMut<'_>| {
            for ((w, g), luma) in windows.iter().zip(&geometries).zip(lumas.iter_mut()) {
                if w.state.minimized || !w.state.visible {
                    continue;
                }
                *luma = client_luma(frame, w, g);
                // Its whole client is on screen and was just measured: hash it when drawn.
                if g.covered == 0.0
                    && g.offscreen == 0.0
                    && luma.stddev().is_some_and(|s| s >= BLANK_STDDEV)
                {
                    self.remember_drawn_hash(w, frame, w.frame);
                }
            }
        };
        let screenshot = if request.include_screenshot {
            let mut notes = Vec::new();
            let mut budget = self.config.budget;
            if let Some(requested) = request.max_width {
                budget.max_width = clamp_max_width(requested, &mut notes);
            }
            let c = self.capture_view(
                desktop,
                None,
                |r| ViewGeometry::fit(r, budget),
                None,
                request.format.unwrap_or(self.config.format),
                &|_| Decorations::default(),
                Some(&mut read),
            )?;
            Some(c.into_screenshot::<Note>(None, notes))
        } else {
            self.read_screen(desktop, &mut read)?;
            None
        };
        let capture_time = captured.elapsed();

        let mut perceived = Vec::with_capacity(windows.len());
        for ((w, g), luma) in windows.iter().zip(geometries).zip(lumas) {
            let own = (request.own_pixels
                && g.covered > 0.0
                && w.state.visible
                && !w.state.minimized
                && !g.on_screen.is_empty())
            .then(|| self.own_pixels(w, &g));
            let stddev = match &own {
                Some(OwnPixels::Read { stddev, .. }) => *stddev,
                Some(OwnPixels::Blank { .. }) => Some(0.0),
                _ => luma.stddev(),
            };
            let tiny = w.client.width.min(w.client.height) <= TINY
                || w.frame.width.min(w.frame.height) <= TINY;
            let verdict = if w.state.minimized {
                WindowVerdict::Minimized
            } else if !w.state.visible || tiny {
                WindowVerdict::Hidden
            } else if g.offscreen > OFFSCREEN {
                WindowVerdict::Offscreen
            } else if g.covered >= COVERED {
                WindowVerdict::Covered
            } else if stddev.is_some_and(|s| s < BLANK_STDDEV) {
                WindowVerdict::Blank
            } else {
                WindowVerdict::Consistent
            };
            perceived.push(WindowPerception {
                window: w.clone(),
                verdict,
                offscreen: g.offscreen,
                covered: g.covered,
                covered_by: g.covered_by,
                visible_pixels: luma.n,
                stddev: luma.stddev(),
                own,
            });
        }
        Ok(Perception {
            windows: perceived,
            monitors,
            screenshot,
            list_time,
            capture_time,
            elapsed: started.elapsed(),
        })
    }

    /// Waits until the client area of `w` (on top: just focused or restored) shows something
    /// and has stopped changing (two reads [`SETTLE_READ`] apart agree); `false` when that has
    /// not happened after [`DRAW_WAIT`]. A window that comes back from minimized is black until
    /// its app repaints it, and then drawn piece by piece (a menu bar before the page), so a
    /// screenshot or a hash taken before then shows little of it.
    pub(crate) fn wait_drawn(&self, w: &WindowInfo) -> Result<bool, Error> {
        let desktop = self.desktop().screens.desktop_bounds()?;
        let client = if w.client.is_empty() {
            w.frame
        } else {
            w.client
        };
        let Some(area) = client.intersect(&desktop) else {
            return Ok(true);
        };
        let deadline = Instant::now() + DRAW_WAIT;
        let mut previous: Option<u64> = None;
        loop {
            let frame = self.desktop().capture.capture(area)?;
            let drawn = !flat(&frame, w, area);
            let digest = fnv(frame.bytes());
            if drawn && previous == Some(digest) {
                return Ok(true);
            }
            previous = drawn.then_some(digest);
            if Instant::now() >= deadline {
                return Ok(false);
            }
            std::thread::sleep(SETTLE_READ);
        }
    }

    /// Captures `rect` into the session's reused buffer, masks it and lends it to `read`.
    fn read_screen(
        &self,
        rect: Rect,
        read: &mut dyn FnMut(&deskpilot_backend::FrameMut<'_>),
    ) -> Result<(), Error> {
        let mut pool = std::mem::take(&mut *self.buffers.lock().unwrap_or_else(|e| e.into_inner()));
        let mut masks = Some(self.masks_for(rect, None));
        let lent = self.desktop().capture.capture_with(
            rect,
            std::mem::take(&mut pool.frame),
            &mut |frame| {
                if let Some(m) = masks.take() {
                    m.wait().paint(frame);
                }
                read(frame);
            },
        );
        let result = lent.map(|buffer| pool.frame = buffer);
        *self.buffers.lock().unwrap_or_else(|e| e.into_inner()) = pool;
        Ok(result?)
    }

    /// A covered window's own drawing: its client's statistics, and its dHash for memory.
    fn own_pixels(&self, w: &WindowInfo, g: &Geometry) -> OwnPixels {
        let Some(clip) = g
            .on_screen
            .iter()
            .copied()
            .reduce(|a, b| a.union(&b))
            .and_then(|r| r.intersect(&w.frame))
        else {
            return OwnPixels::Unsupported;
        };
        let method = self.desktop().capture.window_capture_method();
        match self.desktop().capture.capture_window(w, clip) {
            Ok(WindowCapture::Captured(mut frame)) => {
                self.masks_now(clip, Some(w.id)).paint(&mut frame);
                let client = if w.client.is_empty() {
                    w.frame
                } else {
                    w.client
                };
                let stddev = visible_luma(&frame, client, &[]).stddev();
                if stddev.is_some_and(|s| s >= BLANK_STDDEV) {
                    self.remember_drawn_hash(w, &frame, clip);
                }
                OwnPixels::Read { method, stddev }
            }
            Ok(WindowCapture::Blank) => OwnPixels::Blank { method },
            Ok(WindowCapture::Unsupported) => OwnPixels::Unsupported,
            Err(e) => OwnPixels::Failed {
                error: e.to_string(),
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use deskpilot_backend::fake::{FakeDesktop, FakeWindow};
    use deskpilot_types::WindowState;

    use crate::config::EngineConfig;

    fn session(fake: &FakeDesktop) -> Session {
        Session::standalone(fake.desktop(), EngineConfig::default())
    }

    /// A window with something drawn in it (the fake paints flat colours).
    fn drawn(fake: &FakeDesktop, title: &str, frame: Rect) -> deskpilot_types::WindowId {
        let id = fake.add_window(FakeWindow::new(title, frame));
        fake.paint(
            Rect::new(frame.x + 4, frame.y + 30, frame.width / 3, 8),
            [10, 10, 10],
        );
        id
    }

    fn verdict(p: &Perception, id: deskpilot_types::WindowId) -> &WindowPerception {
        p.windows.iter().find(|w| w.window.id == id).unwrap()
    }

    #[test]
    fn union_area_counts_overlaps_once() {
        assert_eq!(union_area(&[]), 0);
        assert_eq!(union_area(&[Rect::new(0, 0, 10, 10)]), 100);
        assert_eq!(
            union_area(&[Rect::new(0, 0, 10, 10), Rect::new(5, 5, 10, 10)]),
            175
        );
        assert_eq!(
            union_area(&[Rect::new(0, 0, 10, 10), Rect::new(2, 2, 3, 3)]),
            100
        );
        assert_eq!(
            union_area(&[Rect::new(-5, -5, 10, 10), Rect::new(20, 20, 1, 1)]),
            101
        );
    }

    #[test]
    fn every_verdict_on_one_desktop_and_totals_add_up() {
        let fake = FakeDesktop::new(800, 600);
        let normal = drawn(&fake, "Normal", Rect::new(0, 0, 300, 200));
        let minimized = drawn(&fake, "Minimized", Rect::new(0, 300, 200, 100));
        fake.set_state(
            minimized,
            WindowState {
                minimized: true,
                ..WindowState::default()
            },
        );
        let off = drawn(&fake, "Parked", Rect::new(700, 500, 400, 300));
        let tiny = fake.add_window(FakeWindow::new("Tiny", Rect::new(500, 10, 1, 1)));
        let under = drawn(&fake, "Under", Rect::new(420, 100, 100, 100));
        let blank = fake.add_window(FakeWindow::new("Blank", Rect::new(0, 400, 300, 150)));
        let over = drawn(&fake, "Over", Rect::new(400, 80, 200, 200));
        let s = session(&fake);
        let p = s.perceive(&PerceiveRequest::default()).unwrap();
        assert_eq!(p.total(), 7);
        assert_eq!(verdict(&p, normal).verdict, WindowVerdict::Consistent);
        assert_eq!(verdict(&p, minimized).verdict, WindowVerdict::Minimized);
        let o = verdict(&p, off);
        assert_eq!(o.verdict, WindowVerdict::Offscreen);
        // 100×100 of 400×300 on screen.
        assert!(
            (o.offscreen - (1.0 - 10_000.0 / 120_000.0)).abs() < 1e-9,
            "{o:?}"
        );
        assert_eq!(verdict(&p, tiny).verdict, WindowVerdict::Hidden);
        let u = verdict(&p, under);
        assert_eq!(u.verdict, WindowVerdict::Covered);
        assert_eq!(u.covered, 1.0);
        assert_eq!(u.covered_by.len(), 1);
        assert_eq!(u.covered_by[0].cover.id, over);
        let b = verdict(&p, blank);
        assert_eq!(b.verdict, WindowVerdict::Blank, "{b:?}");
        assert_eq!(b.stddev, Some(0.0));
        assert_eq!(p.consistent() + p.inconsistent(), p.total());
        let counted: usize = WindowVerdict::ALL.iter().map(|v| p.count(*v)).sum();
        assert_eq!(counted, p.total());
        assert_eq!(p.consistent(), 2, "Normal and Over");
        assert!(p.screenshot.is_none());
        assert_eq!(fake.capture_count(), 1, "one capture for every window");
    }

    #[test]
    fn partly_covered_windows_are_judged_on_what_shows_and_name_who_covers() {
        let fake = FakeDesktop::new(800, 600);
        let a = drawn(&fake, "A", Rect::new(0, 0, 200, 200));
        let b = fake.add_window(FakeWindow::new("B", Rect::new(100, 0, 200, 100)));
        let c = fake.add_window(FakeWindow::new("C", Rect::new(0, 150, 50, 100)));
        let p = session(&fake)
            .perceive(&PerceiveRequest::default())
            .unwrap();
        let w = verdict(&p, a);
        // B hides 100×100, C hides 50×50: 12,500 of 40,000.
        assert!((w.covered - 12_500.0 / 40_000.0).abs() < 1e-9, "{w:?}");
        assert_eq!(w.verdict, WindowVerdict::Consistent, "its drawing shows");
        let by: Vec<_> = w.covered_by.iter().map(|c| c.cover.id).collect();
        assert_eq!(by, [c, b], "topmost first");
        assert!(w.visible_pixels < 200 * 180);
    }

    #[test]
    fn own_pixels_tell_a_blank_covered_window_from_a_drawn_one() {
        let fake = FakeDesktop::new(800, 600);
        let drawn_under = drawn(&fake, "Drawn", Rect::new(0, 0, 200, 200));
        let blank_under = drawn(&fake, "Empty", Rect::new(300, 0, 200, 200));
        fake.add_window(FakeWindow::new("Top", Rect::new(0, 0, 600, 300)));
        fake.set_own_drawing(drawn_under, Some([255, 0, 0]));
        fake.set_own_drawing(blank_under, None);
        let s = session(&fake);
        let p = s
            .perceive(&PerceiveRequest {
                own_pixels: true,
                ..PerceiveRequest::default()
            })
            .unwrap();
        let d = verdict(&p, drawn_under);
        assert_eq!(d.verdict, WindowVerdict::Covered);
        assert!(matches!(d.own, Some(OwnPixels::Read { .. })), "{d:?}");
        let e = verdict(&p, blank_under);
        assert!(matches!(e.own, Some(OwnPixels::Blank { .. })), "{e:?}");
        let p = s.perceive(&PerceiveRequest::default()).unwrap();
        assert!(verdict(&p, drawn_under).own.is_none(), "only when asked");
    }

    #[test]
    fn offscreen_counts_every_monitor_and_the_screenshot_comes_along() {
        let fake =
            FakeDesktop::with_monitors(&[Rect::new(0, 0, 400, 300), Rect::new(400, 0, 400, 300)]);
        let across = drawn(&fake, "Across", Rect::new(300, 50, 200, 100));
        let below = drawn(&fake, "Below", Rect::new(100, 250, 100, 200));
        let p = session(&fake)
            .perceive(&PerceiveRequest {
                include_screenshot: true,
                max_width: Some(400),
                ..PerceiveRequest::default()
            })
            .unwrap();
        let a = verdict(&p, across);
        assert_eq!(a.offscreen, 0.0, "both halves are on a monitor");
        let b = verdict(&p, below);
        assert!((b.offscreen - 0.75).abs() < 1e-9, "{b:?}");
        assert_eq!(b.verdict, WindowVerdict::Offscreen);
        let shot = p.screenshot.expect("asked for");
        assert_eq!(shot.view.width, 400);
        assert_eq!(shot.view.capture, Rect::new(0, 0, 800, 300));
    }

    #[test]
    fn masked_pixels_are_masked_before_they_are_read() {
        let fake = FakeDesktop::new(400, 300);
        let w = drawn(&fake, "Secret", Rect::new(0, 0, 200, 200));
        let config = EngineConfig {
            mask_regions: vec![Rect::new(0, 0, 200, 200)],
            ..EngineConfig::default()
        };
        let s = Session::standalone(fake.desktop(), config);
        let p = s.perceive(&PerceiveRequest::default()).unwrap();
        assert_eq!(verdict(&p, w).verdict, WindowVerdict::Blank);
    }

    #[test]
    fn perception_enters_memory_with_the_hashes_of_fully_visible_windows() {
        let dir = deskpilot_memory::testing::TempDir::new("perceive-memory");
        let fake = FakeDesktop::new(800, 600);
        let seen = drawn(&fake, "Ledger", Rect::new(0, 0, 300, 200));
        let under = drawn(&fake, "Under", Rect::new(400, 0, 100, 100));
        drawn(&fake, "Over", Rect::new(350, 0, 300, 300));
        let config = EngineConfig {
            memory: crate::config::MemorySettings {
                enabled: true,
                dir: Some(dir.path().to_path_buf()),
                ..Default::default()
            },
            ..EngineConfig::default()
        };
        let s = Session::standalone(fake.desktop(), config);
        deskpilot_memory::traced("perceive", || s.perceive(&PerceiveRequest::default())).unwrap();
        s.memory_stats().unwrap();
        let read = s.memory_timeline(10, None).unwrap();
        assert_eq!(
            read.entries.last().map(|e| e.tool.as_str()),
            Some("perceive")
        );
        let state: serde_json::Value = serde_json::from_str(
            &std::fs::read_to_string(dir.path().join(deskpilot_memory::STATE_FILE)).unwrap(),
        )
        .unwrap();
        let text = state.to_string();
        let hashed = |id: deskpilot_types::WindowId| {
            state["windows"]["windows"]
                .as_array()
                .unwrap_or_else(|| panic!("no windows in {text}"))
                .iter()
                .find(|w| w["id"] == id.0)
                .unwrap_or_else(|| panic!("{id} not in {text}"))["dhash"]
                .is_number()
        };
        assert!(hashed(seen), "{text}");
        assert!(
            !hashed(under),
            "a covered window's screen pixels are not its own"
        );
    }
}
