//! `inspect_window` and `inspect_screen`: what a window or the screen shows now — the
//! screenshot as an image (kept, so `deskpilot://screenshot/{id}` reads it again), a window's
//! outline as an embedded `deskpilot://window/{id}/outline` resource — and the tools to act
//! on it, with a token and a point taken from this outline and screenshot as examples.

use deskpilot_engine::{CaptureTarget, Outline, OutlineMode, Screenshot, ScreenshotRequest};
use deskpilot_types::{Role, WindowInfo};
use rmcp::ErrorData;
use rmcp::model::{GetPromptResult, PromptMessage};
use serde_json::json;

use super::{
    Args, MAX_WINDOWS, Toolbox, call_args, failed, outline_uri, resolve_window, screenshot_uri,
    user, user_text, window_line,
};
use crate::kit::capture::{self, Drawing};
use crate::kit::render;
use crate::kit::server::{ProfileSpec, Server};

/// What the window's outline turned out to be.
enum OutlineRead {
    Some(Outline),
    Empty,
    Failed(String),
}

pub(super) async fn window<P: ProfileSpec>(
    server: &Server<P>,
    args: &Args,
) -> Result<GetPromptResult, ErrorData> {
    let mode = match args.get("detail") {
        None => OutlineMode::Tree,
        Some(d) => match d.parse::<OutlineMode>() {
            Ok(OutlineMode::None) | Err(_) => {
                return Err(ErrorData::invalid_params(
                    format!("detail: \"{d}\" is not one of tree, summary"),
                    None,
                ));
            }
            Ok(m) => m,
        },
    };
    let asked = args.need("window").to_string();
    let session = server.session();
    let (window, captured) = render::blocking(
        server.screenshot_timeout(),
        "prompt inspect_window",
        move || {
            let w = resolve_window(&session, &asked)?;
            let request = ScreenshotRequest {
                target: CaptureTarget::Window(w.id),
                max_width: None,
                format: None,
            };
            let captured =
                capture::capture(&session, request, None, Drawing::default(), mode, false);
            // The client is shown this image: it stays readable as a resource.
            if let Ok(c) = &captured {
                session.keep_screenshot(&c.shot);
            }
            Ok((w, captured))
        },
    )
    .await
    .map_err(|e| failed("window", e))?;
    let mut tools = Toolbox::new(server);
    let mut messages = Vec::new();
    match captured {
        Err(e) => {
            // The window is there but shows nothing to capture (minimized, off screen…).
            tools.add(
                "window",
                format!(
                    "bring it back first ({})",
                    call_args(json!({ "action": "restore", "window_id": window.id.to_string() }))
                ),
            );
            tools.add("get_window_state", "its controls, without pixels");
            messages.push(user_text(format!(
                "Inspect the window {}.\nIts screenshot failed: {}: {e}\n\nTools:\n{}",
                window_line(&window),
                e.code(),
                tools.render()
            )));
        }
        Ok(c) => {
            let outline = match c.outline {
                Some(Ok(Some(o))) => OutlineRead::Some(o),
                Some(Ok(None)) | None => OutlineRead::Empty,
                Some(Err(e)) => OutlineRead::Failed(e),
            };
            let hint = c.hint.map(|(skill, line)| (skill.app, line));
            let text = inspect_text(&mut tools, &window, &c.shot, &outline, hint);
            messages.push(user_text(text));
            let outline_text = match &outline {
                OutlineRead::Some(o) => o.text.clone(),
                OutlineRead::Empty => "(no controls to list)\n".to_string(),
                OutlineRead::Failed(e) => format!("(no outline: {e})\n"),
            };
            messages.push(PromptMessage::new_resource(
                rmcp::model::Role::User,
                outline_uri(window.id),
                Some("text/plain".to_string()),
                Some(outline_text),
                None,
                None,
                None,
            ));
            messages.push(user(crate::kit::image::block(&c.shot)));
        }
    }
    Ok(GetPromptResult::new(messages)
        .with_description(format!("The window \"{}\" as it is now", window.title)))
}

fn inspect_text<P: ProfileSpec>(
    tools: &mut Toolbox<'_, P>,
    w: &WindowInfo,
    shot: &Screenshot,
    outline: &OutlineRead,
    hint: Option<(String, String)>,
) -> String {
    let v = &shot.view;
    let mut text = format!("Inspect the window {}.\n", window_line(w));
    text.push_str(&format!(
        "Below: its outline ({}) and screenshot {} ({}x{} {}, scale {:.4}).\n",
        match outline {
            OutlineRead::Some(o) => format!(
                "{} controls read from {}, one a line: Role \"name\" @ (x, y) — its centre in the screenshot's pixels — then its element token{}",
                o.items.len() - o.omitted,
                o.source,
                if o.omitted > 0 {
                    format!("; {} more left out for the budget", o.omitted)
                } else {
                    String::new()
                }
            ),
            OutlineRead::Empty => "empty: the window lists no controls".to_string(),
            OutlineRead::Failed(e) => format!("not read: {e}"),
        },
        shot.id,
        v.width,
        v.height,
        crate::kit::image::format_name(shot.image.format).to_uppercase(),
        v.scale,
    ));
    render::masks_and_notes(&mut text, shot.masked_regions, &shot.notes, |n| {
        format!("{n} privacy-masked regions are blacked out.")
    });
    text.push_str(
        "\nSay what the window shows and what can be done in it; then act with these tools:\n",
    );
    let id = w.id.to_string();
    // Real examples from this outline: its first control with a token, its first editable one.
    let items: &[deskpilot_engine::OutlineItem] = match outline {
        OutlineRead::Some(o) => &o.items,
        _ => &[],
    };
    let first = items
        .iter()
        .filter(|i| !i.token.is_empty())
        .find(|i| i.role == Role::Button)
        .or_else(|| {
            items
                .iter()
                .find(|i| !i.token.is_empty() && i.role.is_interactive())
        });
    let edit = items
        .iter()
        .find(|i| !i.token.is_empty() && matches!(i.role, Role::Edit | Role::SpinButton));
    tools.add(
        "get_window_state",
        format!(
            "the whole tree with every token ({})",
            call_args(json!({ "window_id": id }))
        ),
    );
    tools.add(
        "find_elements",
        format!(
            "a control by what it says ({})",
            call_args(json!({ "window_id": id, "description": "…" }))
        ),
    );
    let point = first.map_or((v.width / 2, v.height / 2), |i| (i.x, i.y));
    tools.add(
        "click",
        match first {
            Some(i) => format!(
                "a control by token ({} for {} \"{}\") or a point of this screenshot ({})",
                call_args(json!({ "element": i.token })),
                i.role,
                i.name,
                call_args(json!({ "x": point.0, "y": point.1, "screenshot_id": shot.id }))
            ),
            None => format!(
                "a point of this screenshot ({})",
                call_args(json!({ "x": point.0, "y": point.1, "screenshot_id": shot.id }))
            ),
        },
    );
    if let Some(e) = edit {
        tools.add(
            "set_value",
            format!(
                "a field's text ({} for {} \"{}\")",
                call_args(json!({ "element": e.token, "value": "…" })),
                e.role,
                e.name
            ),
        );
    }
    tools.add("type_text", "text into the focused control");
    tools.add("press_key", "keys and shortcuts in the focused window");
    tools.add(
        "zoom",
        format!("a detail of screenshot {} at full resolution", shot.id),
    );
    if items.is_empty() {
        tools.add(
            "ocr",
            format!(
                "the window's text, when it lists no controls ({})",
                call_args(json!({ "window_id": id }))
            ),
        );
    }
    if let Some((app, _)) = &hint {
        tools.add(
            "app_skill",
            format!(
                "the recipe for {app} ({})",
                call_args(json!({ "action": "get", "app": app }))
            ),
        );
    }
    text.push_str(&tools.render());
    text.push_str(&format!(
        "\nRead them again after a change: resource {} (or get_window_state) and a new screenshot; screenshot {} stays readable as {}.",
        outline_uri(w.id),
        shot.id,
        screenshot_uri(shot.id)
    ));
    if let Some((_, line)) = hint {
        text.push('\n');
        text.push_str(&line);
    }
    text
}

// ---------------------------------------------------------------------------------------------
// inspect_screen

pub(super) async fn screen<P: ProfileSpec>(
    server: &Server<P>,
    args: &Args,
) -> Result<GetPromptResult, ErrorData> {
    let monitor = match args.get("monitor") {
        None => None,
        Some(m) => Some(m.parse::<u32>().map_err(|_| {
            ErrorData::invalid_params(
                format!("monitor: \"{m}\" is not a monitor index (0, 1, …; completion lists them)"),
                None,
            )
        })?),
    };
    let session = server.session();
    let (status, windows, shot) = render::blocking(
        server.screenshot_timeout(),
        "prompt inspect_screen",
        move || {
            let status = session.status()?;
            let windows = session.list_windows(&Default::default())?;
            let shot = session.screenshot(&ScreenshotRequest {
                target: monitor.map_or(CaptureTarget::Screen, CaptureTarget::Monitor),
                max_width: None,
                format: None,
            })?;
            session.keep_screenshot(&shot);
            Ok((status, windows, shot))
        },
    )
    .await
    .map_err(|e| failed("monitor", e))?;
    let on: Vec<&WindowInfo> = windows
        .iter()
        .filter(|w| w.state.visible && monitor.is_none_or(|m| w.monitor == Some(m)))
        .collect();
    let mut text = match monitor {
        Some(m) => format!(
            "Inspect monitor {m}{} as it is now: screenshot {} below ({}x{}, scale {:.4}).",
            status
                .monitors
                .iter()
                .find(|x| x.index == m)
                .map_or(String::new(), |x| format!(" ({} {})", x.name, x.rect)),
            shot.id,
            shot.view.width,
            shot.view.height,
            shot.view.scale
        ),
        None => format!(
            "Inspect the screen as it is now: screenshot {} below ({}x{} of {}, scale {:.4}).",
            shot.id, shot.view.width, shot.view.height, status.desktop, shot.view.scale
        ),
    };
    text.push_str("\nMonitors:");
    render::monitor_lines(&mut text, &status.monitors);
    text.push_str(&format!(
        "\nWindows shown there, topmost first ({}):",
        on.len()
    ));
    for w in on.iter().take(MAX_WINDOWS) {
        text.push_str("\n- ");
        text.push_str(&window_line(w));
    }
    if on.len() > MAX_WINDOWS {
        text.push_str(&format!(
            "\n… {} more (list_windows lists them all)",
            on.len() - MAX_WINDOWS
        ));
    }
    render::masks_and_notes(&mut text, shot.masked_regions, &shot.notes, |n| {
        format!("{n} privacy-masked regions are blacked out.")
    });
    let mut tools = Toolbox::new(server);
    let example = on.first().map(|w| w.id.to_string());
    if let Some(id) = &example {
        tools.add(
            "get_window_state",
            format!(
                "one window's controls and tokens ({}); the inspect_window prompt gives its outline and screenshot together",
                call_args(json!({ "window_id": id }))
            ),
        );
        tools.add(
            "window",
            format!(
                "bring one to the front ({})",
                call_args(json!({ "action": "focus", "window_id": id }))
            ),
        );
    }
    tools.add(
        "click",
        format!(
            "a point of this screenshot ({})",
            call_args(json!({ "x": shot.view.width / 2, "y": shot.view.height / 2, "screenshot_id": shot.id }))
        ),
    );
    tools.add("zoom", format!("a detail of screenshot {}", shot.id));
    tools.add("ocr", "the text on screen with its positions");
    text.push_str("\n\nSay what is on screen; then, with these tools:\n");
    text.push_str(&tools.render());
    Ok(
        GetPromptResult::new(vec![user_text(text), user(crate::kit::image::block(&shot))])
            .with_description(match monitor {
                Some(m) => format!("Monitor {m} as it is now"),
                None => "The screen as it is now".to_string(),
            }),
    )
}
