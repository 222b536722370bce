//! Pointer actions with coordinate safety: where a point comes from, whether it may be acted
//! on, and a receipt proving where the pointer landed.
//!
//! Order for every pointer action (dsh-computer-use's safety model, steps 6–8):
//! 1. resolve the point: image coordinates through the reference screenshot's geometry
//!    (`NO_REFERENCE_SCREENSHOT` / `UNKNOWN_SCREENSHOT`), or physical as given;
//! 2. re-check the window that screenshot was pinned to (`TARGET_WINDOW_GONE` / `_CHANGED` / `_MOVED`);
//! 3. hit test through the stacking order (`POINT_OFF_SCREEN`, `OUTSIDE_TARGET_WINDOW`,
//!    `CLICK_WRONG_WINDOW`), per `hit_test` mode;
//! 4. move, read the pointer back, retry once, else `POINTER_NOT_LANDED`; only then press.
//!
//! Nothing reaches the OS before steps 1–3 pass. Scroll and drag may also aim at an element
//! ([`Aim::Element`]): step 1 is then the element's centre on screen, and step 2 re-checks the
//! window as the element's snapshot saw it — no screenshot, no image pixels in between.

use deskpilot_backend::Button;
use deskpilot_types::{ErrorCode, Key, Point, WindowInfo};
use serde::Serialize;

use crate::action::{Outcome, Route};
use crate::config::HitTestMode;
use crate::error::Error;
use crate::limits::CLICK_COUNT;
use crate::registry::{Pin, ScreenshotRecord, recheck_pin};
use crate::safety::{Mutation, on};
use crate::session::Session;
use crate::snapshots::ElementRef;
use crate::verify::VerifyTarget;

/// How long one move may take to show up in the pointer position.
const LANDING_WAIT: std::time::Duration = std::time::Duration::from_millis(150);

/// Pause between the clicks of a double or triple click. A window manager that focuses on
/// click holds a synchronous grab until it replays the press; a second press arriving before
/// that replay was swallowed by openbox in about one double click in three (seen in the
/// end-to-end tests). 25 ms is far inside every toolkit's double-click time (≥ 250 ms).
const CLICK_GAP: std::time::Duration = std::time::Duration::from_millis(25);

/// How x/y are read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CoordinateSpace {
    /// In the pixel space of a screenshot: the given id, or the last one when `None`.
    Image { screenshot_id: Option<u64> },
    /// Physical virtual-desktop pixels.
    Physical,
}

/// A point as a tool received it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PointerTarget {
    pub x: f64,
    pub y: f64,
    pub space: CoordinateSpace,
}

/// Where a scroll or a drag end acts: a point as a tool received it, or an element's centre.
#[derive(Debug, Clone, PartialEq)]
pub enum Aim {
    Point(PointerTarget),
    Element(ElementRef),
}

impl From<PointerTarget> for Aim {
    fn from(target: PointerTarget) -> Self {
        Aim::Point(target)
    }
}

impl From<ElementRef> for Aim {
    fn from(element: ElementRef) -> Self {
        Aim::Element(element)
    }
}

/// Proof of where the pointer went.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, schemars::JsonSchema)]
pub struct Receipt {
    /// Where the pointer is after the move (physical).
    pub x: i32,
    pub y: i32,
    /// Where it was sent (physical).
    #[serde(rename = "requestedX")]
    pub requested_x: i32,
    #[serde(rename = "requestedY")]
    pub requested_y: i32,
    /// Distance between the two, in physical pixels.
    pub drift: f64,
    pub landed: bool,
    /// Whether the move had to be sent twice.
    pub retried: bool,
}

/// What a pointer action did.
#[derive(Debug, Clone)]
pub struct PointerOutcome {
    /// The physical point acted on (the end point for a drag).
    pub point: Point,
    pub receipt: Receipt,
    /// The window under the point at the time of the action.
    pub window: Option<WindowInfo>,
    /// Hit-test findings that did not stop the action (`hit_test: warn`).
    pub warnings: Vec<HitWarning>,
}

/// A hit-test finding that did not stop the action (`hit_test: warn`): the refusal
/// `hit_test: fail` would have given, kept as its code and message. It displays and
/// serializes as `CODE: message`; a profile that branches on it matches [`HitWarning::code`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HitWarning {
    pub code: ErrorCode,
    pub message: String,
}

impl HitWarning {
    fn of(e: &Error) -> Self {
        Self {
            code: e.code(),
            message: e.to_string(),
        }
    }
}

impl std::fmt::Display for HitWarning {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.code, self.message)
    }
}

impl Serialize for HitWarning {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

impl Outcome for PointerOutcome {
    fn route(&self) -> Route {
        Route::Input
    }
}

/// A resolved, checked point.
pub(crate) struct Checked {
    pub(crate) point: Point,
    pub(crate) window: Option<WindowInfo>,
    warnings: Vec<HitWarning>,
}

impl Session {
    fn reference(&self, space: CoordinateSpace) -> Result<Option<ScreenshotRecord>, Error> {
        match space {
            CoordinateSpace::Physical => Ok(None),
            CoordinateSpace::Image {
                screenshot_id: Some(id),
            } => self.screenshot_record(id).map(Some),
            CoordinateSpace::Image {
                screenshot_id: None,
            } => self
                .last_screenshot()
                .map(Some)
                .ok_or(Error::NoReferenceScreenshot),
        }
    }

    /// ` with ctrl+shift held` for a label, or nothing.
    fn held(modifiers: &[Key]) -> String {
        if modifiers.is_empty() {
            return String::new();
        }
        let names: Vec<String> = modifiers
            .iter()
            .map(|k| format!("{k:?}").to_lowercase())
            .collect();
        format!(" with {} held", names.join("+"))
    }

    /// Steps 1–3: resolve `targets` against one reference, re-check its pinned window and hit test.
    pub(crate) fn check_points(
        &self,
        targets: &[PointerTarget],
        mode: HitTestMode,
    ) -> Result<Vec<Checked>, Error> {
        let space = targets
            .first()
            .map(|t| t.space)
            .unwrap_or(CoordinateSpace::Physical);
        let reference = self.reference(space)?;
        let mut points = Vec::with_capacity(targets.len());
        for t in targets {
            points.push(match (&reference, t.space) {
                (Some(r), CoordinateSpace::Image { .. }) => r.view.image_to_physical(t.x, t.y)?,
                _ => {
                    if !(t.x.is_finite() && t.y.is_finite()) || t.x.abs() > 1e6 || t.y.abs() > 1e6 {
                        return Err(Error::InvalidArgument {
                            message: format!("({}, {}) is not a screen point", t.x, t.y),
                        });
                    }
                    Point::new(t.x.round() as i32, t.y.round() as i32)
                }
            });
        }
        let checked = self.hit_check(&points, reference.as_ref().and_then(|r| r.window), mode)?;
        if let Some(first) = checked.first() {
            if let Some(w) = &first.window {
                self.note_window(w);
            }
            if let Some(p) = points.first() {
                self.note_point(*p);
            }
        }
        // What `verify` samples: the screenshot the point was read in, else the window under it.
        self.aim(
            match (&reference, checked.first().and_then(|c| c.window.as_ref())) {
                (Some(r), _) => VerifyTarget::Screenshot(r.id),
                (None, Some(w)) => VerifyTarget::Window(w.id),
                (None, None) => VerifyTarget::Screen,
            },
        );
        Ok(checked)
    }

    /// Steps 1–3 for aims: points as [`check_points`](Self::check_points) checks them (all in
    /// one reference when every aim is a point), an element at its centre now, pinned to its
    /// window as its snapshot saw it.
    fn check_aims(&self, aims: &[Aim], mode: HitTestMode) -> Result<Vec<Checked>, Error> {
        let points: Option<Vec<PointerTarget>> = aims
            .iter()
            .map(|a| match a {
                Aim::Point(t) => Some(*t),
                Aim::Element(_) => None,
            })
            .collect();
        if let Some(points) = points {
            return self.check_points(&points, mode);
        }
        let mut checked = Vec::with_capacity(aims.len());
        for aim in aims {
            let mut one = match aim {
                Aim::Point(t) => self.check_points(&[*t], mode)?,
                Aim::Element(e) => self.check_element(e, mode)?,
            };
            checked.push(one.remove(0));
        }
        Ok(checked)
    }

    /// Steps 1–3 for an element: its centre on screen, the window as its snapshot saw it
    /// re-checked (moved → `TARGET_WINDOW_MOVED`) and the centre hit tested against it.
    fn check_element(&self, target: &ElementRef, mode: HitTestMode) -> Result<Vec<Checked>, Error> {
        let (seen, element) = self.element(target.clone())?;
        let Some(bounds) = element.bounds else {
            return Err(Error::ElementNotFound {
                what: format!("{target} has no position on screen"),
            });
        };
        let centre = bounds.center();
        let checked = self.hit_check(&[centre], Some(Pin::of(&seen)), mode)?;
        if let Some(w) = checked.first().and_then(|c| c.window.as_ref()) {
            self.note_window(w);
        }
        self.note_point(centre);
        self.aim(VerifyTarget::Window(seen.id));
        Ok(checked)
    }

    /// Steps 2–3 for physical points: re-check the window `pin` names (when any) and hit test
    /// through the stacking order against it.
    pub(crate) fn hit_check(
        &self,
        points: &[Point],
        pin: Option<Pin>,
        mode: HitTestMode,
    ) -> Result<Vec<Checked>, Error> {
        let windows = self.desktop().windows.list_windows()?;
        let monitors = self.desktop().screens.monitors()?;
        let pinned = recheck_pin(&windows, pin)?;
        let mut checked = Vec::with_capacity(points.len());
        for &point in points {
            if !monitors.iter().any(|m| m.rect.contains(point)) {
                return Err(Error::PointOffScreen { point });
            }
            // The platform's own hit test when it has one, else the topmost listed window.
            let hit = self.desktop().windows.window_at(point).unwrap_or(None);
            let under = hit
                .and_then(|id| windows.iter().find(|w| w.id == id))
                .or_else(|| {
                    windows
                        .iter()
                        .find(|w| w.state.visible && w.frame.contains(point))
                })
                .cloned();
            let mut warnings = Vec::new();
            if let (Some(target), false) = (&pinned, mode == HitTestMode::Off) {
                let problem = if !target.frame.contains(point) {
                    Some(Error::OutsideTargetWindow {
                        point,
                        window: target.frame,
                    })
                } else {
                    match &under {
                        Some(w) if w.id != target.id && w.pid != target.pid => {
                            Some(Error::ClickWrongWindow {
                                point,
                                other: w.label(),
                            })
                        }
                        _ => None,
                    }
                };
                match (problem, mode) {
                    (Some(e), HitTestMode::Fail) => return Err(e),
                    (Some(e), _) => warnings.push(HitWarning::of(&e)),
                    (None, _) => {}
                }
            }
            checked.push(Checked {
                point,
                window: under,
                warnings,
            });
        }
        Ok(checked)
    }

    /// Presses `modifiers` in order, runs `f`, then releases them in reverse — always, even
    /// when `f` or a later press failed, so no modifier is ever left held.
    fn with_modifiers<T>(
        &self,
        modifiers: &[Key],
        f: impl FnOnce() -> Result<T, Error>,
    ) -> Result<T, Error> {
        let keyboard = &self.desktop().keyboard;
        let mut pressed = Vec::with_capacity(modifiers.len());
        let mut outcome = None;
        for key in modifiers {
            if let Err(e) = keyboard.key(*key, true) {
                outcome = Some(Err(e.into()));
                break;
            }
            pressed.push(*key);
        }
        let result = outcome.unwrap_or_else(f);
        let mut released = Ok(());
        for key in pressed.iter().rev() {
            if let Err(e) = keyboard.key(*key, false) {
                released = Err(Error::from(e));
            }
        }
        let value = result?;
        released?;
        Ok(value)
    }

    /// Step 4: move and prove it.
    ///
    /// A window manager that catches a click with a synchronous passive grab (click-to-focus)
    /// freezes the pointer until it replays the event; moves sent meanwhile are queued, not
    /// lost. So each attempt polls the position for up to [`LANDING_WAIT`] before the one
    /// retry, and before `POINTER_NOT_LANDED`.
    pub(crate) fn move_with_receipt(&self, p: Point) -> Result<Receipt, Error> {
        let pointer = &self.desktop().pointer;
        let mut at = p;
        for attempt in 0..2 {
            pointer.move_to(p)?;
            let deadline = std::time::Instant::now() + LANDING_WAIT;
            loop {
                at = pointer.position()?;
                if at == p {
                    return Ok(Receipt {
                        x: at.x,
                        y: at.y,
                        requested_x: p.x,
                        requested_y: p.y,
                        drift: 0.0,
                        landed: true,
                        retried: attempt > 0,
                    });
                }
                if std::time::Instant::now() >= deadline {
                    break;
                }
                std::thread::sleep(std::time::Duration::from_millis(2));
            }
        }
        Err(Error::PointerNotLanded {
            requested: p,
            landed: at,
        })
    }

    /// Moves the pointer (no hit test: moving is not acting on a window).
    pub fn move_cursor(&self, target: PointerTarget) -> Result<PointerOutcome, Error> {
        let mut checked = self.check_points(&[target], HitTestMode::Off)?;
        let c = checked.remove(0);
        self.gate(
            Mutation::Other,
            &format!(
                "move the pointer to ({}, {}){}",
                c.point.x,
                c.point.y,
                on(c.window.as_ref())
            ),
        )?;
        let receipt = self.move_with_receipt(c.point)?;
        Ok(PointerOutcome {
            point: c.point,
            receipt,
            window: c.window,
            warnings: c.warnings,
        })
    }

    /// Clicks `count` times with `button`; a count outside [`CLICK_COUNT`] is refused
    /// ([`Error::OutOfRange`]) before anything else is looked at.
    pub fn click(
        &self,
        target: PointerTarget,
        button: Button,
        count: impl Into<i64>,
        modifiers: &[Key],
        mode: HitTestMode,
    ) -> Result<PointerOutcome, Error> {
        check_modifiers(modifiers)?;
        let count = click_count(count.into())?;
        let mut checked = self.check_points(&[target], mode)?;
        self.click_checked(checked.remove(0), button, count, modifiers)
    }

    /// Step 4 and the clicks, for a point that passed the checks (and a count that passed
    /// [`check_count`]).
    pub(crate) fn click_checked(
        &self,
        c: Checked,
        button: Button,
        count: u8,
        modifiers: &[Key],
    ) -> Result<PointerOutcome, Error> {
        let times = match count {
            1 => "",
            2 => "double ",
            _ => "triple ",
        };
        self.gate(
            Mutation::Other,
            &format!(
                "{times}{} click at ({}, {}){}{}",
                format!("{button:?}").to_lowercase(),
                c.point.x,
                c.point.y,
                Self::held(modifiers),
                on(c.window.as_ref())
            ),
        )?;
        let receipt = self.move_with_receipt(c.point)?;
        self.with_modifiers(modifiers, || {
            for i in 0..count {
                if i > 0 {
                    std::thread::sleep(CLICK_GAP);
                }
                self.desktop().pointer.button(button, true)?;
                self.desktop().pointer.button(button, false)?;
            }
            Ok(())
        })?;
        Ok(PointerOutcome {
            point: c.point,
            receipt,
            window: c.window,
            warnings: c.warnings,
        })
    }

    /// Scrolls `dy` notches down (negative: up) and `dx` right (negative: left) at the point
    /// or over the element's centre.
    pub fn scroll(
        &self,
        target: impl Into<Aim>,
        dx: i32,
        dy: i32,
        modifiers: &[Key],
        mode: HitTestMode,
    ) -> Result<PointerOutcome, Error> {
        check_modifiers(modifiers)?;
        if dx == 0 && dy == 0 {
            return Err(Error::InvalidArgument {
                message: "scroll needs a non-zero dy or dx (notches)".to_string(),
            });
        }
        if dx.abs() > 200 || dy.abs() > 200 {
            return Err(Error::InvalidArgument {
                message: format!("scroll of ({dx}, {dy}) notches is beyond ±200"),
            });
        }
        let mut checked = self.check_aims(&[target.into()], mode)?;
        let c = checked.remove(0);
        self.gate(
            Mutation::Other,
            &format!(
                "scroll ({dx}, {dy}) notches at ({}, {}){}{}",
                c.point.x,
                c.point.y,
                Self::held(modifiers),
                on(c.window.as_ref())
            ),
        )?;
        let receipt = self.move_with_receipt(c.point)?;
        self.with_modifiers(modifiers, || Ok(self.desktop().pointer.wheel(dx, dy)?))?;
        Ok(PointerOutcome {
            point: c.point,
            receipt,
            window: c.window,
            warnings: c.warnings,
        })
    }

    /// Presses at `from`, moves in `steps` steps to `to`, releases there (each a point or an
    /// element's centre).
    pub fn drag(
        &self,
        from: impl Into<Aim>,
        to: impl Into<Aim>,
        button: Button,
        steps: u32,
        modifiers: &[Key],
        mode: HitTestMode,
    ) -> Result<PointerOutcome, Error> {
        check_modifiers(modifiers)?;
        if !(1..=200).contains(&steps) {
            return Err(Error::InvalidArgument {
                message: format!("steps {steps} must be 1..=200"),
            });
        }
        let checked = self.check_aims(&[from.into(), to.into()], mode)?;
        let (a, b) = (checked[0].point, checked[1].point);
        self.gate(
            Mutation::Other,
            &format!(
                "drag from ({}, {}){} to ({}, {}){}{}",
                a.x,
                a.y,
                on(checked[0].window.as_ref()),
                b.x,
                b.y,
                on(checked[1].window.as_ref()),
                Self::held(modifiers)
            ),
        )?;
        self.move_with_receipt(a)?;
        let receipt = self.with_modifiers(modifiers, || {
            self.desktop().pointer.button(button, true)?;
            let result = (|| {
                for i in 1..steps {
                    let f = i as f64 / steps as f64;
                    let p = Point::new(
                        (a.x as f64 + (b.x - a.x) as f64 * f).round() as i32,
                        (a.y as f64 + (b.y - a.y) as f64 * f).round() as i32,
                    );
                    self.desktop().pointer.move_to(p)?;
                }
                self.move_with_receipt(b)
            })();
            // Always release, even when the final move failed: never leave a button held.
            let released = self.desktop().pointer.button(button, false);
            let receipt = result?;
            released?;
            Ok(receipt)
        })?;
        let mut warnings = checked[0].warnings.clone();
        warnings.extend(checked[1].warnings.iter().cloned());
        Ok(PointerOutcome {
            point: b,
            receipt,
            window: checked[1].window.clone(),
            warnings,
        })
    }

    /// Where the pointer is now.
    pub fn cursor(&self) -> Result<Point, Error> {
        Ok(self.desktop().pointer.position()?)
    }
}

/// One, two or three clicks ([`CLICK_COUNT`]).
pub(crate) fn check_count(count: u8) -> Result<(), Error> {
    click_count(count.into()).map(drop)
}

/// `count` as a click count, or [`Error::OutOfRange`] naming it `count`.
fn click_count(count: i64) -> Result<u8, Error> {
    CLICK_COUNT
        .check(count)
        .map(|n| n as u8)
        .map_err(|range| Error::OutOfRange {
            what: "count",
            range,
        })
}

/// Only ctrl, shift, alt and super may be held during a pointer action.
fn check_modifiers(modifiers: &[Key]) -> Result<(), Error> {
    if let Some(k) = modifiers.iter().find(|k| !k.is_modifier()) {
        return Err(Error::InvalidArgument {
            message: format!("{k:?} is not a modifier; modifiers are ctrl, shift, alt and super"),
        });
    }
    if modifiers.len() > 4 {
        return Err(Error::InvalidArgument {
            message: "at most 4 modifiers".to_string(),
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use deskpilot_backend::FakeDesktop;
    use deskpilot_backend::fake::{FakeWindow, PointerEvent};
    use deskpilot_types::{ErrorCode, Rect};

    use super::*;
    use crate::capture::{CaptureTarget, ScreenshotRequest};
    use crate::config::EngineConfig;

    fn image(x: f64, y: f64) -> PointerTarget {
        PointerTarget {
            x,
            y,
            space: CoordinateSpace::Image {
                screenshot_id: None,
            },
        }
    }

    fn shot(e: &Session, target: CaptureTarget) -> u64 {
        e.screenshot(&ScreenshotRequest {
            target,
            max_width: Some(800),
            format: None,
        })
        .unwrap()
        .id
    }

    fn setup() -> (
        FakeDesktop,
        Session,
        deskpilot_types::WindowId,
        deskpilot_types::WindowId,
    ) {
        let fake = FakeDesktop::new(1920, 1080);
        let target = fake.add_window(FakeWindow {
            pid: 100,
            ..FakeWindow::new("target", Rect::new(0, 0, 960, 1080))
        });
        let other = fake.add_window(FakeWindow {
            pid: 200,
            ..FakeWindow::new("other", Rect::new(600, 0, 400, 300))
        });
        let e = Session::standalone(fake.desktop(), EngineConfig::default());
        (fake, e, target, other)
    }

    #[test]
    fn image_points_need_a_screenshot_and_map_through_it() {
        let (fake, e, _, _) = setup();
        let err = e
            .click(image(10.0, 10.0), Button::Left, 1, &[], HitTestMode::Fail)
            .unwrap_err();
        assert_eq!(err.code(), ErrorCode::NoReferenceScreenshot);
        assert!(fake.pointer_events().is_empty(), "nothing reached the OS");
        shot(&e, CaptureTarget::Screen);
        let out = e
            .click(image(400.0, 225.0), Button::Left, 2, &[], HitTestMode::Fail)
            .unwrap();
        assert_eq!(out.point, Point::new(961, 541));
        assert!(out.receipt.landed && out.receipt.drift == 0.0);
        let presses = fake
            .pointer_events()
            .iter()
            .filter(|e| matches!(e, PointerEvent::Button { down: true, .. }))
            .count();
        assert_eq!(presses, 2);
        let err = e.click(
            PointerTarget {
                x: 1.0,
                y: 1.0,
                space: CoordinateSpace::Image {
                    screenshot_id: Some(99),
                },
            },
            Button::Left,
            1,
            &[],
            HitTestMode::Fail,
        );
        assert_eq!(err.unwrap_err().code(), ErrorCode::UnknownScreenshot);
        assert_eq!(
            e.click(image(800.0, 0.0), Button::Left, 1, &[], HitTestMode::Fail)
                .unwrap_err()
                .code(),
            ErrorCode::InvalidArgument
        );
    }

    #[test]
    fn the_platform_hit_test_wins_over_the_stacking_order() {
        let (fake, e, target, other) = setup();
        shot(&e, CaptureTarget::Window(target));
        // By the listing the other window covers this point; the platform says the click goes
        // through it (a click-through window) to the target.
        let covered = image(700.0 * 800.0 / 960.0, 100.0 * 800.0 / 960.0);
        fake.set_hit(Some(target));
        e.click(covered, Button::Left, 1, &[], HitTestMode::Fail)
            .unwrap();
        // And the other way round: a point clear by the listing that the platform gives to
        // the other app is refused.
        fake.set_hit(Some(other));
        let err = e
            .click(image(100.0, 500.0), Button::Left, 1, &[], HitTestMode::Fail)
            .unwrap_err();
        assert_eq!(err.code(), ErrorCode::ClickWrongWindow);
    }

    #[test]
    fn pinned_window_is_rechecked_and_hit_tested() {
        let (fake, e, target, other) = setup();
        shot(&e, CaptureTarget::Window(target));
        // The other app covers (600..1000, 0..300): in the target's 960-wide screenshot at scale 800/960.
        let covered = image(700.0 * 800.0 / 960.0, 100.0 * 800.0 / 960.0);
        let err = e
            .click(covered, Button::Left, 1, &[], HitTestMode::Fail)
            .unwrap_err();
        assert_eq!(err.code(), ErrorCode::ClickWrongWindow);
        assert!(err.to_string().contains("\"other\""), "{err}");
        assert!(fake.pointer_events().is_empty());
        let warned = e
            .click(covered, Button::Left, 1, &[], HitTestMode::Warn)
            .unwrap();
        assert_eq!(warned.warnings[0].code, ErrorCode::ClickWrongWindow);
        assert!(
            warned.warnings[0]
                .to_string()
                .starts_with("CLICK_WRONG_WINDOW: "),
            "{:?}",
            warned.warnings
        );
        e.click(image(100.0, 500.0), Button::Left, 1, &[], HitTestMode::Fail)
            .unwrap();

        fake.move_window(target, Rect::new(10, 0, 960, 1080));
        assert_eq!(
            e.click(image(100.0, 500.0), Button::Left, 1, &[], HitTestMode::Fail)
                .unwrap_err()
                .code(),
            ErrorCode::TargetWindowMoved
        );
        fake.remove_window(target);
        assert_eq!(
            e.click(image(100.0, 500.0), Button::Left, 1, &[], HitTestMode::Fail)
                .unwrap_err()
                .code(),
            ErrorCode::TargetWindowGone
        );
        let _ = other;
    }

    #[test]
    fn physical_points_off_screen_and_outside_the_window_are_refused() {
        let (_fake, e, target, _) = setup();
        let phys = |x, y| PointerTarget {
            x,
            y,
            space: CoordinateSpace::Physical,
        };
        assert_eq!(
            e.click(phys(5000.0, 10.0), Button::Left, 1, &[], HitTestMode::Off)
                .unwrap_err()
                .code(),
            ErrorCode::PointOffScreen
        );
        e.click(
            phys(1500.0, 900.0),
            Button::Right,
            1,
            &[],
            HitTestMode::Fail,
        )
        .unwrap();
        let id = shot(&e, CaptureTarget::Window(target));
        let pinned = |x, y| PointerTarget {
            x,
            y,
            space: CoordinateSpace::Image {
                screenshot_id: Some(id),
            },
        };
        e.click(pinned(10.0, 10.0), Button::Left, 1, &[], HitTestMode::Fail)
            .unwrap();
        assert_eq!(
            e.click(phys(-1.0, 0.0), Button::Left, 1, &[], HitTestMode::Fail)
                .unwrap_err()
                .code(),
            ErrorCode::PointOffScreen
        );
    }

    #[test]
    fn receipt_retries_once_then_refuses() {
        let (fake, e, _, _) = setup();
        let phys = |x, y| PointerTarget {
            x,
            y,
            space: CoordinateSpace::Physical,
        };
        fake.stick_pointer(1);
        let out = e.move_cursor(phys(300.0, 300.0)).unwrap();
        assert!(out.receipt.retried && out.receipt.landed);
        fake.stick_pointer(2);
        let err = e
            .click(phys(400.0, 400.0), Button::Left, 1, &[], HitTestMode::Off)
            .unwrap_err();
        assert_eq!(err.code(), ErrorCode::PointerNotLanded);
        assert!(!fake.pointer_events().iter().any(
            |ev| matches!(ev, PointerEvent::Button { at, .. } if *at == Point::new(400, 400))
        ));
    }

    #[test]
    fn drag_always_releases_and_scroll_validates() {
        let (fake, e, _, _) = setup();
        let phys = |x, y| PointerTarget {
            x,
            y,
            space: CoordinateSpace::Physical,
        };
        let out = e
            .drag(
                phys(100.0, 100.0),
                phys(200.0, 150.0),
                Button::Left,
                4,
                &[Key::Shift],
                HitTestMode::Off,
            )
            .unwrap();
        assert_eq!(out.point, Point::new(200, 150));
        let ev = fake.pointer_events();
        assert!(
            matches!(ev.last(), Some(PointerEvent::Button { down: false, at, .. }) if *at == Point::new(200, 150))
        );
        assert_eq!(
            e.scroll(phys(10.0, 10.0), 0, 0, &[], HitTestMode::Off)
                .unwrap_err()
                .code(),
            ErrorCode::InvalidArgument
        );
        e.scroll(phys(10.0, 10.0), 0, 3, &[], HitTestMode::Off)
            .unwrap();
        assert!(matches!(
            fake.pointer_events().last(),
            Some(PointerEvent::Wheel { dx: 0, dy: 3, .. })
        ));
    }

    #[test]
    fn modifiers_wrap_the_action_and_are_always_released() {
        let (fake, e, _, _) = setup();
        let phys = |x, y| PointerTarget {
            x,
            y,
            space: CoordinateSpace::Physical,
        };
        e.click(
            phys(50.0, 60.0),
            Button::Left,
            1,
            &[Key::Ctrl, Key::Shift],
            HitTestMode::Off,
        )
        .unwrap();
        e.scroll(phys(50.0, 60.0), 0, -2, &[Key::Ctrl], HitTestMode::Off)
            .unwrap();
        assert_eq!(
            fake.input_log(),
            [
                "key ctrl down",
                "key shift down",
                "button left down (50, 60)",
                "button left up (50, 60)",
                "key shift up",
                "key ctrl up",
                "key ctrl down",
                "wheel 0 -2 (50, 60)",
                "key ctrl up",
            ]
        );
        let err = e
            .click(
                phys(50.0, 60.0),
                Button::Left,
                1,
                &[Key::Char('a')],
                HitTestMode::Off,
            )
            .unwrap_err();
        assert_eq!(err.code(), ErrorCode::InvalidArgument);
        let before = fake.input_log().len();
        fake.stick_pointer(2);
        e.drag(
            phys(10.0, 10.0),
            phys(90.0, 10.0),
            Button::Left,
            3,
            &[Key::Alt],
            HitTestMode::Off,
        )
        .unwrap_err();
        let log = fake.input_log();
        assert!(
            log[before..].iter().all(|l| !l.starts_with("key")),
            "a drag that never landed presses nothing: {log:?}"
        );
    }

    #[test]
    fn scroll_and_drag_aim_at_an_element_centre_without_a_screenshot() {
        use deskpilot_backend::fake::{element, tree};
        use deskpilot_types::Role;

        use crate::tree::TreeRequest;
        use crate::window::WindowRef;

        let (fake, e, target, _) = setup();
        fake.set_tree(
            target,
            tree(vec![
                element(Role::Window, "target").bounds(Rect::new(0, 0, 960, 1080)),
                element(Role::List, "files")
                    .child_of(0, 1)
                    .bounds(Rect::new(11, 21, 101, 51)),
                element(Role::ListItem, "a.txt")
                    .child_of(1, 2)
                    .bounds(Rect::new(11, 21, 101, 17)),
                element(Role::Text, "label").child_of(0, 1),
            ]),
        );
        let s = e
            .window_state(&TreeRequest::new(WindowRef::Id(target)))
            .unwrap();
        let at = |index| ElementRef::At {
            snapshot: s.id,
            index,
        };
        // The element's own centre on screen: no screenshot is needed, no image pixel rounds it.
        let out = e.scroll(at(1), 0, 2, &[], HitTestMode::Fail).unwrap();
        assert_eq!(out.point, Point::new(61, 46));
        assert!(matches!(
            fake.pointer_events().last(),
            Some(PointerEvent::Wheel { dx: 0, dy: 2, at }) if *at == Point::new(61, 46)
        ));
        // An element and a point may be the two ends of one drag.
        let to = PointerTarget {
            x: 300.0,
            y: 400.0,
            space: CoordinateSpace::Physical,
        };
        let out = e
            .drag(at(2), to, Button::Left, 2, &[], HitTestMode::Fail)
            .unwrap();
        assert_eq!(out.point, Point::new(300, 400));
        assert!(fake.pointer_events().iter().any(
            |ev| matches!(ev, PointerEvent::Button { down: true, at, .. } if *at == Point::new(61, 29))
        ));
        // An element without a position has no centre to aim at.
        let err = e.scroll(at(3), 0, 1, &[], HitTestMode::Fail).unwrap_err();
        assert_eq!(err.code(), ErrorCode::ElementNotFound);
        // The window is re-checked as the snapshot saw it: moved since, nothing happens.
        let events = fake.pointer_events().len();
        fake.move_window(target, Rect::new(5, 0, 960, 1080));
        let err = e.scroll(at(1), 0, 1, &[], HitTestMode::Fail).unwrap_err();
        assert_eq!(err.code(), ErrorCode::TargetWindowMoved);
        assert_eq!(
            fake.pointer_events().len(),
            events,
            "nothing reached the OS"
        );
    }
}
