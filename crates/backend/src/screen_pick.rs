//! Picking on the real screen (the UI context picker's "pick on screen"): the person points
//! with the real pointer, the platform outlines what is under it, takes exactly one click or
//! drag, and gives the pointer back.

use std::time::Duration;

use deskpilot_types::{Point, Rect};

use crate::error::Error;

/// What the person did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Gesture {
    /// A click at this physical point.
    Click(Point),
    /// A drag over this physical rectangle.
    Drag(Rect),
}

/// The platform side of picking on screen.
pub trait ScreenPick: Send + Sync {
    /// Shows `outline(p)` around what is under the pointer as it moves (nothing when `None`),
    /// takes one click or drag, then removes everything it showed. `Ok(None)`: the person
    /// cancelled (right button) or `timeout` passed.
    fn pick_on_screen(
        &self,
        outline: &mut dyn FnMut(Point) -> Option<Rect>,
        timeout: Duration,
    ) -> Result<Option<Gesture>, Error>;
}

/// For platforms that cannot: says why.
#[derive(Debug, Clone)]
pub struct NoScreenPick {
    pub reason: String,
}

impl ScreenPick for NoScreenPick {
    fn pick_on_screen(
        &self,
        _outline: &mut dyn FnMut(Point) -> Option<Rect>,
        _timeout: Duration,
    ) -> Result<Option<Gesture>, Error> {
        Err(Error::Unsupported {
            what: "picking on screen",
            reason: self.reason.clone(),
        })
    }
}
