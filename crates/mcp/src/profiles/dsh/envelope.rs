//! dsh-computer-use's screenshot envelope: one canonical JSON object (`structuredContent`) rendered as a
//! text block plus an optional image block. It carries the coordinate mapping, the pointer in
//! physical and image pixels, the foreground window, the `uiSummary` outline, the change
//! verdict and the skill hint; with `screenshot.inline = false` the bytes go to the kit's
//! per-user spill directory instead (`screenshot.saveToDisk`) and `savedPath` says where.

use std::path::PathBuf;
use std::time::{SystemTime, UNIX_EPOCH};

use deskpilot_engine::pipeline::ImageFormat;
use deskpilot_engine::{ImageDelivery, Outline, Screenshot};
use deskpilot_types::{Point, WindowInfo};
use rmcp::model::{CallToolResult, ContentBlock};
use serde_json::{Value, json};

use crate::kit::capture::Captured;
use crate::kit::image;

/// The window as dsh-computer-use's `app_window list` shows it.
pub(crate) fn window_json(w: &WindowInfo) -> Value {
    json!({
        "hwnd": w.id.0,
        "title": w.title,
        "class": w.class,
        "pid": w.pid,
        "process": w.process,
        "bounds": w.frame,
        "clientBounds": w.client,
        "minimized": w.state.minimized,
        "maximized": w.state.maximized,
        "foreground": w.state.active,
        "visible": w.state.visible,
    })
}

/// `hwnd 0x1a00004 "Title" (process, pid 42)`.
pub(crate) fn window_words(w: &WindowInfo) -> String {
    format!("hwnd {} {}", w.id.0, w.label())
}

fn view_json(shot: &Screenshot) -> Value {
    let v = &shot.view;
    let at = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64);
    json!({
        "width": v.width,
        "height": v.height,
        "scale": v.scale,
        "capture": v.capture,
        "screen": shot.window.as_ref().and_then(|w| w.monitor),
        "at": at,
    })
}

/// Writes the screenshot's bytes to this user's private spill directory (the kit's); the
/// path, or why not.
fn spill(shot: &Screenshot) -> Result<PathBuf, String> {
    let ext = match shot.image.format {
        ImageFormat::Jpeg { .. } => "jpg",
        ImageFormat::Png => "png",
    };
    crate::kit::spill::write("dsh-computer-use", shot.id, ext, &shot.image.bytes)
}

/// The image block, or where the bytes went: `(blocks, image, savedPath, line)`.
fn deliver(
    shot: &Screenshot,
    delivery: ImageDelivery,
) -> (Vec<ContentBlock>, Value, Value, Option<String>) {
    let mime = shot.image.format.mime_type();
    if delivery.inline {
        return (
            vec![image::block(shot)],
            json!({ "mimeType": mime, "bytes": shot.image.bytes.len() }),
            Value::Null,
            None,
        );
    }
    if !delivery.save_to_disk {
        return (
            Vec::new(),
            Value::Null,
            Value::Null,
            Some("No image is attached (screenshot.inline and screenshot.saveToDisk are off); use the outline and ocr.".to_string()),
        );
    }
    match spill(shot) {
        Ok(path) => {
            let line = format!("The image was saved to {} (savedPath).", path.display());
            (Vec::new(), Value::Null, json!(path), Some(line))
        }
        Err(e) => (
            Vec::new(),
            Value::Null,
            Value::Null,
            Some(format!(
                "No image is attached and it could not be saved: {e}."
            )),
        ),
    }
}

/// The mapping line every image carries.
fn mapping_line(shot: &Screenshot) -> String {
    let v = &shot.view;
    format!(
        "Coordinate mapping: physical = ({}, {}) + image / {:.4} (factor {:.4} physical pixels per image pixel); \
         x/y of the next computer actions are read in this image.",
        v.capture.x,
        v.capture.y,
        v.scale,
        1.0 / v.scale
    )
}

fn head(kind: &str, shot: &Screenshot, what: &str) -> String {
    let v = &shot.view;
    let head = format!(
        "{kind} {}: {}x{} {} ({} KB) of {what}, capture {}.\n{}",
        shot.id,
        v.width,
        v.height,
        image::format_name(shot.image.format).to_uppercase(),
        shot.image.bytes.len().div_ceil(1024),
        v.capture,
        mapping_line(shot)
    );
    image::text(head, shot)
}

/// An observation image (`observe: true`) or any image without the screenshot extras.
pub(crate) fn observation(kind: &str, shot: &Screenshot, what: &str) -> CallToolResult {
    image_result(kind, shot, what, ImageDelivery::default())
}

/// An image with its mapping, delivered as `delivery` says.
pub(crate) fn image_result(
    kind: &str,
    shot: &Screenshot,
    what: &str,
    delivery: ImageDelivery,
) -> CallToolResult {
    let mut text = head(kind, shot, what);
    let (blocks, image, saved, line) = deliver(shot, delivery);
    if let Some(line) = line {
        text.push('\n');
        text.push_str(&line);
    }
    let mut content = vec![ContentBlock::text(text)];
    content.extend(blocks);
    let mut result = CallToolResult::success(content);
    result.structured_content = Some(json!({
        "screenshotId": shot.id,
        "image": image,
        "savedPath": saved,
        "view": view_json(shot),
        "window": shot.window.as_ref().map(window_json),
        "masked": shot.masked_regions,
        "notes": shot.notes,
    }));
    result
}

/// The cursor in physical pixels and, when it lies inside, in the image.
fn cursor_json(shot: &Screenshot, cursor: Option<Point>) -> (Value, Option<String>) {
    let Some(c) = cursor else {
        return (Value::Null, None);
    };
    let image = shot.view.physical_to_image(c);
    let line = match image {
        Some((ix, iy)) => format!("Cursor: physical ({}, {}) = image ({ix}, {iy}).", c.x, c.y),
        None => format!("Cursor: physical ({}, {}), outside this image.", c.x, c.y),
    };
    (
        json!({ "x": c.x, "y": c.y, "image": image.map(|(x, y)| json!({ "x": x, "y": y })) }),
        Some(line),
    )
}

fn outline_json(o: &Outline, mode: &str) -> Value {
    json!({
        "mode": mode,
        "source": o.source,
        "hwnd": o.window.0,
        "text": o.text,
        "nodes": o.items.len(),
        "omitted": o.omitted,
    })
}

/// The whole screenshot envelope.
pub(crate) fn screenshot(
    c: &Captured,
    what: &str,
    mode: &str,
    compare: bool,
    drawn: Option<String>,
    delivery: ImageDelivery,
) -> CallToolResult {
    let shot = &c.shot;
    let mut result = image_result("Screenshot", shot, what, delivery);
    let mut lines = Vec::new();
    let (cursor, line) = cursor_json(shot, c.cursor);
    lines.extend(line);
    if let Some(w) = &c.front {
        lines.push(format!("Foreground window: {}.", window_words(w)));
    }
    if let Some(d) = &drawn {
        lines.push(format!(
            "Drawn on the image: {d} (not part of the screen; compare and verify ignore it)."
        ));
    }
    let change = match (compare, shot.change) {
        (false, _) => Value::Null,
        (true, Some(ch)) => {
            lines.push(if ch.changed {
                format!(
                    "Screen verdict: changed since screenshot {} ({:.1}% of sampled pixels differ).",
                    ch.since,
                    ch.ratio * 100.0
                )
            } else {
                format!(
                    "Screen verdict: NO visible change since screenshot {} ({:.1}% of sampled pixels differ).",
                    ch.since,
                    ch.ratio * 100.0
                )
            });
            json!({ "changed": ch.changed, "ratio": ch.ratio, "since": ch.since })
        }
        (true, None) => {
            lines.push(
                "Screen verdict: no earlier capture of this target to compare with.".to_string(),
            );
            json!({ "changed": null, "since": null })
        }
    };
    let ui = match &c.outline {
        None => Value::Null,
        Some(Ok(Some(o))) => {
            lines.push(format!(
                "UI outline ({mode}, source: {}; centres in this image's pixels){}:\n{}",
                o.source,
                if o.omitted > 0 {
                    format!(", {} more left out for the budget", o.omitted)
                } else {
                    String::new()
                },
                o.text.trim_end()
            ));
            outline_json(o, mode)
        }
        Some(Ok(None)) => {
            lines.push("UI outline: the window shows no controls or text.".to_string());
            json!({ "mode": mode, "nodes": 0, "text": "" })
        }
        Some(Err(e)) => {
            lines.push(format!("UI outline: not available ({e})."));
            json!({ "mode": mode, "error": e })
        }
    };
    let hint = match &c.hint {
        Some((skill, line)) => {
            lines.push(line.clone());
            json!({ "app": skill.app, "summary": skill.summary, "line": line })
        }
        None => Value::Null,
    };
    for line in &lines {
        crate::kit::render::append_text(&mut result, line);
    }
    let fallback = shot.fallback().map(ToString::to_string);
    if let Some(s) = result.structured_content.as_mut() {
        s["cursor"] = cursor;
        s["change"] = change;
        s["ui"] = ui;
        s["skillHint"] = hint;
        s["fallback"] = json!(fallback);
        s["foreground"] = c.front.as_ref().map_or(Value::Null, window_json);
    }
    result
}
