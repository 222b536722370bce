//! A page's screenshot, taken by the browser itself (`Page.captureScreenshot`: the page as it
//! draws itself, whatever covers its window) and, when the page shows on this desktop, placed
//! where it shows: registered like any screenshot, so x/y read off it work with the desktop
//! `click` as well, pinned to the browser's window.
//!
//! Where the viewport sits inside the browser window is worked out from the page's own
//! `screenX`/`outerWidth`/`innerWidth`…: the frame Chromium draws around the viewport is even
//! on the sides and all above it, except for a resize border below it where the backend says
//! windows have one (Windows; unverified here).
//!
//! Every password field showing is painted over (solid black) before anything reads the image:
//! their boxes are read in deskpilot's isolated world just before the capture (frames of another
//! origin looked into through their own frames) and the top frame's again just after it, and
//! both are painted, so a field that moved in between is covered where it was and where it
//! is. A page that does not say where its password fields are gets no screenshot.

use std::time::Duration;

use deskpilot_backend::{Frame, PixelFormat};
use deskpilot_browser::page as cdp_page;
use deskpilot_browser::script::{self, Metrics};
use deskpilot_types::{ErrorCode, Rect, WindowInfo};

use super::{PageInfo, coded, lock, unavailable};
use crate::capture::Screenshot;
use crate::coords::ViewGeometry;
use crate::decorate::Decorations;
use crate::note::Note;
use crate::pipeline::{self, ImageFormat};
use crate::{engine::WindowFilter, error::Error, session::Session};

/// How long the browser may take to draw a frame for the screenshot (a page in a hidden tab
/// never does).
const DRAW: Duration = Duration::from_secs(5);

/// How long each look for the page's password fields may take.
const PASSWORD_LOOKUP: Duration = Duration::from_secs(3);

/// The image-pixel rectangles (clipped to `width` x `height`) of `boxes` (viewport CSS
/// pixels) at pixel ratio `ratio`, grown outwards to whole pixels.
fn mask_rects(boxes: &[cdp_page::Box], ratio: f64, width: u32, height: u32) -> Vec<Rect> {
    boxes
        .iter()
        .filter_map(|b| {
            let px = |v: f64, hi: u32| (v * ratio).clamp(0.0, f64::from(hi));
            let (l, t) = (px(b[0], width).floor(), px(b[1], height).floor());
            let (r, bo) = (px(b[2], width).ceil(), px(b[3], height).ceil());
            (r > l && bo > t)
                .then(|| Rect::new(l as i32, t as i32, (r - l) as u32, (bo - t) as u32))
        })
        .collect()
}

/// A page's screenshot.
#[derive(Debug, Clone)]
pub struct PageShot {
    pub page: PageInfo,
    /// Registered (its id usable by desktop tools) when `on_screen`; id 0 otherwise.
    pub screenshot: Screenshot,
    /// Where the captured area shows on the desktop, in physical pixels.
    pub on_screen: Option<Rect>,
}

/// The page's window geometry as the page sees it (CSS pixels) and its pixel ratio, placed on
/// the desktop.
#[derive(Debug, Clone, Copy)]
struct Geometry(Metrics);

impl Geometry {
    /// The window as the page reports it, in physical pixels.
    fn window(&self) -> Rect {
        let m = &self.0;
        let r = m.ratio;
        Rect::new(
            (m.screen_x * r).round() as i32,
            (m.screen_y * r).round() as i32,
            (m.outer_w * r).round() as u32,
            (m.outer_h * r).round() as u32,
        )
    }

    /// The viewport's top-left corner on the desktop, in physical pixels, given the window's
    /// client rectangle and whether its outer size counts a resize border below it.
    fn viewport_origin(&self, client: Rect, border_below: bool) -> (i32, i32) {
        let m = &self.0;
        let r = m.ratio;
        let side = ((m.outer_w - m.inner_w) * r / 2.0).max(0.0);
        let below = if border_below { side } else { 0.0 };
        let above = ((m.outer_h - m.inner_h) * r - below).max(0.0);
        (
            client.x + side.round() as i32,
            client.y + above.round() as i32,
        )
    }
}

fn decode_png(bytes: &[u8]) -> Option<(u32, u32, Vec<u8>)> {
    let mut decoder = png::Decoder::new(std::io::Cursor::new(bytes));
    decoder.set_transformations(png::Transformations::EXPAND | png::Transformations::STRIP_16);
    let mut reader = decoder.read_info().ok()?;
    let mut buf = vec![0; reader.output_buffer_size()?];
    let info = reader.next_frame(&mut buf).ok()?;
    buf.truncate(info.buffer_size());
    let rgba = match info.color_type {
        png::ColorType::Rgba => buf,
        png::ColorType::Rgb => buf
            .chunks_exact(3)
            .flat_map(|p| [p[0], p[1], p[2], 255])
            .collect(),
        png::ColorType::GrayscaleAlpha => buf
            .chunks_exact(2)
            .flat_map(|p| [p[0], p[0], p[0], p[1]])
            .collect(),
        png::ColorType::Grayscale => buf.iter().flat_map(|&g| [g, g, g, 255]).collect(),
        png::ColorType::Indexed => return None,
    };
    Some((info.width, info.height, rgba))
}

/// The `area` (image pixels) of an RGBA image `width` wide.
fn crop(rgba: &[u8], width: u32, area: Rect) -> Vec<u8> {
    let mut out = Vec::with_capacity(area.width as usize * area.height as usize * 4);
    for y in area.y..area.y + area.height as i32 {
        let start = (y as usize * width as usize + area.x as usize) * 4;
        out.extend_from_slice(&rgba[start..start + area.width as usize * 4]);
    }
    out
}

impl Session {
    /// The page's viewport (or the element `scope` names, scrolled into view) as the browser
    /// draws it. On the desktop it is registered as a screenshot of where it shows.
    pub fn browser_screenshot(
        &self,
        page: Option<&str>,
        scope: &str,
        format: Option<ImageFormat>,
        max_width: Option<u32>,
    ) -> Result<PageShot, Error> {
        let mut notes = Vec::new();
        let (cdp, session, info, element) = if scope.trim().is_empty() {
            let (cdp, session, info) = self.page(page)?;
            (cdp, session, info, None)
        } else {
            let (cdp, session, info, t) = self.resolve_ref(scope)?;
            (cdp, session, info, Some(t))
        };
        let headless = lock(&self.browsers())
            .list
            .iter()
            .find(|b| b.id == info.browser)
            .is_some_and(|b| b.headless);
        let box_css = match &element {
            None => None,
            Some(t) => Some(super::refs::visible_quad(&cdp, &session, t, "to show")?.bounds()),
        };
        let geometry = script::metrics(&cdp, &session).map(Geometry);
        let looked = std::time::Instant::now();
        let no_masks = |e: deskpilot_browser::Error| {
            coded(
                ErrorCode::BrowserUnavailable,
                format!(
                    "\"{}\" did not say where its password fields are ({e}), so no screenshot was \
                     taken: it could show them. Hint: answer an open dialog (browser_dialog) or \
                     wait for the page, then try again.",
                    info.title
                ),
            )
        };
        let passwords =
            cdp_page::password_boxes(&cdp, &session, PASSWORD_LOOKUP).map_err(no_masks)?;
        let mut lookup = looked.elapsed();
        let png = cdp_page::capture_png(&cdp, &session, DRAW).map_err(|e| match e {
                deskpilot_browser::Error::Timeout { .. } => coded(
                    ErrorCode::BrowserUnavailable,
                    format!(
                        "\"{}\" drew no frame within {} s (a background tab or a minimized window does not draw); bring it to the front first",
                        info.title,
                        DRAW.as_secs()
                    ),
                ),
                other => unavailable(other),
            })?;
        let again = std::time::Instant::now();
        let moved = passwords
            .again(&cdp, &session, PASSWORD_LOOKUP)
            .map_err(no_masks)?;
        lookup += again.elapsed();
        let bytes = png
            .and_then(|b| decode_png(&b))
            .ok_or_else(|| coded(ErrorCode::BrowserUnavailable, "the browser sent no image"))?;
        let (width, height, mut rgba) = bytes;
        let ratio = geometry.map_or(1.0, |g| g.0.ratio);
        // Painted on the whole viewport, before any crop reads it.
        let before = mask_rects(&passwords.boxes, ratio, width, height);
        let after = mask_rects(&moved, ratio, width, height);
        pipeline::apply_masks(
            &mut Frame {
                rect: Rect::new(0, 0, width, height),
                format: PixelFormat::Rgba,
                data: &mut rgba[..],
            },
            &[before.as_slice(), after.as_slice()].concat(),
        );
        tracing::debug!(
            fields = before.len().max(after.len()),
            other_origin_frames = passwords.frames,
            lookup_ms = lookup.as_secs_f64() * 1000.0,
            "page screenshot: password fields painted over"
        );
        let area = match box_css {
            None => Rect::new(0, 0, width, height),
            Some((x0, y0, x1, y1)) => {
                let px = |v: f64, hi: u32| ((v * ratio).round().max(0.0) as u32).min(hi);
                let (l, t) = (px(x0, width), px(y0, height));
                let (r, b) = (px(x1, width), px(y1, height));
                if r <= l || b <= t {
                    return Err(coded(
                        ErrorCode::ElementCovered,
                        "the element is outside the page's viewport",
                    ));
                }
                if (x1 - x0) * ratio > (r - l) as f64 + 1.0
                    || (y1 - y0) * ratio > (b - t) as f64 + 1.0
                {
                    notes.push(Note::LargerThanViewport);
                }
                Rect::new(l as i32, t as i32, r - l, b - t)
            }
        };
        // The fields that show in what is handed out.
        let masked_regions = [&before, &after]
            .map(|r| r.iter().filter(|m| m.intersect(&area).is_some()).count())
            .into_iter()
            .max()
            .unwrap_or(0);
        let pixels = if area == Rect::new(0, 0, width, height) {
            rgba
        } else {
            crop(&rgba, width, area)
        };
        let mut budget = self.config().budget;
        if let Some(requested) = max_width {
            budget.max_width = crate::note::clamp_max_width(requested, &mut notes);
        }
        let format = format.unwrap_or(self.config().format);
        let window = match geometry {
            Some(g) if !headless && g.0.visible => self.page_window(&g),
            _ => None,
        };
        let Some((window, origin)) = window else {
            notes.push(Note::PageOffDesktop { headless });
            let frame = Frame {
                rect: Rect::new(0, 0, area.width, area.height),
                format: PixelFormat::Rgba,
                data: pixels,
            };
            let view = ViewGeometry::fit(frame.rect, budget);
            let mut scratch = Vec::new();
            let image =
                pipeline::encode(&frame, &view, format, &mut scratch, &Decorations::default())?;
            return Ok(PageShot {
                page: info,
                screenshot: Screenshot {
                    id: 0,
                    view,
                    image,
                    window: None,
                    masked_regions,
                    notes,
                    capture_time: Duration::ZERO,
                    change: None,
                },
                on_screen: None,
            });
        };
        let rect = Rect::new(
            origin.0 + area.x,
            origin.1 + area.y,
            area.width,
            area.height,
        );
        let frame = Frame {
            rect,
            format: PixelFormat::Rgba,
            data: pixels,
        };
        let pin = Some(crate::registry::Pin::of(&window));
        let c = self.capture_view(
            rect,
            Some(frame),
            |r| ViewGeometry::fit(r, budget),
            pin,
            format,
            &|_| Decorations::default(),
            None,
        )?;
        let mut screenshot = c.into_screenshot(Some(window), notes);
        screenshot.masked_regions += masked_regions;
        Ok(PageShot {
            page: info,
            screenshot,
            on_screen: Some(rect),
        })
    }

    /// The desktop window showing a page with geometry `g`, and the viewport's origin in it.
    fn page_window(&self, g: &Geometry) -> Option<(WindowInfo, (i32, i32))> {
        let expected = g.window();
        let close = |a: Rect| {
            (a.x - expected.x).abs() <= 2
                && (a.y - expected.y).abs() <= 2
                && (a.width as i64 - expected.width as i64).abs() <= 2
                && (a.height as i64 - expected.height as i64).abs() <= 2
        };
        let windows = self.list_windows(&WindowFilter::default()).ok()?;
        let w = windows
            .into_iter()
            .filter(|w| !w.state.minimized && (close(w.client) || close(w.frame)))
            .min_by_key(|w| w.z)?;
        let client = if close(w.client) { w.client } else { w.frame };
        let origin = g.viewport_origin(client, self.desktop().windows.resize_border_below());
        Some((w, origin))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_viewport_sits_below_the_toolbar_between_even_sides() {
        // Measured on Xvfb + openbox with Debian's chromium: window 900x600 at (100, 80),
        // inner 892x453; the page's (0, 0) showed at (104, 227).
        let g = Geometry(Metrics {
            screen_x: 100.0,
            screen_y: 80.0,
            outer_w: 900.0,
            outer_h: 600.0,
            inner_w: 892.0,
            inner_h: 453.0,
            ratio: 1.0,
            visible: true,
        });
        assert_eq!(g.window(), Rect::new(100, 80, 900, 600));
        assert_eq!(g.viewport_origin(g.window(), false), (104, 227));
        // Where the backend says a resize border runs below the window too.
        assert_eq!(g.viewport_origin(g.window(), true), (104, 223));
    }

    #[test]
    fn password_boxes_become_whole_pixels_inside_the_image() {
        let boxes = [
            [10.2, 20.7, 50.5, 40.1],
            [90.0, 5.0, 130.0, 15.0],
            [5.0, 5.0, 5.0, 9.0],
        ];
        assert_eq!(
            mask_rects(&boxes, 2.0, 200, 100),
            vec![Rect::new(20, 41, 81, 40), Rect::new(180, 10, 20, 20)]
        );
    }

    #[test]
    fn crops_rows() {
        let rgba: Vec<u8> = (0..4 * 3 * 4).map(|i| i as u8).collect();
        let c = crop(&rgba, 4, Rect::new(1, 1, 2, 2));
        assert_eq!(
            c,
            [
                20, 21, 22, 23, 24, 25, 26, 27, 36, 37, 38, 39, 40, 41, 42, 43
            ]
        );
    }
}
