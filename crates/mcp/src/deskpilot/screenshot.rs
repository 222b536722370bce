//! `screenshot`: the screen, a monitor, a window or a region, budgeted and encoded.

use base64::Engine as _;
use deskpilot_engine::pipeline::ImageFormat;
use deskpilot_engine::{CaptureTarget, Error, ScreenshotRequest};
use deskpilot_types::{Rect, WindowId};
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{CallToolResult, ContentBlock};
use rmcp::{tool, tool_router};
use serde::Deserialize;
use serde_json::json;

use super::{DESKTOP_TIMEOUT, DeskpilotServer};
use crate::render;

/// A physical-pixel rectangle.
#[derive(Debug, Clone, Copy, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RegionArg {
    pub x: i32,
    pub y: i32,
    pub width: u32,
    pub height: u32,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum FormatArg {
    Jpeg,
    Png,
}

#[derive(Debug, Default, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ScreenshotArgs {
    /// Capture this window (an id from list_windows). Omit for the whole screen.
    #[serde(default)]
    pub window_id: u64,
    /// Capture this rectangle in physical screen pixels instead.
    #[serde(default)]
    pub region: Option<RegionArg>,
    /// Capture only this monitor (index from status). -1 or omitted: every monitor.
    #[serde(default = "all_monitors")]
    pub monitor: i64,
    /// Widest image to return, 64–8192 (default 1280; the pixel budget of 600000 still applies).
    #[serde(default, alias = "maxWidth")]
    pub max_width: u32,
    /// "jpeg" (default, quality 80) or "png" (lossless, larger).
    #[serde(default)]
    pub format: Option<FormatArg>,
}

fn all_monitors() -> i64 {
    -1
}

impl ScreenshotArgs {
    fn request(&self) -> Result<ScreenshotRequest, Error> {
        let chosen = [
            self.window_id != 0,
            self.region.is_some(),
            self.monitor >= 0,
        ]
        .iter()
        .filter(|c| **c)
        .count();
        if chosen > 1 {
            return Err(Error::InvalidArgument {
                message: "pass at most one of window_id, region and monitor".to_string(),
            });
        }
        if self.monitor < -1 || self.monitor > u32::MAX as i64 {
            return Err(Error::InvalidArgument {
                message: format!(
                    "monitor {} is not a monitor index; use -1 for every monitor",
                    self.monitor
                ),
            });
        }
        let target = match (self.window_id, self.region, self.monitor) {
            (0, None, -1) => CaptureTarget::Screen,
            (0, None, m) => CaptureTarget::Monitor(m as u32),
            (0, Some(r), _) => CaptureTarget::Region(Rect::new(r.x, r.y, r.width, r.height)),
            (id, _, _) => CaptureTarget::Window(WindowId(id)),
        };
        Ok(ScreenshotRequest {
            target,
            max_width: (self.max_width != 0).then_some(self.max_width),
            format: self.format.map(|f| match f {
                FormatArg::Jpeg => ImageFormat::Jpeg { quality: 80 },
                FormatArg::Png => ImageFormat::Png,
            }),
        })
    }
}

#[tool_router(router = screenshot_router, vis = "pub(crate)")]
impl DeskpilotServer {
    /// Take a screenshot of the screen, one monitor, one window (window_id) or a region. The image is scaled to at
    /// most 1280 px wide and 600000 px; x/y you read off it are in its pixel space, and the result gives the mapping
    /// (physical = capture origin + image / scale) plus a screenshot_id naming this image.
    #[tool(
        name = "screenshot",
        annotations(
            title = "Screenshot",
            read_only_hint = true,
            destructive_hint = false,
            idempotent_hint = false,
            open_world_hint = false
        )
    )]
    pub async fn screenshot(&self, Parameters(args): Parameters<ScreenshotArgs>) -> CallToolResult {
        let request = match args.request() {
            Ok(r) => r,
            Err(e) => return render::error(&e),
        };
        let engine = self.engine();
        let shot = match render::blocking(DESKTOP_TIMEOUT, "screenshot", move || {
            engine.screenshot(&request)
        })
        .await
        {
            Ok(s) => s,
            Err(e) => return render::error(&e),
        };
        let v = &shot.view;
        let format = match shot.image.format {
            ImageFormat::Jpeg { .. } => "jpeg",
            ImageFormat::Png => "png",
        };
        let what = match (&shot.window, request.target) {
            (Some(w), _) => format!(
                "window {} \"{}\" (pid {})",
                w.id,
                w.title,
                w.pid.map_or("?".into(), |p| p.to_string())
            ),
            (None, CaptureTarget::Monitor(m)) => format!("monitor {m}"),
            (None, CaptureTarget::Region(_)) => "region".to_string(),
            _ => "the screen".to_string(),
        };
        let mut text = format!(
            "Screenshot {id}: {w}x{h} {fmt} ({kb} KB) of {what} at {cap}, scale {scale:.4}.\n\
             Coordinates: x/y read off this image map to physical = ({cx}, {cy}) + image / {scale:.4}; \
             pass screenshot_id {id} with them.",
            id = shot.id,
            w = v.width,
            h = v.height,
            fmt = format.to_uppercase(),
            kb = shot.image.bytes.len().div_ceil(1024),
            cap = v.capture,
            scale = v.scale,
            cx = v.capture.x,
            cy = v.capture.y,
        );
        if shot.masked_regions > 0 {
            text.push_str(&format!(
                "\n{} privacy-masked regions are blacked out.",
                shot.masked_regions
            ));
        }
        for note in &shot.notes {
            text.push_str("\nNote: ");
            text.push_str(note);
        }
        let data = base64::engine::general_purpose::STANDARD.encode(&shot.image.bytes);
        let mut result = CallToolResult::success(vec![
            ContentBlock::text(text),
            ContentBlock::image(data, shot.image.format.mime_type()),
        ]);
        result.structured_content = Some(json!({
            "screenshot_id": shot.id,
            "view": v,
            "format": format,
            "bytes": shot.image.bytes.len(),
            "window": shot.window,
            "masked_regions": shot.masked_regions,
            "notes": shot.notes,
            "timings_ms": {
                "capture": shot.capture_time.as_secs_f64() * 1e3,
                "resize": shot.image.resize_time.as_secs_f64() * 1e3,
                "encode": shot.image.encode_time.as_secs_f64() * 1e3,
            },
        }));
        result
    }
}
