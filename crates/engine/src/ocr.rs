//! `ocr`: text read off the pixels of a screen, monitor, window or region, placed both in
//! physical pixels and in the pixel space of a screenshot registered with it.
//!
//! The capture is privacy-masked before the OCR engine sees it (the engine gets a gray copy of
//! the masked frame), then the same frame becomes an ordinary screenshot: a point read off an
//! OCR line clicks exactly like one read off that screenshot, with the same pin and hit test.
//! Every line says it came from OCR; nothing here is accessibility data.

use std::time::Duration;

use deskpilot_backend::{GrayImage, OcrRequest as EngineRequest};
use deskpilot_types::{OcrLine, Point, Rect};

use crate::capture::Resolved;
use crate::coords::ViewGeometry;
use crate::decorate::{Decorations, Marker};
use crate::pipeline::ImageFormat;
use crate::{
    capture::{CaptureTarget, Screenshot},
    error::Error,
    session::Session,
};

/// Lines below this confidence (0–100) are left out unless asked for.
pub const DEFAULT_MIN_CONFIDENCE: f32 = 50.0;

/// An OCR request after argument parsing.
#[derive(Debug, Clone, PartialEq)]
pub struct OcrRequest {
    pub target: CaptureTarget,
    /// Engine language codes; empty for the engine's default (English + Simplified Chinese
    /// where installed).
    pub languages: Vec<String>,
    /// Words below this confidence (0–100) are dropped.
    pub min_confidence: f32,
    /// Draw the lines on the screenshot as numbered boxes.
    pub annotate: bool,
    pub max_width: Option<u32>,
    pub format: Option<ImageFormat>,
}

impl OcrRequest {
    pub fn new(target: CaptureTarget) -> OcrRequest {
        OcrRequest {
            target,
            languages: Vec::new(),
            min_confidence: DEFAULT_MIN_CONFIDENCE,
            annotate: false,
            max_width: None,
            format: None,
        }
    }
}

/// One recognised line, placed.
#[derive(Debug, Clone, PartialEq)]
pub struct TextLine {
    /// Text, confidence, words; bounds in physical pixels.
    pub line: OcrLine,
    /// The line's bounds in the screenshot's pixels (x, y, width, height).
    pub image: Option<(i32, i32, u32, u32)>,
    /// The line's centre in physical pixels.
    pub centre: Point,
    /// The line's centre in the screenshot's pixels: what a click by `screenshot_id` takes.
    pub image_centre: Option<(u32, u32)>,
}

/// What `ocr` returns.
#[derive(Debug, Clone)]
pub struct OcrResult {
    /// The screenshot the lines are placed in (registered like any other).
    pub screenshot: Screenshot,
    pub lines: Vec<TextLine>,
    /// Words left out for their confidence.
    pub dropped_words: usize,
    pub engine: String,
    pub languages: Vec<String>,
    /// Time spent reading (the capture not included).
    pub elapsed: Duration,
    /// Parts of the image answered from memory because their pixels had not changed, and parts
    /// in all.
    pub reused: (usize, usize),
}

impl OcrResult {
    /// Lines whose text contains `needle`: exact matches (case- and width-folded) first, then
    /// lines that match only as OCR reads text ([`crate::matcher::text_match`]: "LATER 927 1" for
    /// "later 9271"), each best confidence first.
    pub fn matching(&self, needle: &str) -> Vec<&TextLine> {
        let mut found: Vec<(crate::matcher::TextMatch, &TextLine)> = self
            .lines
            .iter()
            .filter_map(|l| Some((crate::matcher::text_match(&l.line.text, needle)?, l)))
            .collect();
        found.sort_by(|a, b| {
            b.0.cmp(&a.0)
                .then(b.1.line.confidence.total_cmp(&a.1.line.confidence))
        });
        found.into_iter().map(|(_, l)| l).collect()
    }
}

/// The centre of a rectangle.
fn centre(r: Rect) -> Point {
    Point::new(r.x + r.width as i32 / 2, r.y + r.height as i32 / 2)
}

/// Text read off a capture, in physical pixels, before any screenshot is made of it.
pub(crate) struct Reading {
    rect: Rect,
    window: Option<deskpilot_types::WindowInfo>,
    frame: deskpilot_backend::Frame,
    notes: Vec<crate::note::Note>,
    pub(crate) lines: Vec<OcrLine>,
    dropped_words: usize,
    page: deskpilot_backend::OcrPage,
}

impl Reading {
    /// Whether a line contains `needle`, exactly or as OCR reads text
    /// ([`crate::matcher::text_match`]).
    pub(crate) fn contains(&self, needle: &str) -> bool {
        self.lines
            .iter()
            .any(|l| crate::matcher::text_match(&l.text, needle).is_some())
    }
}

impl Session {
    /// Reads the text in `request.target` and registers the capture as a screenshot.
    pub fn ocr(&self, request: &OcrRequest) -> Result<OcrResult, Error> {
        crate::cancel::check("reading text")?;
        let reading = self.read_text(request)?;
        // A read its client took back registers nothing.
        crate::cancel::check("reading text")?;
        self.place_reading(reading, request)
    }

    /// Reads the text in `request.target` without registering anything (a poll that may
    /// find nothing must not push the agent's screenshots out of the registry).
    pub(crate) fn read_text(&self, request: &OcrRequest) -> Result<Reading, Error> {
        if !(0.0..=100.0).contains(&request.min_confidence) {
            return Err(Error::InvalidArgument {
                message: format!(
                    "min_confidence {} is outside 0..=100",
                    request.min_confidence
                ),
            });
        }
        let Resolved {
            rect,
            window,
            drawn,
            notes,
        } = self.resolve_target(request.target)?;
        // Password fields are looked for while the pixels are grabbed.
        let own = drawn.as_ref().and(window.as_ref().map(|w| w.id));
        let masks = self.masks_for(rect, own);
        let mut frame = match drawn {
            Some(frame) => frame,
            None => self.desktop().capture.capture(rect)?,
        };
        // Masks first: the OCR engine never sees what a mask covers (nor a password field).
        masks.wait().paint(&mut frame);
        let gray = GrayImage::from_frame(&frame);
        let mut page = self.desktop().ocr.recognize(
            &gray,
            &EngineRequest {
                languages: request.languages.clone(),
            },
        )?;
        drop(gray);
        let mut dropped_words = 0;
        let mut physical: Vec<OcrLine> = Vec::new();
        for line in std::mem::take(&mut page.lines) {
            let words: Vec<_> = line
                .words
                .into_iter()
                .filter(|w| {
                    let keep = w.confidence >= request.min_confidence;
                    dropped_words += usize::from(!keep);
                    keep
                })
                .map(|mut w| {
                    w.bounds.x += rect.x;
                    w.bounds.y += rect.y;
                    w
                })
                .collect();
            if !words.is_empty() {
                physical.push(OcrLine::from_words(words));
            }
        }
        Ok(Reading {
            rect,
            window,
            frame,
            notes,
            lines: physical,
            dropped_words,
            page,
        })
    }

    /// Registers the capture a reading came from as a screenshot and places its lines in it.
    pub(crate) fn place_reading(
        &self,
        reading: Reading,
        request: &OcrRequest,
    ) -> Result<OcrResult, Error> {
        let Reading {
            rect,
            window,
            frame,
            mut notes,
            lines: physical,
            dropped_words,
            page,
        } = reading;
        let mut budget = self.config().budget;
        if let Some(requested) = request.max_width {
            budget.max_width = crate::note::clamp_max_width(requested, &mut notes);
        }
        let pin = window.as_ref().map(crate::registry::Pin::of);
        let format = request.format.unwrap_or(self.config().format);
        let annotate = request.annotate;
        let boxes: Vec<Rect> = physical.iter().map(|l| l.bounds).collect();
        let decorations = move |view: &ViewGeometry| {
            if !annotate {
                return Decorations::default();
            }
            Decorations {
                pins: boxes
                    .iter()
                    .enumerate()
                    .filter_map(|(i, b)| {
                        Some(Marker {
                            number: i + 1,
                            rect: view.physical_rect_to_image(*b)?,
                        })
                    })
                    .collect(),
                ..Decorations::default()
            }
        };
        let c = self.capture_view(
            rect,
            Some(frame),
            |r| ViewGeometry::fit(r, budget),
            pin,
            format,
            &decorations,
            None,
        )?;
        let view = c.view;
        let lines = physical
            .into_iter()
            .map(|line| {
                let centre = centre(line.bounds);
                TextLine {
                    image: view.physical_rect_to_image(line.bounds),
                    image_centre: view.physical_to_image(centre),
                    centre,
                    line,
                }
            })
            .collect();
        Ok(OcrResult {
            screenshot: c.into_screenshot(window, notes),
            lines,
            dropped_words,
            engine: page.engine,
            languages: page.languages,
            elapsed: page.elapsed,
            reused: page.reused,
        })
    }
}

#[cfg(test)]
mod tests {
    use deskpilot_backend::FakeDesktop;
    use deskpilot_backend::fake::FakeWindow;
    use deskpilot_types::ErrorCode;

    use super::*;
    use crate::config::EngineConfig;
    use crate::coords::ImageBudget;

    fn session(fake: &FakeDesktop, masks: Vec<Rect>) -> Session {
        let config = EngineConfig {
            mask_regions: masks,
            budget: ImageBudget {
                max_width: 800,
                ..ImageBudget::default()
            },
            ..EngineConfig::default()
        };
        Session::standalone(fake.desktop(), config)
    }

    #[test]
    fn lines_are_placed_in_physical_and_screenshot_pixels() {
        let fake = FakeDesktop::new(1600, 900);
        fake.paint(Rect::new(100, 200, 60, 20), [77, 77, 77]);
        fake.ocr().write(77, "Save", 91.0);
        let s = session(&fake, Vec::new());
        let read = s.ocr(&OcrRequest::new(CaptureTarget::Screen)).unwrap();
        assert_eq!(read.lines.len(), 1);
        let line = &read.lines[0];
        assert_eq!(line.line.text, "Save");
        assert_eq!(line.line.bounds, Rect::new(100, 200, 60, 20));
        assert_eq!(line.centre, Point::new(130, 210));
        // 1600 wide at max_width 800: half size.
        assert_eq!(line.image_centre, Some((65, 105)));
        // The point maps back through the registered screenshot to the same physical pixel.
        let record = s.screenshot_record(read.screenshot.id).unwrap();
        let back = record.view.image_to_physical(65.5, 105.5).unwrap();
        assert!(
            (back.x - 130).abs() <= 1 && (back.y - 210).abs() <= 1,
            "{back:?}"
        );
    }

    #[test]
    fn a_region_offsets_the_words_and_confidence_filters_them() {
        let fake = FakeDesktop::new(1000, 800);
        fake.paint(Rect::new(300, 300, 40, 10), [90, 90, 90]);
        fake.paint(Rect::new(300, 330, 40, 10), [91, 91, 91]);
        fake.ocr().write(90, "Apply", 88.0);
        fake.ocr().write(91, "~~", 12.0);
        let s = session(&fake, Vec::new());
        let mut request = OcrRequest::new(CaptureTarget::Region(Rect::new(250, 250, 200, 200)));
        let read = s.ocr(&request).unwrap();
        assert_eq!(read.lines.len(), 1, "{:?}", read.lines);
        assert_eq!(read.lines[0].line.bounds, Rect::new(300, 300, 40, 10));
        assert_eq!(read.dropped_words, 1);
        request.min_confidence = 0.0;
        assert_eq!(s.ocr(&request).unwrap().lines.len(), 2);
    }

    #[test]
    fn a_masked_word_is_never_read() {
        let fake = FakeDesktop::new(800, 600);
        fake.paint(Rect::new(10, 10, 50, 12), [60, 60, 60]);
        fake.paint(Rect::new(10, 100, 50, 12), [61, 61, 61]);
        fake.ocr().write(60, "public", 95.0);
        fake.ocr().write(61, "secret", 95.0);
        let s = session(&fake, vec![Rect::new(0, 90, 200, 40)]);
        let read = s.ocr(&OcrRequest::new(CaptureTarget::Screen)).unwrap();
        let texts: Vec<_> = read.lines.iter().map(|l| l.line.text.as_str()).collect();
        assert_eq!(texts, vec!["public"]);
        assert_eq!(read.screenshot.masked_regions, 1);
    }

    #[test]
    fn bad_requests_get_their_codes() {
        let fake = FakeDesktop::new(800, 600);
        let id = fake.add_window(FakeWindow::new("Editor", Rect::new(0, 0, 300, 200)));
        let s = session(&fake, Vec::new());
        let mut request = OcrRequest::new(CaptureTarget::Window(id));
        request.languages = vec!["klingon".to_string()];
        assert_eq!(
            s.ocr(&request).unwrap_err().code(),
            ErrorCode::OcrLanguageMissing
        );
        request.languages.clear();
        request.min_confidence = 120.0;
        assert_eq!(
            s.ocr(&request).unwrap_err().code(),
            ErrorCode::InvalidArgument
        );
        let off = OcrRequest::new(CaptureTarget::Region(Rect::new(5000, 5000, 10, 10)));
        assert_eq!(
            s.ocr(&off).unwrap_err().code(),
            ErrorCode::RegionOutsideScreen
        );
        let empty = OcrRequest::new(CaptureTarget::Region(Rect::new(5, 5, 0, 10)));
        assert_eq!(
            s.ocr(&empty).unwrap_err().code(),
            ErrorCode::InvalidArgument
        );
    }

    #[test]
    fn find_and_wait_fall_back_to_the_pixels_and_say_so() {
        let fake = FakeDesktop::new(1000, 700);
        let id = fake.add_window(FakeWindow::new("terminal", Rect::new(100, 100, 600, 400)));
        fake.paint(Rect::new(150, 200, 120, 14), [70, 70, 70]);
        fake.ocr().write(70, "build finished", 93.0);
        let s = session(&fake, Vec::new());
        let request = crate::find::FindRequest {
            tree: crate::tree::TreeRequest {
                include_screenshot: false,
                ..crate::tree::TreeRequest::new(crate::window::WindowRef::Id(id))
            },
            description: "build finished".to_string(),
            name_contains: String::new(),
            role: String::new(),
            limit: 5,
            annotate: false,
        };
        let (snapshot, found) = s.find_elements(&request).unwrap();
        let hit = found
            .iter()
            .find(|c| c.source == "ocr")
            .expect("an OCR candidate");
        assert_eq!(hit.name, "build finished");
        assert!(hit.token.is_empty());
        let shot = s.screenshot_record(hit.screenshot_id.unwrap()).unwrap();
        let (x, y) = hit.image.unwrap();
        let p = shot
            .view
            .image_to_physical(x as f64 + 0.5, y as f64 + 0.5)
            .unwrap();
        assert!(Rect::new(150, 200, 120, 14).contains(p), "{p:?}");
        assert!(
            snapshot.notes.iter().any(|n| n.to_string().contains("OCR")),
            "{:?}",
            snapshot.notes
        );

        let o = s
            .wait_for(&crate::wait::WaitRequest {
                kind: crate::wait::WaitKind::Text("finished".to_string()),
                window: Some(crate::window::WindowRef::Id(id)),
                languages: Vec::new(),
                timeout: Duration::from_secs(2),
            })
            .unwrap();
        assert_eq!(o.source, Some("ocr"));
        assert!(o.matched.as_deref().unwrap().contains("build finished"));
        let err = s
            .wait_for(&crate::wait::WaitRequest {
                kind: crate::wait::WaitKind::Text("never printed".to_string()),
                window: Some(crate::window::WindowRef::Id(id)),
                languages: Vec::new(),
                timeout: Duration::from_millis(300),
            })
            .unwrap_err();
        assert_eq!(err.code(), ErrorCode::WaitTimeout);
        assert!(err.to_string().contains("OCR read 1 lines"), "{err}");
        // Only the capture that had the text became a screenshot: the polls that found
        // nothing registered none, so the agent's screenshots stay addressable.
        let matched = o.matched.as_deref().unwrap_or_default();
        let shot: u64 = matched
            .split("in screenshot ")
            .nth(1)
            .and_then(|r| r.split(' ').next())
            .and_then(|n| n.parse().ok())
            .unwrap_or_else(|| panic!("a screenshot id in {matched:?}"));
        let next = s.ocr(&OcrRequest::new(CaptureTarget::Window(id))).unwrap();
        assert_eq!(next.screenshot.id, shot + 1);
    }

    /// Regression (issue 22): OCR read "LATER 9271" as "LATER 927 1", and `wait_for` text
    /// timed out beside it. What OCR does to text is tolerated; an exact reading still wins.
    #[test]
    fn waits_and_matches_tolerate_ocr_spacing_and_prefer_the_exact_line() {
        let fake = FakeDesktop::new(1000, 700);
        let id = fake.add_window(FakeWindow::new("terminal", Rect::new(100, 100, 600, 400)));
        fake.paint(Rect::new(150, 200, 160, 14), [70, 70, 70]);
        fake.ocr().write(70, "LATER 927 1 READY", 97.0);
        let s = session(&fake, Vec::new());
        let o = s
            .wait_for(&crate::wait::WaitRequest {
                kind: crate::wait::WaitKind::Text("LATER 9271".to_string()),
                window: Some(crate::window::WindowRef::Id(id)),
                languages: Vec::new(),
                timeout: Duration::from_secs(2),
            })
            .unwrap();
        assert_eq!(o.source, Some("ocr"));
        assert!(
            o.matched.as_deref().unwrap().contains("LATER 927 1 READY"),
            "{o:?}"
        );
        // A second line with the exact text, read with less confidence, comes first.
        fake.paint(Rect::new(150, 240, 160, 14), [71, 71, 71]);
        fake.ocr().write(71, "LATER 9271 READY", 60.0);
        let read = s.ocr(&OcrRequest::new(CaptureTarget::Window(id))).unwrap();
        let found: Vec<&str> = read
            .matching("later 9271")
            .iter()
            .map(|l| l.line.text.as_str())
            .collect();
        assert_eq!(found, ["LATER 9271 READY", "LATER 927 1 READY"]);
        assert!(read.matching("LATER 9Z71").is_empty());
    }
}
