//! The screen outline (dsh-computer-use's `uiSummary`): a short text list of a window's controls —
//! role, name, token and centre in a screenshot's pixels — so a model that reads no images can
//! still act. It comes from the accessibility tree, or from OCR lines when the window has no
//! usable tree, and always says which. A password field is listed by its name and marked
//! `password`, never by its text (which its element does not carry).

use deskpilot_types::{Point, Role, WindowId};

use crate::config::{OutlineConfig, OutlineMode};
use crate::coords::ViewGeometry;
use crate::tree::{Element, TreeRequest};
use crate::{
    capture::CaptureTarget, error::Error, ocr::OcrRequest, session::Session, window::WindowRef,
};

/// One outline line.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct OutlineItem {
    pub role: Role,
    pub name: String,
    /// The element's token (accessibility only).
    #[serde(skip_serializing_if = "String::is_empty")]
    pub token: String,
    /// Centre in the screenshot's pixels.
    pub x: u32,
    pub y: u32,
    pub depth: u32,
    /// A password field: its text is never shown (the line says `password`).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub password: bool,
}

/// A window's outline.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Outline {
    /// `accessibility` or `ocr`.
    pub source: &'static str,
    pub window: WindowId,
    pub items: Vec<OutlineItem>,
    /// The rendered lines, within the character budget.
    pub text: String,
    /// Items left out for the budgets.
    pub omitted: usize,
}

fn centre(e: &Element, view: &ViewGeometry) -> Option<(u32, u32)> {
    let b = e.bounds?;
    if b.width == 0 || b.height == 0 {
        return None;
    }
    view.physical_to_image(Point::new(
        b.x + b.width as i32 / 2,
        b.y + b.height as i32 / 2,
    ))
}

fn wanted(e: &Element, mode: OutlineMode) -> bool {
    let named = !e.name.trim().is_empty() || e.value.as_deref().is_some_and(|v| !v.is_empty());
    match mode {
        OutlineMode::None => false,
        OutlineMode::Summary => {
            e.onscreen && (e.role.is_interactive() || (named && e.role == Role::Text))
        }
        OutlineMode::Tree => e.onscreen && (named || e.role.is_interactive()),
    }
}

fn render(items: &[OutlineItem], indent: bool, max_chars: usize) -> (String, usize) {
    let mut text = String::new();
    let mut shown = 0;
    for item in items {
        let line = format!(
            "{}{} \"{}\"{} @ ({}, {}){}\n",
            if indent {
                "  ".repeat(item.depth.min(12) as usize)
            } else {
                String::new()
            },
            item.role,
            item.name,
            if item.password { " password" } else { "" },
            item.x,
            item.y,
            if item.token.is_empty() {
                String::new()
            } else {
                format!(" {}", item.token)
            }
        );
        if text.len() + line.len() > max_chars {
            break;
        }
        text.push_str(&line);
        shown += 1;
    }
    (text, items.len() - shown)
}

impl Session {
    /// The outline of `window` placed in `view` (the screenshot it accompanies).
    pub fn outline(
        &self,
        window: WindowId,
        view: &ViewGeometry,
        mode: OutlineMode,
        config: &OutlineConfig,
    ) -> Result<Option<Outline>, Error> {
        if mode == OutlineMode::None {
            return Ok(None);
        }
        let max_nodes = config.max_nodes.clamp(1, 5000);
        let max_chars = config.max_chars.clamp(200, 100_000);
        let tree = self.window_state(&TreeRequest {
            include_screenshot: false,
            max_elements: 2000,
            ..TreeRequest::new(WindowRef::Id(window))
        });
        let mut items: Vec<OutlineItem> = match &tree {
            Ok(snapshot) => snapshot
                .elements
                .iter()
                .filter(|e| wanted(e, mode))
                .filter_map(|e| {
                    let (x, y) = centre(e, view)?;
                    Some(OutlineItem {
                        role: e.role,
                        name: if e.name.trim().is_empty() {
                            e.value.clone().unwrap_or_default()
                        } else {
                            e.name.clone()
                        },
                        token: e.token.clone(),
                        x,
                        y,
                        depth: e.depth,
                        password: e.password,
                    })
                })
                .collect(),
            Err(_) => Vec::new(),
        };
        let mut source = "accessibility";
        if items.is_empty() {
            // No usable tree: what OCR reads, within the part of the screenshot it shows.
            let read = self.ocr(&OcrRequest::new(CaptureTarget::Window(window)))?;
            source = "ocr";
            items = read
                .lines
                .iter()
                .filter_map(|l| {
                    let (x, y) = view.physical_to_image(l.centre)?;
                    Some(OutlineItem {
                        role: Role::Text,
                        name: l.line.text.clone(),
                        token: String::new(),
                        x,
                        y,
                        depth: 0,
                        password: false,
                    })
                })
                .collect();
        }
        let over = items.len().saturating_sub(max_nodes);
        items.truncate(max_nodes);
        let (text, cut) = render(&items, mode == OutlineMode::Tree, max_chars);
        Ok(Some(Outline {
            source,
            window,
            omitted: over + cut,
            items,
            text,
        }))
    }
}

#[cfg(test)]
mod tests {
    use deskpilot_backend::FakeDesktop;
    use deskpilot_backend::fake::FakeWindow;
    use deskpilot_types::Rect;

    use super::*;
    use crate::config::EngineConfig;

    #[test]
    fn a_window_without_a_tree_is_outlined_from_ocr_within_budget() {
        let fake = FakeDesktop::new(800, 600);
        let id = fake.add_window(FakeWindow::new("canvas", Rect::new(100, 100, 400, 300)));
        for (i, level) in [50u8, 51, 52].iter().enumerate() {
            fake.paint(Rect::new(120, 120 + 40 * i as i32, 60, 12), [*level; 3]);
            fake.ocr().write(*level, &format!("Line {i}"), 90.0);
        }
        let s = Session::standalone(fake.desktop(), EngineConfig::default());
        let view = ViewGeometry::new(Rect::new(0, 0, 800, 600), 400, 300);
        let o = s
            .outline(id, &view, OutlineMode::Summary, &OutlineConfig::default())
            .unwrap()
            .unwrap();
        assert_eq!(o.source, "ocr");
        assert_eq!(o.items.len(), 3);
        // Centre (150, 126) physical is (75, 63) at half size.
        assert_eq!((o.items[0].x, o.items[0].y), (75, 63));
        assert!(
            o.text.starts_with("Text \"Line 0\" @ (75, 63)"),
            "{}",
            o.text
        );
        let small = OutlineConfig {
            max_nodes: 2,
            ..OutlineConfig::default()
        };
        let o = s
            .outline(id, &view, OutlineMode::Summary, &small)
            .unwrap()
            .unwrap();
        assert_eq!((o.items.len(), o.omitted), (2, 1));
        assert!(
            s.outline(id, &view, OutlineMode::None, &small)
                .unwrap()
                .is_none()
        );
        assert!("tree".parse::<OutlineMode>().is_ok() && "all".parse::<OutlineMode>().is_err());
    }

    #[test]
    fn a_password_field_is_outlined_by_its_name_and_marked_never_by_its_text() {
        use deskpilot_backend::fake::{element, tree};
        let fake = FakeDesktop::new(800, 600);
        let id = fake.add_window(FakeWindow::new("Sign in", Rect::new(0, 0, 400, 300)));
        fake.set_tree(
            id,
            tree([
                element(Role::Dialog, "Sign in").bounds(Rect::new(0, 0, 400, 300)),
                // Unnamed, as GTK's password dialogs leave it: the value would have been used.
                element(Role::Edit, "")
                    .child_of(0, 1)
                    .bounds(Rect::new(100, 100, 200, 30))
                    .password("hunter2hunter"),
            ]),
        );
        let s = Session::standalone(fake.desktop(), EngineConfig::default());
        let view = ViewGeometry::new(Rect::new(0, 0, 800, 600), 800, 600);
        let o = s
            .outline(id, &view, OutlineMode::Summary, &OutlineConfig::default())
            .unwrap()
            .unwrap();
        assert_eq!(o.source, "accessibility");
        assert!(o.items[0].password && o.items[0].name.is_empty());
        assert!(
            o.text.starts_with("Edit \"\" password @ (200, 115) s"),
            "{}",
            o.text
        );
        assert!(!o.text.contains('●'), "{}", o.text);
    }
}
