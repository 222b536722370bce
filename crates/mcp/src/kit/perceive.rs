//! Rendering a perception — every window's verdict with its evidence, and totals that add up —
//! into text and structured content. Every profile that offers perception (`perceive`,
//! DesktopOS's `desktop_perceive`) words it through [`perception`]; `focus` names the caller's
//! tool that restores a minimized window and `id` writes a window id the caller's way
//! (`0x1a00003`, `handle=27262979`).

use deskpilot_engine::{
    BLANK_STDDEV, OwnPixels, Perception, WindowPerception, WindowVerdict, describe_state,
};
use deskpilot_types::WindowId;
use serde_json::{Value, json};

fn percent(share: f64) -> String {
    format!("{:.0}%", share * 100.0)
}

/// Why a window got its verdict, in one clause.
fn evidence(w: &WindowPerception, focus: &str, id: fn(WindowId) -> String) -> String {
    let win = &w.window;
    let covered_by = || {
        w.covered_by
            .iter()
            .map(|c| {
                format!(
                    "{} \"{}\" ({})",
                    id(c.cover.id),
                    c.cover.title,
                    percent(c.share)
                )
            })
            .collect::<Vec<_>>()
            .join(", ")
    };
    let mut text = match w.verdict {
        WindowVerdict::Consistent => "on screen and drawn".to_string(),
        WindowVerdict::Minimized => {
            format!("it exists but is minimized — restore it with {focus} first")
        }
        WindowVerdict::Hidden if !win.state.visible => "it is not mapped (not shown)".to_string(),
        WindowVerdict::Hidden => format!(
            "its client area is {}x{} px: a parked window, nothing to see",
            win.client.width, win.client.height
        ),
        WindowVerdict::Offscreen => {
            format!("{} of its frame is off every monitor", percent(w.offscreen))
        }
        WindowVerdict::Covered => format!("{} hidden by {}", percent(w.covered), covered_by()),
        WindowVerdict::Blank => format!(
            "nothing drawn: luminance spread {:.1} over {} visible px (under {BLANK_STDDEV})",
            w.stddev.unwrap_or(0.0),
            w.visible_pixels
        ),
        WindowVerdict::Cloaked => "cloaked by the desktop window manager".to_string(),
    };
    if w.verdict != WindowVerdict::Covered && w.covered > 0.0 {
        text.push_str(&format!(
            "; {} hidden by {}",
            percent(w.covered),
            covered_by()
        ));
    }
    if w.verdict != WindowVerdict::Offscreen && w.offscreen > 0.0 {
        text.push_str(&format!("; {} off screen", percent(w.offscreen)));
    }
    match &w.own {
        Some(OwnPixels::Read { method, stddev }) => text.push_str(&match stddev {
            Some(s) if *s < BLANK_STDDEV => {
                format!("; its own drawing ({method}) is blank too (spread {s:.1})")
            }
            Some(s) => format!("; its own drawing ({method}) has content (spread {s:.1})"),
            None => format!("; its own drawing ({method}) is too small to judge"),
        }),
        Some(OwnPixels::Blank { method }) => {
            text.push_str(&format!("; its own drawing ({method}) is empty"))
        }
        Some(OwnPixels::Unsupported) => {
            text.push_str("; this desktop cannot capture it alone, so its content is unknown")
        }
        Some(OwnPixels::Failed { error }) => {
            text.push_str(&format!("; capturing it alone failed: {error}"))
        }
        None => {}
    }
    text
}

fn own_json(own: &OwnPixels) -> Value {
    match own {
        OwnPixels::Read { method, stddev } => {
            json!({"result": "read", "method": method, "stddev": stddev})
        }
        OwnPixels::Blank { method } => json!({"result": "blank", "method": method}),
        OwnPixels::Unsupported => json!({"result": "unsupported"}),
        OwnPixels::Failed { error } => json!({"result": "failed", "error": error}),
    }
}

/// The text and structured content of a perception.
pub(crate) fn perception(
    p: &Perception,
    focus: &str,
    id: fn(WindowId) -> String,
) -> (String, Value) {
    perception_with(p, focus, id, |_| Value::Null)
}

/// [`perception`] with the fields a profile adds to each window's object (its own names for
/// the id and the frame), made from the typed window rather than the rendered JSON.
pub(crate) fn perception_with(
    p: &Perception,
    focus: &str,
    id: fn(WindowId) -> String,
    window_fields: impl Fn(&deskpilot_types::WindowInfo) -> Value,
) -> (String, Value) {
    let counts: Vec<String> = WindowVerdict::ALL
        .iter()
        .filter(|v| **v != WindowVerdict::Consistent)
        .filter_map(|v| {
            let n = p.count(*v);
            (n > 0).then(|| format!("{n} {}", v.name()))
        })
        .collect();
    let mut text = format!(
        "Perceived {} window(s) in {:.0} ms (window list {:.0} ms, screen {:.0} ms): {} consistent, {} inconsistent{}.",
        p.total(),
        p.elapsed.as_secs_f64() * 1e3,
        p.list_time.as_secs_f64() * 1e3,
        p.capture_time.as_secs_f64() * 1e3,
        p.consistent(),
        p.inconsistent(),
        if counts.is_empty() {
            String::new()
        } else {
            format!(" ({})", counts.join(", "))
        },
    );
    for w in &p.windows {
        let win = &w.window;
        text.push_str(&format!(
            "\n- {} {} [{}] frame {}: {} — {}.",
            id(win.id),
            win.label(),
            describe_state(win),
            win.frame,
            w.verdict.name(),
            evidence(w, focus, id)
        ));
    }
    let windows: Vec<Value> = p
        .windows
        .iter()
        .map(|w| {
            let win = &w.window;
            let mut v = json!({
                "id": win.id,
                "title": win.title,
                "process": win.process,
                "pid": win.pid,
                "class": win.class,
                "frame": win.frame,
                "client": win.client,
                "center": win.frame.center(),
                "z": win.z,
                "minimized": win.state.minimized,
                "active": win.state.active,
                "verdict": w.verdict,
                "consistent": w.verdict == WindowVerdict::Consistent,
                "offscreen": w.offscreen,
                "covered": w.covered,
                "covered_by": w.covered_by.iter().map(|c| json!({
                    "id": c.cover.id, "title": c.cover.title, "share": c.share,
                })).collect::<Vec<_>>(),
                "visible_pixels": w.visible_pixels,
                "stddev": w.stddev,
                "own_pixels": w.own.as_ref().map(own_json),
                "evidence": evidence(w, focus, id),
            });
            if let (Value::Object(m), Value::Object(more)) = (&mut v, window_fields(win)) {
                m.extend(more);
            }
            v
        })
        .collect();
    let counts: serde_json::Map<String, Value> = WindowVerdict::ALL
        .iter()
        .map(|v| (v.name().to_string(), json!(p.count(*v))))
        .collect();
    let structured = json!({
        "total": p.total(),
        "consistent": p.consistent(),
        "inconsistent": p.inconsistent(),
        "counts": counts,
        "windows": windows,
        "monitors": p.monitors,
        "screenshot_id": p.screenshot.as_ref().map(|s| s.id),
        "timings_ms": {
            "list": p.list_time.as_secs_f64() * 1e3,
            "screen": p.capture_time.as_secs_f64() * 1e3,
            "total": p.elapsed.as_secs_f64() * 1e3,
        },
    });
    (text, structured)
}
