//! The MSAA fallback: `AccessibleObjectFromWindow` + `AccessibleChildren`, depth first.
//!
//! Slower and poorer than UI Automation (one cross-process call per property), but it is what
//! Wine 8 offers: names, roles, states, values and locations, `put_accValue` on edits. Calls
//! an implementation lacks (`E_NOTIMPL`, Wine's `accDoDefaultAction`) read as empty or fail
//! that one action, never the tree.

use std::time::Instant;

use deskpilot_backend::{ElementStates, Error, RawElement, RawTree, TreeLimits, TreeNote};
use deskpilot_types::{Rect, Role, WindowInfo};
use windows::Win32::Foundation::HWND;
use windows::Win32::System::Variant::{VARIANT, VT_DISPATCH};
use windows::Win32::UI::Accessibility::{
    AccessibleChildren, AccessibleObjectFromWindow, IAccessible, SELFLAG_REMOVESELECTION,
    SELFLAG_TAKEFOCUS, SELFLAG_TAKESELECTION, WindowFromAccessibleObject,
};
use windows::Win32::UI::WindowsAndMessaging::{
    GW_CHILD, GW_HWNDNEXT, GetParent, GetWindow, IsWindowVisible, OBJECT_IDENTIFIER, OBJID_CLIENT,
    OBJID_WINDOW,
};
use windows::core::{BSTR, Interface};

use super::com::Variant;
use super::controls;
use super::session::{Node, Session, out_of_budget};
use crate::roles;

/// The action a standard button offers when its MSAA object names no default action (Wine):
/// `BM_CLICK`, which is what UI Automation's own Win32 button proxy does for Invoke.
const BUTTON_CLICK: &str = "click";

/// One of a window's accessible objects (`OBJID_WINDOW`: the frame, whose children are the
/// title bar, menu bar, client area and scroll bars; `OBJID_CLIENT`; `OBJID_MENU`).
fn object(hwnd: HWND, which: OBJECT_IDENTIFIER) -> Result<IAccessible, Error> {
    let mut raw = std::ptr::null_mut();
    // SAFETY: `raw` receives an IAccessible pointer with one reference, which `from_raw` owns.
    unsafe {
        AccessibleObjectFromWindow(hwnd, which.0 as u32, &IAccessible::IID, &mut raw)
            .map_err(|e| Error::os("AccessibleObjectFromWindow", e))?;
        if raw.is_null() {
            return Err(Error::os("AccessibleObjectFromWindow", "no object"));
        }
        Ok(IAccessible::from_raw(raw))
    }
}

/// The window an accessible object stands for, if any.
fn window_of(acc: &IAccessible) -> Option<HWND> {
    let mut hwnd = HWND::default();
    // SAFETY: `hwnd` is a live out-pointer.
    unsafe { WindowFromAccessibleObject(acc, Some(&mut hwnd)) }.ok()?;
    (!hwnd.is_invalid()).then_some(hwnd)
}

/// The children of an object: `(object, child id)` pairs, id 0 for full child objects.
///
/// Implementations that enumerate nothing (Wine's frame and client objects) get their
/// children from the window hierarchy instead: the menu bar and client area of a top-level
/// window, the client objects of a client area's child windows. `own_window` is the window
/// the object stands for.
fn children(acc: &IAccessible, role: u32, own_window: Option<HWND>) -> Vec<(IAccessible, i32)> {
    let listed = listed_children(acc);
    // Wine's client object lists its child windows as child ids it then cannot describe.
    let describable = listed.iter().any(|(c, id)| {
        *id == 0 || {
            let v = Variant::i4(*id);
            // SAFETY: a plain COM call with a VT_I4 child id.
            unsafe { c.get_accRole(&v.0) }.is_ok()
        }
    });
    if describable {
        return listed;
    }
    let Some(hwnd) = own_window else {
        return Vec::new();
    };
    let mut out = Vec::new();
    // SAFETY: window handle queries that fail cleanly for a dead window.
    unsafe {
        if role == roles::ROLE_WINDOW && GetParent(hwnd).is_err() {
            // The menu bar is read from the window's menu by `menu_elements`.
            if let Ok(client) = object(hwnd, OBJID_CLIENT) {
                out.push((client, 0));
            }
            return out;
        }
        let mut child = GetWindow(hwnd, GW_CHILD).ok();
        while let Some(c) = child.filter(|c| !c.is_invalid()) {
            if IsWindowVisible(c).as_bool()
                && let Ok(o) = object(c, OBJID_CLIENT)
            {
                out.push((o, 0));
            }
            child = GetWindow(c, GW_HWNDNEXT).ok();
        }
    }
    out
}

fn listed_children(acc: &IAccessible) -> Vec<(IAccessible, i32)> {
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
    /// Whether the object answered for its role at all.
    described: bool,
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
        let (role_id, role_name) = match &role {
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
            described: role.is_ok(),
            role: role_id,
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
    let started = Instant::now();
    let root = object(hwnd, OBJID_WINDOW)?;
    let mut elements: Vec<RawElement> = Vec::new();
    let mut complete = true;
    let mut notes = Vec::new();
    // (object, child id, parent index, depth)
    let mut stack = vec![(root, 0, None, 0u32)];
    while let Some((acc, child, parent, depth)) = stack.pop() {
        if let Some(why) = out_of_budget(elements.len(), started, limits) {
            complete = false;
            notes.push(why);
            break;
        }
        let mut p = props(&acc, child);
        // The window a full object stands for, asked once per element (the client object
        // swapped in below stands for the same window).
        let own_window = if child == 0 { window_of(&acc) } else { None };
        let mut acc = acc;
        if !p.described
            && parent.is_some()
            && let Some(client) = own_window.and_then(|h| object(h, OBJID_CLIENT).ok())
        {
            // A frame object that describes nothing (Wine's): its window's client object does.
            p = props(&client, 0);
            acc = client;
        }
        let synthetic_root = parent.is_none() && !p.described;
        if synthetic_root {
            // An implementation that cannot describe the frame object (Wine): it is the window.
            p.role = roles::ROLE_WINDOW;
            if p.name.is_empty() {
                p.name = window.title.clone();
            }
            p.bounds = p.bounds.or(Some(window.frame));
        }
        if roles::msaa_hidden(p.states) {
            continue;
        }
        let (mut role, platform_role) = roles::msaa_role(p.role);
        let mut platform_role = p
            .role_name
            .take()
            .unwrap_or_else(|| platform_role.to_string());
        // A standard control that only says "client": its class tells what it is.
        let mut list = None;
        let mut button = None;
        if parent.is_some()
            && let Some(control) = refine(own_window, p.role, &mut p.states)
        {
            button = Some(control.class.eq_ignore_ascii_case("button"));
            role = control.role;
            platform_role = format!("{} (client of {})", control.platform_role, control.class);
            list = match role {
                Role::List => Some((control.hwnd, controls::List::ListBox)),
                Role::ComboBox => Some((control.hwnd, controls::List::ComboBox)),
                _ => None,
            };
        }
        let mut states = roles::msaa_states(p.states, role);
        if let (Some(b), true) = (p.bounds, states.onscreen) {
            states.onscreen = b.intersect(&window.frame).is_some();
        }
        let mut actions: Vec<String> = p.default_action.into_iter().collect();
        if actions.is_empty()
            && button.unwrap_or_else(|| own_window.is_some_and(controls::is_button))
        {
            actions.push(BUTTON_CLICK.to_string());
        }
        let index = elements.len();
        let is_object = child == 0;
        let handle = session.register(Node::Msaa(acc.clone(), child));
        elements.push(RawElement {
            parent,
            depth,
            role,
            platform_role,
            name: p.name,
            description: p.description,
            value: p.value.filter(|v| !v.is_empty()),
            states,
            actions,
            bounds: p.bounds,
            handle,
        });
        if synthetic_root {
            // No frame object to list the menu bar: read it from the window's menu.
            if !menu_elements(session, hwnd, index, depth, &mut elements) {
                notes.push(TreeNote::MenuBarUnreadable);
            }
        }
        if let Some((h, kind)) = list {
            for (i, item) in controls::items(h, kind).into_iter().enumerate() {
                let onscreen = item
                    .bounds
                    .is_some_and(|b| b.intersect(&window.frame).is_some());
                let handle = session.register(Node::Item(h, kind, i));
                elements.push(RawElement {
                    parent: Some(index),
                    depth: depth + 1,
                    role: Role::ListItem,
                    platform_role: "list item (from the control)".to_string(),
                    name: item.text,
                    description: String::new(),
                    value: None,
                    states: ElementStates {
                        enabled: true,
                        selected: item.selected,
                        onscreen,
                        ..ElementStates::default()
                    },
                    actions: vec!["select".to_string()],
                    bounds: item.bounds,
                    handle,
                });
            }
        }
        if is_object && depth < limits.max_depth {
            // Reversed so the first child is read first.
            for (c, id) in children(&acc, p.role, own_window).into_iter().rev() {
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

/// The menu bar and its menus as elements under `parent`, from the window's `HMENU`. False
/// when the window has a menu bar but its items cannot be read (Wine keeps menus per process).
fn menu_elements(
    session: &mut Session,
    hwnd: HWND,
    parent: usize,
    depth: u32,
    elements: &mut Vec<RawElement>,
) -> bool {
    // The index of the latest element at each menu depth.
    let mut parents = vec![parent];
    let entries = controls::menu(hwnd);
    if entries.len() == 1 {
        return false;
    }
    for (i, e) in entries.iter().enumerate() {
        let opens = entries.get(i + 1).is_some_and(|next| next.depth > e.depth);
        let (role, platform_role) = match (e.depth, opens) {
            (0, _) => (Role::MenuBar, "menu bar"),
            (_, true) => (Role::Menu, "menu item (opens a menu)"),
            (_, false) if e.checked => (Role::CheckMenuItem, "menu item"),
            (_, false) => (Role::MenuItem, "menu item"),
        };
        parents.truncate(e.depth as usize + 1);
        let Some(&up) = parents.last() else { break };
        let handle = session.register(Node::Menu(hwnd, e.command));
        parents.push(elements.len());
        elements.push(RawElement {
            parent: Some(up),
            depth: depth + 1 + e.depth,
            role,
            platform_role: platform_role.to_string(),
            name: e.text.clone(),
            description: String::new(),
            value: None,
            states: ElementStates {
                enabled: e.enabled,
                checked: e.checked,
                expandable: opens && e.depth > 0,
                onscreen: e.bounds.is_some(),
                ..ElementStates::default()
            },
            actions: e
                .command
                .map(|_| "invoke".to_string())
                .into_iter()
                .collect(),
            bounds: e.bounds,
            handle,
        });
    }
    true
}

pub(crate) fn do_action(acc: &IAccessible, child: i32, action: &str) -> Result<(), Error> {
    let id = Variant::i4(child);
    // SAFETY: plain COM calls with a VT_I4 child id.
    unsafe {
        let default = text(acc.get_accDefaultAction(&id.0));
        if default.is_empty()
            && action.eq_ignore_ascii_case(BUTTON_CLICK)
            && child == 0
            && let Some(h) = window_of(acc).filter(|h| controls::is_button(*h))
        {
            return controls::click_button(h);
        }
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
    let mut p = props(acc, child);
    let own_window = if child == 0 { window_of(acc) } else { None };
    let role = match refine(own_window, p.role, &mut p.states) {
        Some(control) => control.role,
        None => roles::msaa_role(p.role).0,
    };
    Ok(roles::msaa_states(p.states, role))
}

/// A standard control behind an object that only says "client".
struct Control {
    hwnd: HWND,
    class: String,
    role: Role,
    platform_role: &'static str,
}

/// What a "client" object standing for `own_window` really is, from the window's class and
/// style; a check box's check state is added to `states` from `BM_GETCHECK`.
fn refine(own_window: Option<HWND>, role: u32, states: &mut u32) -> Option<Control> {
    if role != roles::ROLE_CLIENT {
        return None;
    }
    let hwnd = own_window?;
    let (class, style) = controls::class_and_style(hwnd);
    let (role, platform_role) = roles::control_role(&class, style)?;
    if role == Role::CheckBox && controls::checked(hwnd) {
        *states |= roles::state::CHECKED;
    }
    Some(Control {
        hwnd,
        class,
        role,
        platform_role,
    })
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
