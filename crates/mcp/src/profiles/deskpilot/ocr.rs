//! `ocr`: text read off the pixels of the screen, a monitor, a window or a region, with boxes
//! in the pixel space of a screenshot it registers, so x/y read off a line click like x/y read
//! off that screenshot. Always labelled `source: ocr`: an engine's reading, not accessibility
//! data.

use deskpilot_engine::{CaptureTarget, Error, OcrRequest, OcrResult, WindowRef};
use rmcp::model::{CallToolResult, ContentBlock};
use rmcp::{tool, tool_router};
use serde::Deserialize;
use serde_json::{Value, json};

use super::screenshot::RegionArg;
use super::{DeskpilotServer, error};
use crate::kit::{Parameters, render};

/// Reading a full screen with two languages takes a few seconds; give it room.
const OCR_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(90);
/// Lines listed in the text block when `max_lines` is not given.
const DEFAULT_MAX_LINES: usize = 200;

#[derive(Debug, Default, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct OcrArgs {
    /// This window (default: the screen).
    #[serde(
        default,
        alias = "hwnd",
        deserialize_with = "crate::kit::args::window_id"
    )]
    pub window_id: u64,
    /// Or title/process.
    #[serde(default, alias = "titleMatch")]
    pub title_match: String,
    /// Or this physical rectangle.
    #[serde(default)]
    pub region: Option<RegionArg>,
    /// Or this monitor; -1: all.
    #[serde(default = "all_monitors")]
    pub monitor: i64,
    /// "eng", "chi_sim" or "eng+chi_sim" (default).
    #[serde(default)]
    pub lang: String,
    /// Drop words below it, 0–100 (default 50).
    #[serde(default = "default_confidence", alias = "minConfidence")]
    pub min_confidence: f32,
    /// Lines listed (default 200).
    #[serde(default, alias = "maxLines")]
    pub max_lines: usize,
    /// + image, lines boxed.
    #[serde(default)]
    pub annotate: bool,
}

fn all_monitors() -> i64 {
    -1
}

fn default_confidence() -> f32 {
    deskpilot_engine::DEFAULT_MIN_CONFIDENCE
}

/// `"eng+chi_sim"`, `"eng, chi_sim"` → the codes.
pub(crate) fn languages(lang: &str) -> Vec<String> {
    lang.split(['+', ',', ' '])
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .map(str::to_string)
        .collect()
}

impl OcrArgs {
    fn request(&self) -> Result<OcrRequest, Error> {
        let target = super::screenshot::capture_target(
            self.window_id,
            &self.title_match,
            self.region,
            self.monitor,
        )?;
        let mut request = OcrRequest::new(target);
        request.languages = languages(&self.lang);
        request.min_confidence = self.min_confidence;
        request.annotate = self.annotate;
        Ok(request)
    }
}

/// What the lines were read from, for the text.
pub(crate) fn described(read: &OcrResult) -> String {
    match (&read.screenshot.window, read.screenshot.view.capture) {
        (Some(w), _) => format!("window {} \"{}\"", w.id, w.title),
        (None, r) => format!("{r}"),
    }
}

/// One line as structuredContent shows it.
pub(crate) fn line_json(l: &deskpilot_engine::TextLine) -> Value {
    json!({
        "text": l.line.text,
        "confidence": (l.line.confidence * 10.0).round() / 10.0,
        "bounds": l.line.bounds,
        "image_bounds": l.image.map(|(x, y, w, h)| json!({"x": x, "y": y, "width": w, "height": h})),
        "center": l.image_centre.map(|(x, y)| json!({"x": x, "y": y})),
        "physical_center": l.centre,
        "words": l.line.words.iter().map(|w| json!({
            "text": w.text,
            "confidence": (w.confidence * 10.0).round() / 10.0,
            "bounds": w.bounds,
            "language": w.language,
        })).collect::<Vec<_>>(),
        "source": "ocr",
    })
}

/// The text and structured result of an OCR read.
pub(crate) fn rendered(read: &OcrResult, max_lines: usize, with_image: bool) -> CallToolResult {
    let shot = &read.screenshot;
    let v = &shot.view;
    let mut text = format!(
        "OCR (source: ocr — read off pixels by {engine} [{langs}], not accessibility data) of {what}: \
         {n} lines in {ms} ms{reused}.\n\
         Boxes and centres are in the pixels of screenshot {id} ({w}x{h}, scale {scale:.4}): \
         click a line's centre with screenshot_id {id}.",
        engine = read.engine,
        langs = read.languages.join("+"),
        what = described(read),
        n = read.lines.len(),
        ms = read.elapsed.as_millis(),
        reused = if read.reused.0 > 0 {
            format!(
                " ({} of {} parts unchanged since an earlier read)",
                read.reused.0, read.reused.1
            )
        } else {
            String::new()
        },
        id = shot.id,
        w = v.width,
        h = v.height,
        scale = v.scale,
    );
    render::masks_and_notes(&mut text, shot.masked_regions, &shot.notes, |n| {
        format!("{n} privacy-masked regions are blacked out and were not read.")
    });
    if read.dropped_words > 0 {
        text.push_str(&format!(
            "\n{} words below the confidence threshold were left out (min_confidence lowers it).",
            read.dropped_words
        ));
    }
    let max_lines = if max_lines == 0 {
        DEFAULT_MAX_LINES
    } else {
        max_lines
    };
    for (i, l) in read.lines.iter().take(max_lines).enumerate() {
        match (l.image_centre, l.image) {
            (Some((cx, cy)), Some((x, y, w, h))) => text.push_str(&format!(
                "\n{}. \"{}\" at ({cx}, {cy}) box [{x},{y} {w}x{h}] conf {:.0}",
                i + 1,
                l.line.text,
                l.line.confidence
            )),
            _ => text.push_str(&format!(
                "\n{}. \"{}\" (outside the image) conf {:.0}",
                i + 1,
                l.line.text,
                l.line.confidence
            )),
        }
    }
    if read.lines.len() > max_lines {
        text.push_str(&format!(
            "\n… {} more lines in structuredContent (max_lines raises the limit).",
            read.lines.len() - max_lines
        ));
    }
    if read.lines.is_empty() {
        text.push_str("\nNo text was found.");
    }
    let mut content = vec![ContentBlock::text(text)];
    if with_image {
        use base64::Engine as _;
        content.push(ContentBlock::image(
            base64::engine::general_purpose::STANDARD.encode(&shot.image.bytes),
            shot.image.format.mime_type(),
        ));
    }
    let mut result = CallToolResult::success(content);
    result.structured_content = Some(json!({
        "source": "ocr",
        "engine": read.engine,
        "languages": read.languages,
        "elapsed_ms": read.elapsed.as_secs_f64() * 1e3,
        "screenshot_id": shot.id,
        "view": v,
        "window": shot.window,
        "lines": read.lines.iter().map(line_json).collect::<Vec<_>>(),
        "dropped_words": read.dropped_words,
        "parts": { "total": read.reused.1, "unchanged": read.reused.0 },
        "masked_regions": shot.masked_regions,
        "notes": shot.notes,
    }));
    result
}

#[tool_router(router = ocr_router, vis = "pub(crate)")]
impl DeskpilotServer {
    /// OCR (terminals, canvases): lines, confidence, centres in its screenshot's pixels.
    #[tool(
        name = "ocr",
        annotations(
            title = "OCR",
            read_only_hint = true,
            destructive_hint = false,
            idempotent_hint = false,
            open_world_hint = false
        )
    )]
    pub async fn ocr(
        &self,
        Parameters(args): Parameters<OcrArgs>,
        context: rmcp::service::RequestContext<rmcp::RoleServer>,
    ) -> CallToolResult {
        let request = match args.request() {
            Ok(r) => r,
            Err(e) => return error(&e),
        };
        let session = self.session();
        let title_match = args.title_match.clone();
        // A cancelled call reads no further and registers nothing (`CANCELLED`).
        let read = crate::kit::tasks::stoppable(&context.ct, OCR_TIMEOUT, "ocr", move || {
            let mut request = request;
            if !title_match.is_empty() {
                let w = session.resolve_window(&WindowRef::TitleMatch(title_match))?;
                request.target = CaptureTarget::Window(w.id);
            }
            session.ocr(&request)
        })
        .await;
        match read {
            Ok(read) => rendered(&read, args.max_lines, args.annotate),
            Err(e) => error(&e),
        }
    }
}
