//! Where an application's bounds go on the screen, per window: moved by the window's origin for
//! a toolkit that reports extents relative to its window (GTK 4, also on X11), and mapped from
//! logical to physical pixels for a scaled one (GTK with `GDK_SCALE=2`).
//!
//! A tree read decides both from the frame's extents against the X window ([`window_relative`],
//! [`Scale::of`]) and remembers the outcome as the window's [`Placement`], so an element re-read
//! later (`live`) gets the same bounds as in the tree and a hit test (`hits`) asks the toolkit
//! at the point the toolkit itself means ([`Placement::in_app`]).

use super::*;

/// How one window's reported extents become physical screen pixels.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub(super) struct Placement {
    /// Added first: the window's client origin for window-relative extents.
    pub offset: (i32, i32),
    /// Then logical → physical, relative to the frame.
    pub scale: Option<Scale>,
}

/// A logical → physical mapping: `frame` (as the app reports it, after `offset`) onto
/// `target` (the X window) by `sx`, `sy`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct Scale {
    pub frame: Rect,
    pub target: Rect,
    pub sx: f64,
    pub sy: f64,
}

impl Scale {
    /// The scaling of an app that reports its frame smaller than its X window by a common
    /// factor (GTK with `GDK_SCALE=2`, Qt with a scale factor); `None` when it does not.
    pub(super) fn of(frame: Rect, window: &WindowInfo) -> Option<Scale> {
        let (target, sx, sy) = [window.client, window.frame].into_iter().find_map(|r| {
            let sx = r.width as f64 / frame.width.max(1) as f64;
            let sy = r.height as f64 / frame.height.max(1) as f64;
            let same = (sx - sy).abs() <= 0.03 * sx;
            (same && (1.1..=4.0).contains(&sx)).then_some((r, sx, sy))
        })?;
        // Toolkits scale by quarter steps (GTK by whole ones); the frame's size is rounded to
        // logical pixels, so snap a measured 1.99 to 2.
        let snap = |s: f64| {
            let q = (s * 4.0).round() / 4.0;
            if (q - s).abs() <= 0.02 * s { q } else { s }
        };
        Some(Scale {
            frame,
            target,
            sx: snap(sx),
            sy: snap(sy),
        })
    }

    /// Each point mapped relative to the frame, so odd physical origins stay exact.
    fn map(&self, b: Rect) -> Rect {
        let x = self.target.x as f64 + (b.x - self.frame.x) as f64 * self.sx;
        let y = self.target.y as f64 + (b.y - self.frame.y) as f64 * self.sy;
        Rect::new(
            x.round() as i32,
            y.round() as i32,
            (b.width as f64 * self.sx).round().max(1.0) as u32,
            (b.height as f64 * self.sy).round().max(1.0) as u32,
        )
    }
}

impl Placement {
    /// Extents as the application reported them → physical screen pixels.
    pub(super) fn on_screen(&self, b: Rect) -> Rect {
        let b = Rect::new(b.x + self.offset.0, b.y + self.offset.1, b.width, b.height);
        match &self.scale {
            Some(s) => s.map(b),
            None => b,
        }
    }

    /// A physical screen point → the coordinates the application means.
    pub(super) fn in_app(&self, p: Point) -> (i32, i32) {
        let (x, y) = match &self.scale {
            Some(s) => (
                s.frame.x as f64 + (p.x - s.target.x) as f64 / s.sx,
                s.frame.y as f64 + (p.y - s.target.y) as f64 / s.sy,
            ),
            None => (p.x as f64, p.y as f64),
        };
        (
            x.round() as i32 - self.offset.0,
            y.round() as i32 - self.offset.1,
        )
    }

    /// Applies the placement to every element's bounds (and its on-screen flag).
    pub(super) fn apply(&self, elements: &mut [RawElement], window: &WindowInfo) {
        if *self == Placement::default() {
            return;
        }
        for e in elements.iter_mut() {
            e.bounds = e.bounds.map(|b| self.on_screen(b));
            e.states.onscreen = e
                .bounds
                .is_some_and(|b| b.intersect(&window.frame).is_some());
        }
    }
}

/// Whether an application reports extents relative to its window rather than the screen
/// (GTK 4, also on X11): its frame sits at the origin at the window's size while the window
/// does not. `None` when the window's place cannot tell (it is at the screen's origin) or the
/// sizes differ (a scaled app: `to_physical` maps it from its frame).
pub(super) fn window_relative(frame: Rect, window: &WindowInfo) -> Option<bool> {
    let near = |a: i32, b: i32, slack: i32| (a - b).abs() <= slack;
    let c = window.client;
    let sized = [window.client, window.frame].iter().any(|r| {
        near(r.width as i32, frame.width as i32, 24)
            && near(r.height as i32, frame.height as i32, 24)
    });
    if !sized || (near(c.x, 0, 24) && near(c.y, 0, 24)) {
        return None;
    }
    if near(frame.x, 0, 2) && near(frame.y, 0, 2) {
        return Some(true);
    }
    let placed = [window.client, window.frame]
        .iter()
        .any(|r| near(frame.x, r.x, 24) && near(frame.y, r.y, 24));
    placed.then_some(false)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn points_go_back_to_where_the_app_means_them() {
        // GTK 4 at 800,400: the Search button at 76,10 as the app says.
        let gtk4 = Placement {
            offset: (800, 400),
            scale: None,
        };
        assert_eq!(
            gtk4.on_screen(Rect::new(76, 10, 24, 24)),
            Rect::new(876, 410, 24, 24)
        );
        assert_eq!(gtk4.in_app(Point::new(880, 420)), (80, 20));
        // GDK_SCALE=2: frame 159,3 642×533 on the X window 319,7 1282×1065.
        let scaled = Placement {
            offset: (0, 0),
            scale: Some(Scale {
                frame: Rect::new(159, 3, 642, 533),
                target: Rect::new(319, 7, 1282, 1065),
                sx: 2.0,
                sy: 2.0,
            }),
        };
        assert_eq!(
            scaled.on_screen(Rect::new(200, 100, 50, 20)),
            Rect::new(401, 201, 100, 40)
        );
        assert_eq!(scaled.in_app(Point::new(401, 201)), (200, 100));
    }
}
