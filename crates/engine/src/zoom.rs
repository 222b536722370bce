//! `zoom`: an image-space rectangle of a screenshot mapped to physical pixels
//! (`coords::image_rect_to_physical`), captured again at `scale` 1–4 within the image budget,
//! and registered as a screenshot of its own with its source's pin (re-checked first), so
//! points read off the zoom map back through the same checks.

use deskpilot_types::Rect;

use crate::capture::Screenshot;
use crate::coords::ViewGeometry;
use crate::decorate::Decorations;
use crate::note::{Note, clamp_max_width};
use crate::pipeline::ImageFormat;
use crate::registry::{ScreenshotId, recheck_pin};
use crate::{error::Error, session::Session};

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

impl Session {
    /// A closer look at part of a screenshot: the physical pixels behind an image-space
    /// `region` of screenshot `of` (the last one when `None`), captured now at native
    /// resolution times `scale` (1–4, within the image budget). The result is a screenshot of
    /// its own, pinned to the same window as its source, so points read off it map back.
    pub fn zoom(&self, request: &ZoomRequest) -> Result<Screenshot, Error> {
        let source = match request.of {
            Some(id) => self.screenshot_record(id)?,
            None => self
                .shots_now()
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
        let windows = self.desktop().windows.list_windows()?;
        let window = recheck_pin(&windows, source.window)?;
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
        let c = self.capture_view(
            rect,
            None,
            geometry,
            source.window,
            format,
            &|_| Decorations::default(),
            None,
        )?;
        let view = c.view;
        if view.scale < source.view.scale {
            notes.push(Note::ZoomNotCloser { scale: view.scale });
        }
        Ok(c.into_screenshot(window, notes))
    }
}

#[cfg(test)]
mod zoom_tests {
    use deskpilot_backend::FakeDesktop;
    use deskpilot_types::{ErrorCode, Point};

    use super::*;
    use crate::{
        capture::{CaptureTarget, ScreenshotRequest},
        config::{EngineConfig, HitTestMode},
        pointer::{CoordinateSpace, PointerTarget},
    };

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
