//! A UI context pick as an agent reads it: the engine's typed facts ([`PickFacts`]) rendered
//! as the UI Context Protocol's `context.json` object ([`json`]) and its Markdown
//! ([`markdown`]). Every fact keeps its `source` and `confidence`; text read off pixels says so.
//!
//! The picker shows both on its page and writes both into the pick's directory; it is handed
//! [`render`] when it starts.

use deskpilot_engine::pick::{PickFacts, PickKind};
use deskpilot_picker::Rendered;
use deskpilot_types::Rect;
use serde_json::{Value, json};

fn rect_json(r: Rect) -> Value {
    json!({ "x": r.x, "y": r.y, "width": r.width, "height": r.height })
}

/// The facts as JSON and Markdown.
pub(crate) fn render(facts: &PickFacts) -> Rendered {
    let json = json(facts);
    let markdown = markdown(&json);
    Rendered { json, markdown }
}

/// The facts as the `context.json` object.
pub(crate) fn json(f: &PickFacts) -> Value {
    let kind = match f.kind {
        PickKind::Window => "window",
        PickKind::Control => "control",
        PickKind::Region => "region",
    };
    let mut j = json!({
        "version": 1,
        "kind": kind,
        "pickedAt": f.picked_at,
        "screen": { "bounds": rect_json(f.screen) },
        "files": { "screenshot": "screenshot.png", "crop": "crop.png" },
        "text": f.text.as_ref().map(|t| json!({
            "value": t.value, "source": t.source, "confidence": t.confidence,
        })),
    });
    if let Some(w) = &f.window {
        let i = &w.info;
        j["window"] = json!({
            "title": i.title, "process": i.process, "pid": i.pid, "class": i.class,
            "bounds": rect_json(i.frame), "source": w.source, "confidence": 1.0,
        });
    }
    if let Some(c) = &f.control {
        let e = &c.element;
        j["control"] = json!({
            "role": format!("{:?}", e.role), "platformRole": e.platform_role,
            "name": e.name, "value": e.value, "description": e.description,
            "states": c.states, "bounds": rect_json(c.bounds), "token": e.token,
            "source": c.source, "confidence": 1.0,
        });
    }
    if let Some(r) = f.region {
        j["region"] = json!({ "bounds": rect_json(r), "source": "visual", "confidence": 1.0 });
    }
    j
}

/// The context as Markdown for a model: what was picked, where, its text, and each fact's
/// source.
pub(crate) fn markdown(j: &Value) -> String {
    let b = |v: &Value| format!("{}×{} at ({}, {})", v["width"], v["height"], v["x"], v["y"]);
    let sourced = |v: &Value| {
        format!(
            "source `{}`, confidence {}",
            v["source"].as_str().unwrap_or("?"),
            v["confidence"]
        )
    };
    let mut md = format!(
        "# UI context: {}\n\nPicked and approved by the user at {}.\n",
        j["kind"].as_str().unwrap_or("?"),
        j["pickedAt"].as_str().unwrap_or("?")
    );
    if let Some(w) = j.get("window").filter(|w| !w.is_null()) {
        md.push_str(&format!(
            "\n## Window\n- Title: {}\n- Process: {} (pid {})\n- Bounds: {}\n- {}\n",
            w["title"].as_str().unwrap_or(""),
            w["process"].as_str().unwrap_or("?"),
            w["pid"],
            b(&w["bounds"]),
            sourced(w)
        ));
    }
    if let Some(c) = j.get("control").filter(|c| !c.is_null()) {
        md.push_str(&format!(
            "\n## Control\n- Role: {}\n- Name: {}\n",
            c["role"].as_str().unwrap_or("?"),
            c["name"].as_str().unwrap_or("")
        ));
        if let Some(v) = c["value"].as_str() {
            md.push_str(&format!("- Value: {v}\n"));
        }
        let states: Vec<&str> = c["states"]
            .as_array()
            .map(|s| s.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        if !states.is_empty() {
            md.push_str(&format!("- States: {}\n", states.join(", ")));
        }
        md.push_str(&format!(
            "- Bounds: {}\n- Token: `{}` (for deskpilot's element tools, while the window is unchanged)\n- {}\n",
            b(&c["bounds"]),
            c["token"].as_str().unwrap_or(""),
            sourced(c)
        ));
    }
    if let Some(r) = j.get("region").filter(|r| !r.is_null()) {
        md.push_str(&format!(
            "\n## Region\n- Bounds: {} (physical pixels)\n- {}\n",
            b(&r["bounds"]),
            sourced(r)
        ));
    }
    match j.get("text").filter(|t| !t.is_null()) {
        Some(t) => {
            md.push_str(&format!("\n## Text ({})\n\n", sourced(t)));
            for line in t["value"].as_str().unwrap_or("").lines() {
                md.push_str("> ");
                md.push_str(line);
                md.push('\n');
            }
            if t["source"] == "ocr" {
                md.push_str("\nRead off the pixels: it may contain recognition errors.\n");
            }
        }
        None => md.push_str("\n## Text\n\nNone found.\n"),
    }
    md.push_str("\nFiles: `screenshot.png` (the screen), `crop.png` (the pick), `context.json`.\n");
    md
}

#[cfg(test)]
mod tests {
    use deskpilot_backend::FakeDesktop;
    use deskpilot_backend::fake::FakeWindow;
    use deskpilot_engine::pick::Pick;
    use deskpilot_engine::{EngineConfig, Session};
    use deskpilot_types::Point;

    use super::*;

    #[test]
    fn a_window_pick_renders_its_window_with_source_and_confidence() {
        let fake = FakeDesktop::new(800, 600);
        fake.add_window(FakeWindow {
            fill: [0, 200, 0],
            ..FakeWindow::new("editor", Rect::new(100, 100, 300, 200))
        });
        let s = Session::standalone(fake.desktop(), EngineConfig::default());
        let ctx = s
            .pick_context(Pick::Window(Point::new(150, 150)), &[])
            .unwrap();
        let Rendered { json, markdown } = render(&ctx.facts);
        assert_eq!(json["kind"], "window");
        assert_eq!(json["version"], 1);
        assert_eq!(json["window"]["title"], "editor");
        assert_eq!(json["window"]["source"], "visual");
        assert_eq!(json["window"]["confidence"], 1.0);
        assert_eq!(
            json["window"]["bounds"],
            json!({ "x": 100, "y": 100, "width": 300, "height": 200 })
        );
        assert_eq!(json["screen"]["bounds"]["width"], 800);
        assert!(json.get("control").is_none() && json.get("region").is_none());
        assert!(json["text"].is_null(), "no OCR on the fake desktop: {json}");
        assert!(markdown.starts_with("# UI context: window\n"), "{markdown}");
        assert!(markdown.contains("- Title: editor"), "{markdown}");
        assert!(markdown.contains("## Text\n\nNone found."), "{markdown}");
    }

    #[test]
    fn a_region_pick_says_its_bounds_are_visual() {
        let fake = FakeDesktop::new(400, 300);
        let s = Session::standalone(fake.desktop(), EngineConfig::default());
        let ctx = s
            .pick_context(Pick::Region(Rect::new(10, 20, 30, 40)), &[])
            .unwrap();
        let Rendered { json, markdown } = render(&ctx.facts);
        assert_eq!(json["kind"], "region");
        assert_eq!(
            json["region"],
            json!({ "bounds": { "x": 10, "y": 20, "width": 30, "height": 40 }, "source": "visual", "confidence": 1.0 })
        );
        assert!(
            markdown.contains("## Region\n- Bounds: 30×40 at (10, 20) (physical pixels)\n- source `visual`, confidence 1.0"),
            "{markdown}"
        );
    }
}
