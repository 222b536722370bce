//! A screenshot with what a profile adds around it: the decorations, the screen outline of the
//! window it shows (or the one in front), the app-skill hint of the app in front, and the
//! pointer. One blocking job, so the outline and the hint describe the same moment as the
//! pixels.

use deskpilot_engine::coords::ViewGeometry;
use deskpilot_engine::{
    CaptureTarget, Decorations, Error, Outline, OutlineMode, Screenshot, ScreenshotRequest,
    Session, WindowRef,
};
use deskpilot_skills::Skill;
use deskpilot_types::{Point, WindowInfo};

/// What to draw on the image (image pixels).
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Drawing {
    /// Grid spacing; `Some(0)` for the default spacing.
    pub grid: Option<u32>,
    pub mark: Option<(i32, i32)>,
    pub dim: Option<(i32, i32, u32, u32)>,
}

impl Drawing {
    pub(crate) fn any(&self) -> bool {
        self.grid.is_some() || self.mark.is_some() || self.dim.is_some()
    }

    /// What is drawn, in words.
    pub(crate) fn describe(&self) -> String {
        [
            self.grid.map(|_| "a grid labelled in image pixels"),
            self.mark.map(|_| "a crosshair mark"),
            self.dim.map(|_| "dimming outside the given rectangle"),
        ]
        .into_iter()
        .flatten()
        .collect::<Vec<_>>()
        .join(", ")
    }
}

/// A screenshot and what came with it.
#[derive(Debug)]
pub(crate) struct Captured {
    pub shot: Screenshot,
    /// The target after a title match was resolved.
    pub target: CaptureTarget,
    /// The outline, when one was asked for: `Ok(None)` when the window had nothing to show.
    pub outline: Option<Result<Option<Outline>, String>>,
    /// The skill of the app in front and its hint line.
    pub hint: Option<(Skill, String)>,
    /// The window in front: the screenshot's window, else the active one.
    pub front: Option<WindowInfo>,
    /// The pointer in physical pixels, when asked for and the platform reports it.
    pub cursor: Option<Point>,
}

/// Takes the screenshot `request` names (a `title_match` resolved first) with `drawing`, then
/// the outline (`mode`) and the skill hint.
pub(crate) fn capture(
    session: &Session,
    mut request: ScreenshotRequest,
    title_match: Option<String>,
    drawing: Drawing,
    mode: OutlineMode,
    with_cursor: bool,
) -> Result<Captured, Error> {
    if let Some(t) = title_match.filter(|t| !t.is_empty()) {
        let w = session.resolve_window(&WindowRef::TitleMatch(t))?;
        request.target = CaptureTarget::Window(w.id);
    }
    let decorations = |view: &ViewGeometry| Decorations {
        grid: drawing.grid.map(|step| {
            if step == 0 {
                Decorations::default_grid_step(view.width)
            } else {
                step
            }
        }),
        mark: drawing.mark,
        dim: drawing.dim,
        ..Decorations::default()
    };
    let shot = session.screenshot_decorated(&request, &decorations)?;
    let front = shot.window.clone().or_else(|| {
        session
            .list_windows(&Default::default())
            .ok()?
            .into_iter()
            .find(|w| w.state.active)
    });
    let outline = (mode != OutlineMode::None).then(|| {
        let window = match &shot.window {
            Some(w) => Some(w.id),
            None => front.as_ref().map(|w| w.id).or_else(|| {
                session
                    .resolve_window(&WindowRef::Current)
                    .ok()
                    .map(|w| w.id)
            }),
        };
        match window {
            Some(id) => session
                .outline(id, &shot.view, mode, &session.config().outline)
                .map_err(|e| format!("{}: {e}", e.code())),
            None => Ok(None),
        }
    });
    let hint = front.as_ref().and_then(|w| session.skill_hint(w));
    let cursor = if with_cursor {
        session.cursor().ok()
    } else {
        None
    };
    Ok(Captured {
        shot,
        target: request.target,
        outline,
        hint,
        front,
        cursor,
    })
}
