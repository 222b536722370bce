//! The MSAA fallback: `AccessibleObjectFromWindow` + `AccessibleChildren`, depth first.
//!
//! Slower and poorer than UI Automation (one cross-process call per property), but it is what
//! Wine 8 offers: names, roles, states, values and locations, `put_accValue` on edits. Calls
//! an implementation lacks (`E_NOTIMPL`, Wine's `accDoDefaultAction`) read as empty or fail
//! that one action, never the tree.

use std::time::Instant;

use deskpilot_backend::{ElementStates, Error, RawElement, RawTree, TreeLimits};
use deskpilot_types::{Rect, WindowInfo};
use windows::Win32::Foundation::HWND;
use windows::Win32::System::Variant::{VARIANT, VT_DISPATCH};
use windows::Win32::UI::Accessibility::{
    AccessibleChildren, AccessibleObjectFromWindow, IAccessible, SELFLAG_REMOVESELECTION,
    SELFLAG_TAKEFOCUS, SELFLAG_TAKESELECTION,
};
use windows::Win32::UI::WindowsAndMessaging::OBJID_WINDOW;
use windows::core::{BSTR, Interface};

use crate::a11y::{Node, Session, Variant};
use crate::roles;

/// The window's own accessible object (title bar, menu bar, client area and scroll bars are
/// its children).
fn window_object(hwnd: HWND) -> Result<IAccessible, Error> {
    let mut raw = std::ptr::null_mut();
    // SAFETY: `raw` receives an IAccessible pointer with one reference, which `from_raw` owns.
    unsafe {
        AccessibleObjectFromWindow(hwnd, OBJID_WINDOW.0 as u32, &IAccessible::IID, &mut raw)
            .map_err(|e| Error::os("AccessibleObjectFromWindow", e))?;
        if raw.is_null() {
            return Err(Error::os("AccessibleObjectFromWindow", "no object"));
        }
        Ok(IAccessible::from_raw(raw))
    }
}

/// The children of an object: `(object, child id)` pairs, id 0 for full child objects.
fn children(acc: &IAccessible) -> Vec<(IAccessible, i32)> {
    // SAFETY: plain COM calls; each returned VARIANT is owned by a `Variant` and cleared.
    unsafe {
        let count = acc.accChildCount().unwrap_or(0).clamp(0, 10_000);
        if count == 0 {
            return Vec::new();
        }
        let mut raw = vec![VARIANT::default(); count as usize];
        let mut got = 0;
        if AccessibleChildren(acc, 0, &mut raw, &mut got).is_err() {
            return Vec::new();
        }
        let mut out = Vec::new();
        for v in raw.into_iter().take(got.max(0) as usize).map(Variant) {
            if v.vt() == VT_DISPATCH {
                let dispatch = &v.0.Anonymous.Anonymous.Anonymous.pdispVal;
                if let Some(child) = dispatch.as_ref().and_then(|d| d.cast::<IAccessible>().ok()) {
                    out.push((child, 0));
                }
            } else if let Some(id) = v.as_i32() {
                out.push((acc.clone(), id));
            }
        }
        out
    }
}

fn text(r: windows::core::Result<BSTR>) -> String {
    r.map(|b| b.to_string()).unwrap_or_default()
}

struct Props {
    role: u32,
    role_name: Option<String>,
    states: u32,
    name: String,
    value: Option<String>,
    description: String,
    default_action: Option<String>,
    bounds: Option<Rect>,
}

fn props(acc: &IAccessible, child: i32) -> Props {
    let id = Variant::i4(child);
    // SAFETY: plain COM calls with a VT_I4 child id; results are owned values.
    unsafe {
        let role = acc.get_accRole(&id.0).map(Variant);
        let (role, role_name) = match &role {
            Ok(v) => (v.as_i32().unwrap_or(0) as u32, v.as_string()),
            Err(_) => (0, None),
        };
        let states = acc
            .get_accState(&id.0)
            .map(Variant)
            .ok()
            .and_then(|v| v.as_i32())
            .unwrap_or(0) as u32;
        let value = acc.get_accValue(&id.0).ok().map(|b| b.to_string());
        let default_action = acc
            .get_accDefaultAction(&id.0)
            .ok()
            .map(|b| b.to_string())
            .filter(|a| !a.is_empty());
        let (mut x, mut y, mut w, mut h) = (0, 0, 0, 0);
        let bounds = acc
            .accLocation(&mut x, &mut y, &mut w, &mut h, &id.0)
            .ok()
            .filter(|_| w > 0 && h > 0)
            .map(|_| Rect::new(x, y, w as u32, h as u32));
        Props {
            role,
            role_name,
            states,
            name: text(acc.get_accName(&id.0)),
            value,
            description: text(acc.get_accDescription(&id.0)),
            default_action,
            bounds,
        }
    }
}

/// Reads the window's tree depth first within `limits`.
pub(crate) fn tree(
    session: &mut Session,
    hwnd: HWND,
    window: &WindowInfo,
    limits: &TreeLimits,
) -> Result<RawTree, Error> {
    let deadline = Instant::now() + limits.timeout;
    let root = window_object(hwnd)?;
    let mut elements: Vec<RawElement> = Vec::new();
    let mut complete = true;
    let mut notes = Vec::new();
    // (object, child id, parent index, depth)
    let mut stack = vec![(root, 0, None, 0u32)];
    while let Some((acc, child, parent, depth)) = stack.pop() {
        if elements.len() >= limits.max_elements {
            complete = false;
            notes.push(format!(
                "stopped at {} elements (max_elements)",
                limits.max_elements
            ));
            break;
        }
        if Instant::now() >= deadline {
            complete = false;
            notes.push(format!(
                "stopped after {} ms (the application answers slowly)",
                limits.timeout.as_millis()
            ));
            break;
        }
        let p = props(&acc, child);
        if roles::msaa_hidden(p.states) {
            continue;
        }
        let (role, platform_role) = roles::msaa_role(p.role);
        let mut states = roles::msaa_states(p.states, role);
        if let (Some(b), true) = (p.bounds, states.onscreen) {
            states.onscreen = b.intersect(&window.frame).is_some();
        }
        let index = elements.len();
        let is_object = child == 0;
        let handle = session.register(Node::Msaa(acc.clone(), child));
        elements.push(RawElement {
            parent,
            depth,
            role,
            platform_role: p.role_name.unwrap_or_else(|| platform_role.to_string()),
            name: p.name,
            description: p.description,
            value: p.value.filter(|v| !v.is_empty()),
            states,
            actions: p.default_action.into_iter().collect(),
            bounds: p.bounds,
            handle,
        });
        if is_object && depth < limits.max_depth {
            // Reversed so the first child is read first.
            for (c, id) in children(&acc).into_iter().rev() {
                stack.push((c, id, Some(index), depth + 1));
            }
        }
    }
    Ok(RawTree {
        elements,
        source: "msaa".to_string(),
        complete,
        notes,
    })
}

pub(crate) fn do_action(acc: &IAccessible, child: i32, action: &str) -> Result<(), Error> {
    let id = Variant::i4(child);
    // SAFETY: plain COM calls with a VT_I4 child id.
    unsafe {
        let default = text(acc.get_accDefaultAction(&id.0));
        if !default.eq_ignore_ascii_case(action) {
            return Err(Error::Unsupported {
                what: "this MSAA action",
                reason: format!(
                    "the element's only action is its default action \"{default}\", not \"{action}\""
                ),
            });
        }
        acc.accDoDefaultAction(&id.0)
            .map_err(|e| Error::os("accDoDefaultAction", e))
    }
}

pub(crate) fn set_value(acc: &IAccessible, child: i32, value: &str) -> Result<(), Error> {
    let id = Variant::i4(child);
    // SAFETY: plain COM calls with a VT_I4 child id and an owned BSTR.
    unsafe { acc.put_accValue(&id.0, &BSTR::from(value)) }.map_err(|e| Error::os("put_accValue", e))
}

pub(crate) fn read_text(acc: &IAccessible, child: i32) -> Result<String, Error> {
    let id = Variant::i4(child);
    // SAFETY: plain COM calls with a VT_I4 child id.
    unsafe {
        match acc.get_accValue(&id.0) {
            Ok(v) => Ok(v.to_string()),
            Err(_) => acc
                .get_accName(&id.0)
                .map(|b| b.to_string())
                .map_err(|e| Error::os("get_accName", e)),
        }
    }
}

pub(crate) fn states(acc: &IAccessible, child: i32) -> Result<ElementStates, Error> {
    let p = props(acc, child);
    let (role, _) = roles::msaa_role(p.role);
    Ok(roles::msaa_states(p.states, role))
}

/// What `accSelect` is asked to do.
pub(crate) enum Select {
    Focus,
    Take,
    Remove,
}

pub(crate) fn select(acc: &IAccessible, child: i32, how: Select) -> Result<(), Error> {
    let flags = match how {
        Select::Focus => SELFLAG_TAKEFOCUS,
        Select::Take => SELFLAG_TAKESELECTION | SELFLAG_TAKEFOCUS,
        Select::Remove => SELFLAG_REMOVESELECTION,
    };
    let id = Variant::i4(child);
    // SAFETY: plain COM call with a VT_I4 child id.
    unsafe { acc.accSelect(flags as i32, &id.0) }.map_err(|e| Error::os("accSelect", e))
}
