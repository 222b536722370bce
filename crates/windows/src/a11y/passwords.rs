//! Where password fields show on Windows, for captures to paint over
//! (`Accessibility::password_fields`), without reading a tree:
//!
//! - standard `Edit` controls with `ES_PASSWORD` among each window's descendants
//!   (`EnumChildWindows`, class and style: user32 answers from its own tables, no message
//!   reaches the application, so a hung application cannot hold a capture up);
//! - the element with the keyboard focus, when UI Automation says it is a password field
//!   (`IsPassword`: WPF, WinUI, a browser's `<input type=password>` being typed into), asked on
//!   the COM thread within the capture's deadline.
//!
//! Limit: an unfocused password box that is not a Win32 `Edit` (WPF, WinUI, a browser page) is
//! not found; a COM thread busy past the deadline (a long tree read) leaves the focused one out.

use std::time::Instant;

use deskpilot_backend::{Error, PasswordField, PasswordFields};
use deskpilot_types::{Rect, WindowId, WindowInfo};
use windows::Win32::Foundation::{HWND, LPARAM, RECT};
use windows::Win32::UI::WindowsAndMessaging::{
    ES_PASSWORD, EnumChildWindows, GetWindowRect, IsWindowVisible,
};
use windows::core::BOOL;

use super::controls::class_and_style;
use super::{hwnd, uia};
use crate::desktop::WindowsDesktop;
use crate::monitors::rect_of;

unsafe extern "system" fn collect(child: HWND, data: LPARAM) -> BOOL {
    // SAFETY: `data` is the `&mut Vec<HWND>` passed by `password_edits`, alive for the
    // synchronous call.
    let list = unsafe { &mut *(data.0 as *mut Vec<HWND>) };
    list.push(child);
    BOOL(1)
}

/// The visible `ES_PASSWORD` edit controls inside `window`, in screen pixels.
fn password_edits(window: HWND) -> Vec<Rect> {
    let mut children: Vec<HWND> = Vec::new();
    // SAFETY: the callback only pushes into `children`, which outlives the call; a window that
    // died meanwhile makes the call enumerate nothing.
    let _ = unsafe {
        EnumChildWindows(
            Some(window),
            Some(collect),
            LPARAM(&mut children as *mut _ as isize),
        )
    };
    children
        .into_iter()
        .filter(|c| {
            let (class, style) = class_and_style(*c);
            // SAFETY: a handle that may have died: the call then answers false.
            let visible = unsafe { IsWindowVisible(*c) }.as_bool();
            visible && class.eq_ignore_ascii_case("edit") && style & ES_PASSWORD as u32 != 0
        })
        .filter_map(|c| {
            let mut r = RECT::default();
            // SAFETY: as above; a dead window fails the call.
            unsafe { GetWindowRect(c, &mut r) }.ok()?;
            let r = rect_of(&r);
            (!r.is_empty()).then_some(r)
        })
        .collect()
}

/// The focused element's bounds and process when UI Automation says it is a password field.
fn focused_password(
    automation: &windows::Win32::UI::Accessibility::IUIAutomation,
) -> Option<(Rect, u32)> {
    // SAFETY: live reads on the COM thread's client; every failure is an answer of none.
    unsafe {
        let e = automation.GetFocusedElement().ok()?;
        if !e.CurrentIsPassword().ok()?.as_bool() {
            return None;
        }
        let r = rect_of(&e.CurrentBoundingRectangle().ok()?);
        let pid = u32::try_from(e.CurrentProcessId().ok()?).ok()?;
        (!r.is_empty()).then_some((r, pid))
    }
}

impl WindowsDesktop {
    /// See the module doc.
    pub(super) fn find_password_fields(
        &self,
        windows: &[WindowInfo],
        deadline: Instant,
    ) -> Result<PasswordFields, Error> {
        let mut found = PasswordFields::default();
        for w in windows {
            found
                .fields
                .extend(
                    password_edits(hwnd(w.id))
                        .into_iter()
                        .map(|bounds| PasswordField {
                            window: w.id,
                            bounds,
                        }),
                );
        }
        let left = deadline.saturating_duration_since(Instant::now());
        let focused = self
            .com
            .call("looking for a focused password field", left, |session| {
                Ok(session.uia(uia::create).ok().and_then(focused_password))
            });
        match focused {
            Ok(Some((bounds, pid))) => {
                let owner: Option<WindowId> = windows
                    .iter()
                    .filter(|w| w.pid == Some(pid))
                    .find(|w| w.frame.contains(bounds.center()))
                    .map(|w| w.id);
                if let Some(window) = owner
                    && !found.fields.iter().any(|f| f.bounds == bounds)
                {
                    found.fields.push(PasswordField { window, bounds });
                }
            }
            Ok(None) => {}
            Err(e) => tracing::debug!(error = %e, "password fields: no focused element in time"),
        }
        Ok(found)
    }
}
