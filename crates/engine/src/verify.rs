//! "Did it work?": the frame signature behind `verify`, `observe`, `compare` and `wait_for
//! stable`.
//!
//! A capture is reduced to a signature — the averages of a 64×64 grid of cells, taken after
//! the privacy masks and before any decoration — and two signatures differ when at least 0.2 %
//! of the cells moved, leaving out cells the overlay paints (so a blinking caret, one or two
//! cells, is no change, while a typed word is). `verify` samples the target just before the action and again after it (after
//! `actionDelayMs`, then for up to [`SETTLE`] while nothing has moved yet, since apps repaint a
//! little later than input lands): a change confirms the action, none suggests it did nothing.
//! `observe` adds a fresh screenshot of the same target. Every capture also refreshes the
//! reference signature of its target, which a screenshot's `compare` is judged against.

use std::time::{Duration, Instant};

use deskpilot_backend::Frame;
use deskpilot_types::{Rect, WindowId};

use crate::engine::{CaptureTarget, Screenshot, ScreenshotRequest};
use crate::{Engine, Error, pipeline};

/// Share of sampled pixels that may move in a frame that counts as unchanged.
pub const QUIET_RATIO: f64 = 0.002;
/// Samples per side of the signature grid.
const GRID: u32 = 64;
/// How long `verify` keeps looking for a change that has not shown yet.
pub const SETTLE: Duration = Duration::from_millis(500);

/// The physical rectangle of cell `(i, j)` of `r`'s signature grid (may be empty for tiny `r`).
fn cell(r: Rect, i: u32, j: u32) -> Rect {
    let edge = |len: u32, k: u32| (k as u64 * len as u64 / GRID as u64) as u32;
    let (x0, x1) = (edge(r.width, i), edge(r.width, i + 1));
    let (y0, y1) = (edge(r.height, j), edge(r.height, j + 1));
    Rect::new(r.x + x0 as i32, r.y + y0 as i32, x1 - x0, y1 - y0)
}

/// A frame reduced to a [`GRID`]×[`GRID`] grid of cell averages (r, g, b). Every pixel
/// counts, so a typed word moves the cells it lands in, while a blinking caret moves one or
/// two cells — under [`QUIET_RATIO`] of them.
pub(crate) fn signature(frame: &Frame) -> Vec<[u8; 3]> {
    let (w, h) = (frame.rect.width as usize, frame.rect.height as usize);
    let n = GRID as usize;
    let mut sums = vec![[0u32; 4]; n * n];
    if w == 0 || h == 0 {
        return vec![[0, 0, 0]; n * n];
    }
    let col_cell: Vec<usize> = (0..w).map(|x| x * n / w).collect();
    let (ri, bi) = match frame.format {
        deskpilot_backend::PixelFormat::Bgrx => (2, 0),
        deskpilot_backend::PixelFormat::Rgba => (0, 2),
    };
    for (y, line) in frame.data.chunks_exact(w * 4).take(h).enumerate() {
        let row = &mut sums[(y * n / h) * n..][..n];
        for (px, &c) in line.chunks_exact(4).zip(&col_cell) {
            let s = &mut row[c];
            s[0] += u32::from(px[ri]);
            s[1] += u32::from(px[1]);
            s[2] += u32::from(px[bi]);
            s[3] += 1;
        }
    }
    sums.iter()
        .map(|s| {
            let count = s[3].max(1);
            [
                (s[0] / count) as u8,
                (s[1] / count) as u8,
                (s[2] / count) as u8,
            ]
        })
        .collect()
}

/// The share of cells of `rect` that moved between `a` and `b`, leaving out cells touching
/// `ignore` (the overlay, which may have appeared or gone between the two).
pub(crate) fn changed_in(rect: Rect, a: &[[u8; 3]], b: &[[u8; 3]], ignore: &[Rect]) -> f64 {
    if ignore.is_empty() {
        return changed(a, b);
    }
    let keep = |k: usize| {
        let c = cell(rect, k as u32 % GRID, k as u32 / GRID);
        !ignore.iter().any(|g| g.intersect(&c).is_some())
    };
    let pick = |s: &[[u8; 3]]| -> Vec<[u8; 3]> {
        s.iter()
            .enumerate()
            .map(|(k, px)| if keep(k) { *px } else { [0, 0, 0] })
            .collect()
    };
    changed(&pick(a), &pick(b))
}

/// The share of cells whose average moved by more than a little.
pub(crate) fn changed(a: &[[u8; 3]], b: &[[u8; 3]]) -> f64 {
    if a.len() != b.len() {
        return 1.0;
    }
    let moved = a
        .iter()
        .zip(b)
        .filter(|(p, q)| p.iter().zip(q.iter()).any(|(x, y)| x.abs_diff(*y) > 2))
        .count();
    moved as f64 / a.len().max(1) as f64
}

/// What `verify` / `observe` look at.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum VerifyTarget {
    /// The window the last screenshot was pinned to (else that screenshot's area; else the
    /// whole desktop).
    Auto,
    Window(WindowId),
    Screen,
}

/// The target as sampled just before an action.
#[derive(Debug, Clone)]
pub struct Before {
    rect: Rect,
    /// The overlay's pixels when the signature was taken.
    overlay: Vec<Rect>,
    window: Option<WindowId>,
    signature: Vec<[u8; 3]>,
    /// "window \"Untitled - Mousepad\"" or "screen".
    pub what: String,
}

/// What the screen did after an action.
#[derive(Debug, Clone)]
pub struct Verdict {
    pub changed: bool,
    /// Share of sampled pixels that moved.
    pub ratio: f64,
    /// From the end of the action to the deciding capture.
    pub waited: Duration,
    pub what: String,
    /// With `observe`: a fresh screenshot of the same target.
    pub screenshot: Option<Screenshot>,
}

impl Engine {
    /// Captures `rect` (masked) and returns its signature, reusing the frame buffer.
    pub(crate) fn sample(&self, rect: Rect, buffer: &mut Vec<u8>) -> Result<Vec<[u8; 3]>, Error> {
        let mut frame = self
            .desktop
            .capture
            .capture_into(rect, std::mem::take(buffer))?;
        pipeline::apply_masks(&mut frame, &self.config().mask_regions);
        let sig = signature(&frame);
        *buffer = frame.data;
        Ok(sig)
    }

    /// Samples the target of a coming action.
    pub fn verify_before(&self, target: VerifyTarget) -> Result<Before, Error> {
        let desktop = self.desktop.screens.desktop_bounds()?;
        let windows = || self.desktop.windows.list_windows();
        let (rect, window, what) = match target {
            VerifyTarget::Screen => (desktop, None, "screen".to_string()),
            VerifyTarget::Window(id) => {
                let w = windows()?
                    .into_iter()
                    .find(|w| w.id == id)
                    .ok_or(Error::WindowNotFound(id))?;
                (w.frame, Some(id), format!("window {}", w.label()))
            }
            VerifyTarget::Auto => {
                let last = self
                    .shots
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .last()
                    .cloned();
                let pinned = match last.as_ref().and_then(|s| s.window) {
                    Some((id, _, _)) => windows()?.into_iter().find(|w| w.id == id),
                    None => None,
                };
                match (pinned, last) {
                    (Some(w), _) => (w.frame, Some(w.id), format!("window {}", w.label())),
                    (None, Some(s)) if s.view.capture != desktop => (
                        s.view.capture,
                        None,
                        format!("area {} of screenshot {}", s.view.capture, s.id),
                    ),
                    _ => (desktop, None, "screen".to_string()),
                }
            }
        };
        let rect = rect.intersect(&desktop).ok_or(Error::RegionOutsideScreen {
            region: rect,
            desktop,
        })?;
        let overlay = self.desktop.overlay.regions();
        let signature = self.sample(rect, &mut Vec::new())?;
        Ok(Before {
            rect,
            overlay,
            window,
            signature,
            what,
        })
    }

    /// Judges the screen after an action against `before`; with `observe`, adds a screenshot.
    pub fn verify_after(&self, before: &Before, observe: bool) -> Result<Verdict, Error> {
        let started = Instant::now();
        std::thread::sleep(self.config().safety.action_delay);
        let mut buffer = Vec::new();
        let ratio = loop {
            let mut ignore = self.desktop.overlay.regions();
            ignore.extend_from_slice(&before.overlay);
            let now = self.sample(before.rect, &mut buffer)?;
            let ratio = changed_in(before.rect, &before.signature, &now, &ignore);
            if ratio >= QUIET_RATIO || started.elapsed() >= SETTLE {
                break ratio;
            }
            std::thread::sleep(Duration::from_millis(40));
        };
        let waited = started.elapsed();
        let screenshot = if observe {
            let target = match before.window {
                Some(id) => CaptureTarget::Window(id),
                None => CaptureTarget::Region(before.rect),
            };
            let shot = self.screenshot(&ScreenshotRequest {
                target,
                max_width: None,
                format: None,
            });
            // The window may have gone (a close, a minimize): show its area instead.
            let shot = match shot {
                Err(Error::WindowNotFound(_) | Error::WindowMinimized { .. })
                    if before.window.is_some() =>
                {
                    self.screenshot(&ScreenshotRequest {
                        target: CaptureTarget::Region(before.rect),
                        max_width: None,
                        format: None,
                    })
                }
                other => other,
            };
            Some(shot?)
        } else {
            None
        };
        Ok(Verdict {
            changed: ratio >= QUIET_RATIO,
            ratio,
            waited,
            what: before.what.clone(),
            screenshot,
        })
    }
}

#[cfg(test)]
mod tests {
    use deskpilot_backend::FakeDesktop;
    use deskpilot_backend::fake::FakeWindow;

    use super::*;
    use crate::EngineConfig;

    #[test]
    fn overlay_samples_are_left_out() {
        let r = Rect::new(0, 0, 64, 64);
        let a = vec![[10, 10, 10]; 4096];
        let mut b = a.clone();
        // The first cell row is the overlay's frame, painted since `a`.
        for p in b.iter_mut().take(64) {
            *p = [30, 123, 255];
        }
        assert!(changed(&a, &b) >= QUIET_RATIO);
        assert_eq!(changed_in(r, &a, &b, &[Rect::new(0, 0, 64, 1)]), 0.0);
    }

    #[test]
    fn a_caret_sized_change_is_quiet_and_a_big_one_is_not() {
        let a = vec![[10, 10, 10]; 4096];
        let mut b = a.clone();
        for p in b.iter_mut().take(8) {
            *p = [200, 200, 200];
        }
        assert!(changed(&a, &b) < QUIET_RATIO);
        for p in b.iter_mut().take(40) {
            *p = [200, 200, 200];
        }
        assert!(changed(&a, &b) >= QUIET_RATIO);
    }

    #[test]
    fn a_word_moves_the_signature_and_a_caret_does_not() {
        let rect = Rect::new(0, 0, 800, 600);
        let blank = || Frame {
            rect,
            format: deskpilot_backend::PixelFormat::Bgrx,
            data: vec![255; 800 * 600 * 4],
        };
        let base = signature(&blank());
        let mut caret = blank();
        caret.fill(Rect::new(100, 100, 1, 16), [0, 0, 0]);
        assert!(changed(&base, &signature(&caret)) < QUIET_RATIO);
        // Fourteen glyphs of thin strokes: 2 px wide, 10 px tall, every 8 px.
        let mut word = blank();
        for k in 0..14 {
            word.fill(Rect::new(100 + k * 8, 100, 2, 10), [0, 0, 0]);
        }
        assert!(changed(&base, &signature(&word)) >= QUIET_RATIO);
    }

    #[test]
    fn verify_sees_a_repaint_and_no_change_and_observe_adds_a_screenshot() {
        let fake = FakeDesktop::new(200, 100);
        let id = fake.add_window(FakeWindow::new("Editor", Rect::new(0, 0, 100, 100)));
        let mut config = EngineConfig::default();
        config.safety.action_delay = Duration::ZERO;
        let e = Engine::new(fake.desktop(), config);
        e.screenshot(&ScreenshotRequest {
            target: CaptureTarget::Window(id),
            max_width: None,
            format: None,
        })
        .unwrap();
        let before = e.verify_before(VerifyTarget::Auto).unwrap();
        assert!(before.what.contains("\"Editor\""), "{}", before.what);
        let v = e.verify_after(&before, false).unwrap();
        assert!(
            !v.changed && v.ratio == 0.0 && v.screenshot.is_none(),
            "{v:?}"
        );
        assert!(
            v.waited >= SETTLE,
            "a quiet screen is watched for the settle time"
        );

        let before = e.verify_before(VerifyTarget::Auto).unwrap();
        fake.paint(Rect::new(0, 0, 100, 50), [255, 0, 0]);
        let v = e.verify_after(&before, true).unwrap();
        assert!(v.changed && v.ratio > 0.3, "{v:?}");
        assert!(v.waited < SETTLE);
        let shot = v.screenshot.unwrap();
        assert_eq!(shot.window.unwrap().id, id);

        // Outside the target, nothing counts.
        let before = e.verify_before(VerifyTarget::Window(id)).unwrap();
        fake.paint(Rect::new(150, 0, 50, 100), [0, 255, 0]);
        assert!(!e.verify_after(&before, false).unwrap().changed);
        let before = e.verify_before(VerifyTarget::Screen).unwrap();
        fake.paint(Rect::new(150, 0, 50, 100), [0, 0, 255]);
        assert!(e.verify_after(&before, false).unwrap().changed);
    }
}
