//! UI Automation: one `ElementFromHandleBuildCache` call brings the window's whole control
//! view (every property and pattern flag the snapshot needs) across the process boundary;
//! the walk then reads only cached values. Actions use the live patterns of the same element;
//! `live` re-reads one element with a cache request of its own (one call). A container with
//! more than 500 children keeps only those on screen.

use std::time::Instant;

use deskpilot_backend::{ElementStates, Error, LiveElement, RawElement, RawTree, TreeLimits};
use deskpilot_types::{Rect, Role, WindowInfo};
use windows::Win32::Foundation::HWND;
use windows::Win32::System::Com::{CLSCTX_INPROC_SERVER, CoCreateInstance};
use windows::Win32::UI::Accessibility::*;
use windows::core::{BSTR, Interface};

use super::com::Variant;
use super::session::{Node, Session, out_of_budget};
use crate::roles::{self, UiaPatterns};

/// Creates the UI Automation client, or says why it cannot be (Wine 8:
/// `REGDB_E_CLASSNOTREG`).
pub(crate) fn create() -> Result<IUIAutomation, String> {
    // CUIAutomation8 (Windows 8 and later) is the one whose client has the timeouts below;
    // CUIAutomation is the Windows 7 one.
    // SAFETY: plain COM activation on this MTA thread.
    let automation: IUIAutomation =
        unsafe { CoCreateInstance(&CUIAutomation8, None, CLSCTX_INPROC_SERVER) }
            // SAFETY: as above.
            .or_else(|_| unsafe { CoCreateInstance(&CUIAutomation, None, CLSCTX_INPROC_SERVER) })
            .map_err(|e| format!("CoCreateInstance(CUIAutomation) failed: {e}"))?;
    // Hard limits so a hung provider answers with an error instead of blocking this thread.
    if let Ok(two) = automation.cast::<IUIAutomation2>() {
        // SAFETY: plain setters on a live client.
        unsafe {
            let _ = two.SetConnectionTimeout(2_000);
            let _ = two.SetTransactionTimeout(5_000);
        }
    }
    Ok(automation)
}

/// The properties the snapshot reads, all fetched by the one cache request.
const PROPERTIES: &[UIA_PROPERTY_ID] = &[
    UIA_NamePropertyId,
    UIA_ControlTypePropertyId,
    UIA_BoundingRectanglePropertyId,
    UIA_IsEnabledPropertyId,
    UIA_HasKeyboardFocusPropertyId,
    UIA_IsKeyboardFocusablePropertyId,
    UIA_IsOffscreenPropertyId,
    UIA_IsRequiredForFormPropertyId,
    UIA_IsPasswordPropertyId,
    UIA_HelpTextPropertyId,
    UIA_IsInvokePatternAvailablePropertyId,
    UIA_IsTogglePatternAvailablePropertyId,
    UIA_IsExpandCollapsePatternAvailablePropertyId,
    UIA_IsSelectionItemPatternAvailablePropertyId,
    UIA_IsScrollItemPatternAvailablePropertyId,
    UIA_IsValuePatternAvailablePropertyId,
    UIA_IsLegacyIAccessiblePatternAvailablePropertyId,
    UIA_ValueValuePropertyId,
    UIA_ValueIsReadOnlyPropertyId,
    UIA_ToggleToggleStatePropertyId,
    UIA_ExpandCollapseExpandCollapseStatePropertyId,
    UIA_SelectionItemIsSelectedPropertyId,
];

fn cached(e: &IUIAutomationElement, id: UIA_PROPERTY_ID) -> Option<Variant> {
    // SAFETY: reads the element's cache; the VARIANT is owned and cleared by `Variant`.
    unsafe { e.GetCachedPropertyValue(id) }.ok().map(Variant)
}

fn current(e: &IUIAutomationElement, id: UIA_PROPERTY_ID) -> Option<Variant> {
    // SAFETY: a live property read; the VARIANT is owned and cleared by `Variant`.
    unsafe { e.GetCurrentPropertyValue(id) }.ok().map(Variant)
}

/// What one element says about itself, from its cache or live.
struct Read {
    control_type: i32,
    name: String,
    description: String,
    bounds: Option<Rect>,
    patterns: UiaPatterns,
    value: Option<String>,
    states: ElementStates,
}

fn read(e: &IUIAutomationElement, live: bool) -> Read {
    let get = |id| if live { current(e, id) } else { cached(e, id) };
    let flag = |id| get(id).and_then(|v| v.as_bool()).unwrap_or(false);
    let int = |id| get(id).and_then(|v| v.as_i32());
    let string = |id| get(id).and_then(|v| v.as_string()).unwrap_or_default();
    let control_type = int(UIA_ControlTypePropertyId).unwrap_or(0);
    // SAFETY: the rectangle comes from the same cache / live read as the other properties.
    let rect = unsafe {
        if live {
            e.CurrentBoundingRectangle()
        } else {
            e.CachedBoundingRectangle()
        }
    };
    let bounds = rect.ok().and_then(|r| {
        let (w, h) = (r.right - r.left, r.bottom - r.top);
        (w > 0 && h > 0).then(|| Rect::new(r.left, r.top, w as u32, h as u32))
    });
    let patterns = UiaPatterns {
        invoke: flag(UIA_IsInvokePatternAvailablePropertyId),
        toggle: flag(UIA_IsTogglePatternAvailablePropertyId),
        expand_collapse: flag(UIA_IsExpandCollapsePatternAvailablePropertyId),
        selection_item: flag(UIA_IsSelectionItemPatternAvailablePropertyId),
        scroll_item: flag(UIA_IsScrollItemPatternAvailablePropertyId),
        value: flag(UIA_IsValuePatternAvailablePropertyId),
        value_read_only: flag(UIA_ValueIsReadOnlyPropertyId),
        legacy_default_action: flag(UIA_IsLegacyIAccessiblePatternAvailablePropertyId),
    };
    let expand = int(UIA_ExpandCollapseExpandCollapseStatePropertyId);
    let (role, _) = roles::uia_control_type(control_type);
    let states = ElementStates {
        enabled: flag(UIA_IsEnabledPropertyId),
        focusable: flag(UIA_IsKeyboardFocusablePropertyId),
        focused: flag(UIA_HasKeyboardFocusPropertyId),
        selected: flag(UIA_SelectionItemIsSelectedPropertyId),
        checked: int(UIA_ToggleToggleStatePropertyId) == Some(roles::UIA_TOGGLE_ON),
        expandable: patterns.expand_collapse && expand != Some(roles::UIA_LEAF),
        expanded: matches!(
            expand,
            Some(roles::UIA_EXPANDED | roles::UIA_PARTIALLY_EXPANDED)
        ),
        editable: patterns.value && !patterns.value_read_only && role == Role::Edit,
        required: flag(UIA_IsRequiredForFormPropertyId),
        protected: flag(UIA_IsPasswordPropertyId),
        onscreen: !flag(UIA_IsOffscreenPropertyId),
    };
    Read {
        control_type,
        name: string(UIA_NamePropertyId),
        description: string(UIA_HelpTextPropertyId),
        bounds,
        value: patterns
            .value
            .then(|| string(UIA_ValueValuePropertyId))
            .filter(|v| !v.is_empty()),
        patterns,
        states,
    }
}

/// A cache request for the snapshot's properties over `scope` of the control view.
fn cache_request(
    automation: &IUIAutomation,
    scope: TreeScope,
) -> Result<IUIAutomationCacheRequest, Error> {
    // SAFETY: plain COM calls on a live client; every result is an owned interface.
    unsafe {
        let request = automation
            .CreateCacheRequest()
            .map_err(|e| Error::os("CreateCacheRequest", e))?;
        for p in PROPERTIES {
            let _ = request.AddProperty(*p);
        }
        request
            .SetTreeScope(scope)
            .map_err(|e| Error::os("SetTreeScope", e))?;
        let view = automation
            .ControlViewCondition()
            .map_err(|e| Error::os("ControlViewCondition", e))?;
        request
            .SetTreeFilter(&view)
            .map_err(|e| Error::os("SetTreeFilter", e))?;
        request
            .SetAutomationElementMode(AutomationElementMode_Full)
            .map_err(|e| Error::os("SetAutomationElementMode", e))?;
        Ok(request)
    }
}

/// Above this many children a container keeps only those on screen (and the focused one).
const MAX_CHILDREN: i32 = 500;

/// Of a huge container's `n` children, the indexes to keep: those the provider does not call
/// offscreen (or that have the focus), at most [`MAX_CHILDREN`]; and the line describing the
/// rest. `shown(i)` says whether child `i` is on screen or focused.
pub(crate) fn visible_children(n: i32, shown: impl Fn(i32) -> bool) -> (Vec<i32>, String) {
    let keep: Vec<i32> = (0..n)
        .filter(|&i| shown(i))
        .take(MAX_CHILDREN as usize)
        .collect();
    let line = match (keep.first(), keep.last()) {
        (Some(a), Some(b)) => format!("{n} items, showing {}–{}", a + 1, b + 1),
        _ => format!("{n} items, none on screen"),
    };
    (keep, line)
}

/// The element as it is now, in one cross-process call: role, name, states and bounds.
pub(crate) fn live(
    automation: &IUIAutomation,
    e: &IUIAutomationElement,
) -> Result<LiveElement, Error> {
    let request = cache_request(automation, TreeScope_Element)?;
    // SAFETY: one COM call on a live element; the result is an owned interface.
    let now = unsafe { e.BuildUpdatedCache(&request) }.map_err(|err| {
        if err.code().0 as u32 == UIA_E_ELEMENTNOTAVAILABLE {
            Error::ElementGone {
                reason: "UI Automation says the element is no longer available".to_string(),
            }
        } else {
            Error::os("BuildUpdatedCache", err)
        }
    })?;
    let r = read(&now, false);
    Ok(LiveElement {
        role: roles::uia_control_type(r.control_type).0,
        name: r.name,
        states: r.states,
        bounds: r.bounds,
    })
}

/// Reads the window's control view in one cross-process call, then walks the cache.
///
/// A container with more than [`MAX_CHILDREN`] children (a grid of a million rows where the
/// provider does not virtualize) keeps only the children on screen, and says so in its
/// description. The cross-process call itself cannot be bounded by count: UI Automation has
/// no such limit on a subtree cache request.
pub(crate) fn tree(
    session: &mut Session,
    automation: &IUIAutomation,
    hwnd: HWND,
    window: &WindowInfo,
    limits: &TreeLimits,
) -> Result<RawTree, Error> {
    let started = Instant::now();
    let request = cache_request(automation, TreeScope_Subtree)?;
    // SAFETY: a plain COM call on a live client; the result is an owned interface.
    let root = unsafe {
        automation
            .ElementFromHandleBuildCache(hwnd, &request)
            .map_err(|e| Error::os("ElementFromHandleBuildCache", e))?
    };
    let mut elements: Vec<RawElement> = Vec::new();
    let mut complete = true;
    let mut notes = Vec::new();
    let mut stack = vec![(root, None, 0u32)];
    while let Some((e, parent, depth)) = stack.pop() {
        if let Some(why) = out_of_budget(elements.len(), started, limits) {
            complete = false;
            notes.push(why);
            break;
        }
        let r = read(&e, false);
        let (role, platform_role) = roles::uia_control_type(r.control_type);
        let mut states = r.states;
        if let (Some(b), true) = (r.bounds, states.onscreen) {
            states.onscreen = b.intersect(&window.frame).is_some();
        }
        let index = elements.len();
        // SAFETY: reads the cached children of a cached element.
        let children = unsafe { e.GetCachedChildren() }.ok();
        let handle = session.register(Node::Uia(e));
        elements.push(RawElement {
            parent,
            depth,
            role,
            platform_role: platform_role.to_string(),
            name: r.name,
            description: r.description,
            value: r.value,
            states,
            actions: roles::uia_actions(r.patterns),
            bounds: r.bounds,
            handle,
        });
        if depth >= limits.max_depth {
            continue;
        }
        if let Some(children) = children {
            // SAFETY: index-bounded reads of a cached element array.
            unsafe {
                let n = children.Length().unwrap_or(0);
                let keep: Vec<i32> = if n > MAX_CHILDREN {
                    let (keep, line) = visible_children(n, |i| {
                        children.GetElement(i).is_ok_and(|c| {
                            let r = |id| cached(&c, id).and_then(|v| v.as_bool());
                            r(UIA_IsOffscreenPropertyId) == Some(false)
                                || r(UIA_HasKeyboardFocusPropertyId) == Some(true)
                        })
                    });
                    let d = &mut elements[index].description;
                    *d = if d.is_empty() {
                        line
                    } else {
                        format!("{d}; {line}")
                    };
                    keep
                } else {
                    (0..n).collect()
                };
                for &i in keep.iter().rev() {
                    if let Ok(c) = children.GetElement(i) {
                        stack.push((c, Some(index), depth + 1));
                    }
                }
            }
        }
    }
    Ok(RawTree {
        elements,
        source: "uia".to_string(),
        complete,
        notes,
    })
}

fn pattern<T: Interface>(e: &IUIAutomationElement, id: UIA_PATTERN_ID) -> Result<T, Error> {
    // SAFETY: asks the live element for one of its patterns.
    unsafe { e.GetCurrentPatternAs::<T>(id) }.map_err(|err| Error::Unsupported {
        what: "this UI Automation pattern",
        reason: format!("the element does not offer it ({err})"),
    })
}

pub(crate) fn do_action(e: &IUIAutomationElement, action: &str) -> Result<(), Error> {
    let os = |what| move |err| Error::os(what, err);
    // SAFETY: each arm calls one method of a live pattern interface.
    unsafe {
        match action.to_ascii_lowercase().as_str() {
            "invoke" => pattern::<IUIAutomationInvokePattern>(e, UIA_InvokePatternId)?
                .Invoke()
                .map_err(os("Invoke")),
            "toggle" => pattern::<IUIAutomationTogglePattern>(e, UIA_TogglePatternId)?
                .Toggle()
                .map_err(os("Toggle")),
            "expand" => {
                pattern::<IUIAutomationExpandCollapsePattern>(e, UIA_ExpandCollapsePatternId)?
                    .Expand()
                    .map_err(os("Expand"))
            }
            "collapse" => {
                pattern::<IUIAutomationExpandCollapsePattern>(e, UIA_ExpandCollapsePatternId)?
                    .Collapse()
                    .map_err(os("Collapse"))
            }
            "select" => select(e, true),
            "scroll into view" => {
                pattern::<IUIAutomationScrollItemPattern>(e, UIA_ScrollItemPatternId)?
                    .ScrollIntoView()
                    .map_err(os("ScrollIntoView"))
            }
            "default action" => {
                pattern::<IUIAutomationLegacyIAccessiblePattern>(e, UIA_LegacyIAccessiblePatternId)?
                    .DoDefaultAction()
                    .map_err(os("DoDefaultAction"))
            }
            other => Err(Error::Unsupported {
                what: "this UI Automation action",
                reason: format!("\"{other}\" is not one deskpilot knows"),
            }),
        }
    }
}

pub(crate) fn set_value(e: &IUIAutomationElement, value: &str) -> Result<(), Error> {
    if let Ok(p) = pattern::<IUIAutomationValuePattern>(e, UIA_ValuePatternId) {
        // SAFETY: one method call on a live pattern with an owned BSTR.
        return unsafe { p.SetValue(&BSTR::from(value)) }.map_err(|e| Error::os("SetValue", e));
    }
    let legacy: IUIAutomationLegacyIAccessiblePattern = pattern(e, UIA_LegacyIAccessiblePatternId)?;
    let wide = windows::core::HSTRING::from(value);
    // SAFETY: one method call on a live pattern; `wide` outlives it.
    unsafe { legacy.SetValue(&wide) }.map_err(|e| Error::os("LegacyIAccessible SetValue", e))
}

pub(crate) fn read_text(e: &IUIAutomationElement) -> Result<String, Error> {
    // SAFETY: live reads on a live element and its patterns.
    unsafe {
        if let Ok(p) = pattern::<IUIAutomationValuePattern>(e, UIA_ValuePatternId)
            && let Ok(v) = p.CurrentValue()
        {
            return Ok(v.to_string());
        }
        if let Ok(p) = pattern::<IUIAutomationTextPattern>(e, UIA_TextPatternId)
            && let Ok(range) = p.DocumentRange()
            && let Ok(text) = range.GetText(-1)
        {
            return Ok(text.to_string());
        }
        e.CurrentName()
            .map(|b| b.to_string())
            .map_err(|err| Error::os("reading the element's name", err))
    }
}

pub(crate) fn focus(e: &IUIAutomationElement) -> Result<(), Error> {
    // SAFETY: one method call on a live element.
    unsafe { e.SetFocus() }.map_err(|err| Error::os("SetFocus", err))
}

pub(crate) fn states(e: &IUIAutomationElement) -> Result<ElementStates, Error> {
    Ok(read(e, true).states)
}

pub(crate) fn select(e: &IUIAutomationElement, on: bool) -> Result<(), Error> {
    let p: IUIAutomationSelectionItemPattern = pattern(e, UIA_SelectionItemPatternId)?;
    // SAFETY: one method call on a live pattern.
    unsafe {
        if on {
            p.Select().map_err(|err| Error::os("Select", err))
        } else {
            p.RemoveFromSelection()
                .map_err(|err| Error::os("RemoveFromSelection", err))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A grid of a million rows whose provider does not virtualize keeps the rows on screen.
    #[test]
    fn a_huge_container_keeps_what_shows() {
        let (keep, line) = visible_children(1_000_000, |i| (5000..5030).contains(&i) || i == 7);
        assert_eq!(keep.len(), 31);
        assert_eq!(keep[0], 7);
        assert_eq!(line, "1000000 items, showing 8–5030");
        let (keep, line) = visible_children(600, |_| false);
        assert!(keep.is_empty());
        assert_eq!(line, "600 items, none on screen");
        let (keep, _) = visible_children(100_000, |_| true);
        assert_eq!(keep.len(), MAX_CHILDREN as usize);
    }
}
