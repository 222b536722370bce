//! The one place where image pixels and physical pixels meet.
//!
//! A screenshot shows `capture` (physical virtual-desktop pixels) as an image of
//! `width`×`height`. Image pixel `i` covers physical columns `[i/s, (i+1)/s)` relative to
//! the capture origin, where `s` is the per-axis scale `width / capture.width`. Mapping an
//! image point to physical takes the physical pixel under the image pixel's centre, so a
//! point read off the image lands inside the area that pixel shows (within 1 physical px of
//! the model's intent even when downscaled) and never outside the capture.

use deskpilot_types::{Point, Rect};
use serde::Serialize;

use crate::error::Error;

/// Geometry of one image handed to a model: which physical rectangle it shows and how.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, schemars::JsonSchema)]
pub struct ViewGeometry {
    /// The physical rectangle the image shows.
    pub capture: Rect,
    /// Image width in pixels.
    pub width: u32,
    /// Image height in pixels.
    pub height: u32,
    /// Image pixels per physical pixel, horizontally (`physical = capture + image / scale`).
    pub scale: f64,
    /// Image pixels per physical pixel, vertically (equal to `scale` up to rounding).
    pub scale_y: f64,
}

/// Limits an image must fit in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ImageBudget {
    /// Widest image allowed.
    pub max_width: u32,
    /// Most pixels allowed (applied after `max_width`).
    pub max_pixels: u64,
}

impl Default for ImageBudget {
    fn default() -> Self {
        ImageBudget {
            max_width: 1280,
            max_pixels: 600_000,
        }
    }
}

impl ImageBudget {
    /// The budget that fits `capture` so its longest edge is at most `edge` pixels, with no
    /// pixel cap.
    pub fn longest_edge(capture: Rect, edge: u32) -> ImageBudget {
        let (w, h) = (capture.width.max(1) as u64, capture.height.max(1) as u64);
        let edge = edge.max(1) as u64;
        ImageBudget {
            // A tall capture: the width that keeps the height within `edge`.
            max_width: if w >= h { edge } else { (edge * w / h).max(1) } as u32,
            max_pixels: u64::MAX,
        }
    }
}

impl ViewGeometry {
    /// The largest image of `capture`'s aspect ratio that fits `budget`, never upscaled.
    pub fn fit(capture: Rect, budget: ImageBudget) -> ViewGeometry {
        let (cw, ch) = (capture.width.max(1) as f64, capture.height.max(1) as f64);
        let by_width = budget.max_width.max(1) as f64 / cw;
        let by_pixels = (budget.max_pixels.max(1) as f64 / (cw * ch)).sqrt();
        let s = by_width.min(by_pixels).min(1.0);
        // Floor keeps the image inside the budget; never below one pixel.
        let width = ((cw * s).floor() as u32).clamp(1, capture.width.max(1));
        let height = ((ch * s).floor() as u32).clamp(1, capture.height.max(1));
        ViewGeometry::new(capture, width, height)
    }

    /// The geometry of an image of `width`×`height` showing `capture`.
    pub fn new(capture: Rect, width: u32, height: u32) -> ViewGeometry {
        ViewGeometry {
            capture,
            width,
            height,
            scale: width as f64 / capture.width.max(1) as f64,
            scale_y: height as f64 / capture.height.max(1) as f64,
        }
    }

    /// Maps a point read off the image to the physical pixel it shows.
    ///
    /// Fails with [`Error::OutsideImage`] when the point is outside the image.
    pub fn image_to_physical(&self, x: f64, y: f64) -> Result<Point, Error> {
        if !(x.is_finite() && y.is_finite())
            || x < 0.0
            || y < 0.0
            || x >= self.width as f64
            || y >= self.height as f64
        {
            // Where the point would be on screen (a coordinate that is no number counts as 0).
            let at = |i: f64, scale: f64, origin: i32| {
                let i = if i.is_finite() { i } else { 0.0 };
                (origin as f64 + i / scale.max(1e-9)).round() as i32
            };
            return Err(Error::OutsideImage {
                x,
                y,
                width: self.width,
                height: self.height,
                point: Point::new(
                    at(x, self.scale, self.capture.x),
                    at(y, self.scale_y, self.capture.y),
                ),
                capture: self.capture,
            });
        }
        Ok(Point::new(
            axis_to_physical(x, self.scale, self.capture.x, self.capture.width),
            axis_to_physical(y, self.scale_y, self.capture.y, self.capture.height),
        ))
    }

    /// Maps a physical pixel to the image pixel showing it, `None` outside the capture.
    pub fn physical_to_image(&self, p: Point) -> Option<(u32, u32)> {
        if !self.capture.contains(p) {
            return None;
        }
        let ix = ((p.x as f64 - self.capture.x as f64 + 0.5) * self.scale).floor();
        let iy = ((p.y as f64 - self.capture.y as f64 + 0.5) * self.scale_y).floor();
        Some((
            (ix.max(0.0) as u32).min(self.width.saturating_sub(1)),
            (iy.max(0.0) as u32).min(self.height.saturating_sub(1)),
        ))
    }
}

impl ViewGeometry {
    /// The physical rectangle an image-space rectangle shows: every physical pixel any part of
    /// it covers. Fails with `InvalidArgument` unless the rectangle lies inside the image.
    pub fn image_rect_to_physical(&self, x: f64, y: f64, w: f64, h: f64) -> Result<Rect, Error> {
        let inside = [x, y, w, h].iter().all(|v| v.is_finite())
            && x >= 0.0
            && y >= 0.0
            && w >= 1.0
            && h >= 1.0
            && x + w <= self.width as f64
            && y + h <= self.height as f64;
        if !inside {
            return Err(Error::InvalidArgument {
                message: format!(
                    "region ({x}, {y}, {w}x{h}) must lie inside the {}x{} image and be at least 1x1",
                    self.width, self.height
                ),
            });
        }
        let span = |start: f64, len: f64, scale: f64, origin: i32, extent: u32| {
            let lo = (start / scale).floor().max(0.0) as i64;
            let hi = ((start + len) / scale).ceil().min(extent as f64) as i64;
            (origin as i64 + lo, (hi - lo).max(1) as u32)
        };
        let (px, pw) = span(x, w, self.scale, self.capture.x, self.capture.width);
        let (py, ph) = span(y, h, self.scale_y, self.capture.y, self.capture.height);
        Ok(Rect::new(px as i32, py as i32, pw, ph))
    }

    /// Where a physical rectangle appears in the image (x, y, width, height, in image pixels),
    /// clipped to the capture; `None` when none of it was captured.
    pub fn physical_rect_to_image(&self, r: Rect) -> Option<(i32, i32, u32, u32)> {
        let shown = r.intersect(&self.capture)?;
        let x0 = ((shown.x - self.capture.x) as f64 * self.scale).floor() as i32;
        let y0 = ((shown.y - self.capture.y) as f64 * self.scale_y).floor() as i32;
        let x1 = ((shown.x - self.capture.x) as f64 + shown.width as f64) * self.scale;
        let y1 = ((shown.y - self.capture.y) as f64 + shown.height as f64) * self.scale_y;
        let w = (x1.ceil() as i32 - x0).max(1) as u32;
        let h = (y1.ceil() as i32 - y0).max(1) as u32;
        Some((x0, y0, w, h))
    }
}

fn axis_to_physical(image: f64, scale: f64, origin: i32, extent: u32) -> i32 {
    // Centre of the image pixel the point falls in, divided back into physical pixels.
    let offset = ((image.floor() + 0.5) / scale).floor() as i64;
    let offset = offset.clamp(0, extent.max(1) as i64 - 1);
    (origin as i64 + offset) as i32
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fhd() -> Rect {
        Rect::new(0, 0, 1920, 1080)
    }

    #[test]
    fn the_longest_edge_budget_caps_either_side_and_never_upscales() {
        let wide = ViewGeometry::fit(fhd(), ImageBudget::longest_edge(fhd(), 1600));
        assert_eq!((wide.width, wide.height), (1600, 900));
        assert!((wide.scale - 1600.0 / 1920.0).abs() < 1e-9);
        let tall_rect = Rect::new(5, 5, 900, 2400);
        let tall = ViewGeometry::fit(tall_rect, ImageBudget::longest_edge(tall_rect, 1600));
        assert!(tall.height <= 1600 && tall.height >= 1599, "{tall:?}");
        assert_eq!(tall.width, 600);
        let small = Rect::new(0, 0, 640, 480);
        let v = ViewGeometry::fit(small, ImageBudget::longest_edge(small, 1600));
        assert_eq!((v.width, v.height, v.scale), (640, 480, 1.0));
    }

    #[test]
    fn fit_applies_width_then_pixel_budget_and_never_upscales() {
        let v = ViewGeometry::fit(fhd(), ImageBudget::default());
        assert!(
            v.width <= 1280 && (v.width as u64 * v.height as u64) <= 600_000,
            "{v:?}"
        );
        assert_eq!((v.width, v.height), (1032, 580));
        let v = ViewGeometry::fit(
            fhd(),
            ImageBudget {
                max_width: 800,
                max_pixels: 600_000,
            },
        );
        assert_eq!((v.width, v.height), (800, 450));
        let small = ViewGeometry::fit(Rect::new(10, 10, 300, 200), ImageBudget::default());
        assert_eq!((small.width, small.height, small.scale), (300, 200, 1.0));
        let sliver = ViewGeometry::fit(Rect::new(0, 0, 100_000, 1), ImageBudget::default());
        assert_eq!((sliver.width, sliver.height), (1280, 1));
    }

    #[test]
    fn scale_one_is_identity_with_offset_origin() {
        let v = ViewGeometry::new(Rect::new(100, 50, 640, 480), 640, 480);
        assert_eq!(v.image_to_physical(0.0, 0.0).unwrap(), Point::new(100, 50));
        assert_eq!(
            v.image_to_physical(639.0, 479.0).unwrap(),
            Point::new(739, 529)
        );
        assert_eq!(
            v.image_to_physical(10.7, 20.2).unwrap(),
            Point::new(110, 70)
        );
        assert_eq!(v.physical_to_image(Point::new(739, 529)), Some((639, 479)));
    }

    #[test]
    fn edges_round_inside_the_capture() {
        let v = ViewGeometry::fit(
            fhd(),
            ImageBudget {
                max_width: 800,
                max_pixels: 600_000,
            },
        );
        let last = v.image_to_physical(799.0, 449.0).unwrap();
        assert!(last.x <= 1919 && last.y <= 1079, "{last:?}");
        assert!(last.x >= 1917 && last.y >= 1077, "{last:?}");
        assert_eq!(
            v.image_to_physical(0.0, 0.0).unwrap(),
            Point::new(1, 1),
            "centre of the first 2.4 px"
        );
        assert!(v.image_to_physical(800.0, 0.0).is_err());
        assert!(v.image_to_physical(-0.1, 0.0).is_err());
        assert!(v.image_to_physical(f64::NAN, 0.0).is_err());
    }

    #[test]
    fn fractional_scale_round_trips_within_one_physical_pixel() {
        for budget in [
            ImageBudget {
                max_width: 800,
                max_pixels: 600_000,
            },
            ImageBudget::default(),
        ] {
            let v = ViewGeometry::fit(fhd(), budget);
            for px in (0..1920).step_by(7) {
                let p = Point::new(px, (px * 1080 / 1920).min(1079));
                let (ix, iy) = v.physical_to_image(p).unwrap();
                let back = v.image_to_physical(ix as f64, iy as f64).unwrap();
                let tolerance = (1.0 / v.scale).ceil() as i32;
                assert!(
                    (back.x - p.x).abs() <= tolerance && (back.y - p.y).abs() <= tolerance,
                    "{p:?} -> {back:?}"
                );
            }
        }
    }

    #[test]
    fn negative_monitor_origins_map_correctly() {
        let left = Rect::new(-1280, -200, 1280, 1024);
        let v = ViewGeometry::fit(
            left,
            ImageBudget {
                max_width: 640,
                max_pixels: 600_000,
            },
        );
        assert_eq!((v.width, v.height), (640, 512));
        assert_eq!(
            v.image_to_physical(0.0, 0.0).unwrap(),
            Point::new(-1279, -199)
        );
        assert_eq!(
            v.image_to_physical(639.0, 511.0).unwrap(),
            Point::new(-1, 823)
        );
        assert_eq!(v.physical_to_image(Point::new(-1, 823)), Some((639, 511)));
        assert_eq!(v.physical_to_image(Point::new(0, 0)), None);
    }
}
