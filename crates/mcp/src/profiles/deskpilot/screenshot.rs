//! `screenshot`: the screen, a monitor, a window or a region, budgeted and encoded.

use crate::kit::Parameters;
use deskpilot_engine::pipeline::ImageFormat;
use deskpilot_engine::{CaptureTarget, Error, OutlineMode, ScreenshotRequest, ZoomRequest};
use deskpilot_types::{Rect, WindowId};
use rmcp::model::CallToolResult;
use rmcp::{tool, tool_router};
use serde::Deserialize;
use serde_json::json;

use super::wording::image_result;
use super::{DeskpilotServer, error};
use crate::kit::capture::{self, Captured, Drawing};
use crate::kit::render;

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
    /// This window (list_windows id); default: the screen.
    #[serde(default, deserialize_with = "crate::kit::args::window_id")]
    pub window_id: u64,
    /// Or title/process.
    #[serde(default, alias = "titleMatch")]
    pub title_match: String,
    /// Or this physical-pixel rectangle.
    #[serde(default)]
    pub region: Option<RegionArg>,
    /// Or this monitor (see status); -1: all.
    #[serde(default = "all_monitors")]
    pub monitor: i64,
    /// Widest image, 64–8192 (default 1280).
    #[serde(default, alias = "maxWidth")]
    pub max_width: u32,
    /// Default jpeg.
    #[serde(default)]
    pub format: Option<FormatArg>,
    /// Grid labelled in clickable image pixels.
    #[serde(default)]
    pub grid: bool,
    /// Grid spacing (default ~width/10).
    #[serde(default, alias = "gridStep")]
    pub grid_step: u32,
    /// Crosshair at this image point.
    #[serde(default)]
    pub mark: Option<PointArg>,
    /// Darken outside this image rectangle.
    #[serde(default)]
    pub dim: Option<RegionArg>,
    /// Say if it changed since last capture.
    #[serde(default)]
    pub compare: bool,
    /// "summary" or "tree": also its controls as text.
    #[serde(default, alias = "uiSummary")]
    pub summary: String,
}

/// A point in image pixels.
#[derive(Debug, Clone, Copy, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PointArg {
    pub x: i32,
    pub y: i32,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ZoomArgs {
    /// Left edge in source screenshot pixels.
    pub x: f64,
    /// Top edge.
    pub y: f64,
    pub width: f64,
    pub height: f64,
    /// Source (0: last).
    #[serde(default)]
    pub screenshot_id: u64,
    /// Image pixels per screen pixel, 1 (default) to 4.
    #[serde(default = "native")]
    pub scale: f64,
    /// Widest image, 64–8192 (default 1280).
    #[serde(default, alias = "maxWidth")]
    pub max_width: u32,
    /// Default jpeg.
    #[serde(default)]
    pub format: Option<FormatArg>,
}

fn native() -> f64 {
    1.0
}

fn all_monitors() -> i64 {
    -1
}

/// The capture target `window_id`, `region` or `monitor` name (at most one of them, or
/// `title_match`, which the caller resolves to a window); the screen when none is given.
pub(crate) fn capture_target(
    window_id: u64,
    title_match: &str,
    region: Option<RegionArg>,
    monitor: i64,
) -> Result<CaptureTarget, Error> {
    let chosen = [
        window_id != 0 || !title_match.is_empty(),
        region.is_some(),
        monitor >= 0,
    ]
    .iter()
    .filter(|c| **c)
    .count();
    if chosen > 1 || (window_id != 0 && !title_match.is_empty()) {
        return Err(Error::InvalidArgument {
            message: "pass at most one of window_id, title_match, region and monitor".to_string(),
        });
    }
    if monitor < -1 || monitor > u32::MAX as i64 {
        return Err(Error::InvalidArgument {
            message: format!("monitor {monitor} is not a monitor index; use -1 for every monitor"),
        });
    }
    Ok(match (window_id, region, monitor) {
        (0, None, -1) => CaptureTarget::Screen,
        (0, None, m) => CaptureTarget::Monitor(m as u32),
        (0, Some(r), _) => CaptureTarget::Region(Rect::new(r.x, r.y, r.width, r.height)),
        (id, _, _) => CaptureTarget::Window(WindowId(id)),
    })
}

impl ScreenshotArgs {
    fn request(&self) -> Result<ScreenshotRequest, Error> {
        let target = capture_target(self.window_id, &self.title_match, self.region, self.monitor)?;
        Ok(ScreenshotRequest {
            target,
            max_width: (self.max_width != 0).then_some(self.max_width),
            format: self.format.map(format),
        })
    }
}

#[tool_router(router = screenshot_router, vis = "pub(crate)")]
impl DeskpilotServer {
    /// Capture the screen, a monitor, window or region (≤1280 px wide, ≤600000 px); its x/y map
    /// to screen pixels via screenshot_id.
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
            Err(e) => return error(&e),
        };
        let drawing = Drawing {
            grid: (args.grid || args.grid_step != 0).then_some(args.grid_step),
            mark: args.mark.map(|p| (p.x, p.y)),
            dim: args.dim.map(|r| (r.x, r.y, r.width, r.height)),
        };
        let outline_mode = if args.summary.trim().is_empty() {
            self.session()
                .config()
                .outline
                .mode
                .unwrap_or(OutlineMode::None)
        } else {
            match args.summary.parse::<OutlineMode>() {
                Ok(m) => m,
                Err(e) => {
                    return error(&Error::InvalidArgument {
                        message: format!("summary: {e}"),
                    });
                }
            }
        };
        let session = self.session();
        let title_match = Some(args.title_match.clone());
        let captured = match render::blocking(self.screenshot_timeout(), "screenshot", move || {
            capture::capture(&session, request, title_match, drawing, outline_mode, false)
        })
        .await
        {
            Ok(c) => c,
            Err(e) => return error(&e),
        };
        let Captured {
            shot,
            target,
            outline,
            hint,
            ..
        } = captured;
        let what = match (&shot.window, target) {
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
        let mut result = image_result("Screenshot", &shot, &what);
        if drawing.any() {
            append_text(
                &mut result,
                &format!(
                    "Drawn on the image: {} (not part of the screen; compare and verify ignore it).",
                    drawing.describe()
                ),
            );
        }
        match outline {
            Some(Ok(Some(o))) => {
                append_text(
                    &mut result,
                    &format!(
                        "Outline of window {} (source: {}; centres in this image's pixels){}:\n{}",
                        o.window,
                        o.source,
                        if o.omitted > 0 {
                            format!(", {} more left out for the budget", o.omitted)
                        } else {
                            String::new()
                        },
                        o.text.trim_end()
                    ),
                );
                if let Some(s) = result.structured_content.as_mut() {
                    s["outline"] = json!(o);
                }
            }
            Some(Err(e)) => append_text(&mut result, &format!("Outline: not available ({e}).")),
            Some(Ok(None)) | None => {}
        }
        if let Some((skill, line)) = hint {
            append_text(&mut result, &line);
            if let Some(s) = result.structured_content.as_mut() {
                s["skill_hint"] =
                    json!({ "app": skill.app, "summary": skill.summary, "line": line });
            }
        }
        if args.compare {
            let (line, change) = match shot.change {
                Some(c) => (
                    if c.changed {
                        format!(
                            "Compared with screenshot {}: changed ({:.1} % of the signature's cells moved).",
                            c.since,
                            c.ratio * 100.0
                        )
                    } else {
                        format!(
                            "Compared with screenshot {}: NO visible change ({:.1} % of cells moved).",
                            c.since,
                            c.ratio * 100.0
                        )
                    },
                    json!({ "changed": c.changed, "ratio": c.ratio, "since_screenshot_id": c.since }),
                ),
                None => (
                    "Compare: no earlier capture of this exact target to compare with.".to_string(),
                    serde_json::Value::Null,
                ),
            };
            append_text(&mut result, &line);
            if let Some(s) = result.structured_content.as_mut() {
                s["change"] = change;
            }
        }
        result
    }

    /// Re-capture part of a screenshot at native resolution or up to 4×, with its own
    /// screenshot_id.
    #[tool(
        name = "zoom",
        annotations(
            title = "Zoom",
            read_only_hint = true,
            destructive_hint = false,
            idempotent_hint = false,
            open_world_hint = false
        )
    )]
    pub async fn zoom(&self, Parameters(a): Parameters<ZoomArgs>) -> CallToolResult {
        let request = ZoomRequest {
            of: (a.screenshot_id != 0).then_some(a.screenshot_id),
            region: [a.x, a.y, a.width, a.height],
            scale: a.scale,
            max_width: (a.max_width != 0).then_some(a.max_width),
            format: a.format.map(format),
        };
        let engine = self.session();
        match render::blocking(self.screenshot_timeout(), "zoom", move || {
            engine.zoom(&request)
        })
        .await
        {
            Ok(shot) => image_result("Zoom", &shot, "a zoomed region"),
            Err(e) => error(&e),
        }
    }
}

use crate::kit::render::append_text;

pub(crate) fn format(f: FormatArg) -> ImageFormat {
    match f {
        FormatArg::Jpeg => ImageFormat::Jpeg { quality: 80 },
        FormatArg::Png => ImageFormat::Png,
    }
}
