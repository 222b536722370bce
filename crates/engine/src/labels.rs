//! What an unnamed control is called, when its toolkit gives it no name.
//!
//! Many real forms leave the field itself unnamed and put a label beside it: the GTK file
//! chooser's name entry is an unnamed `Edit` next to `Text "Name:"`, a spreadsheet's Name Box
//! is an unnamed combo box whose text holds the cell address. An agent looking for "the file
//! name field" means the field, not the label. This module describes such controls from what
//! is around them, in this order:
//! 1. the label nearest on its left (on the same line) or above it (overlapping it
//!    horizontally), within the same container (the control's parent or grandparent);
//! 2. else its value, or the value of its only editable child.
//!
//! Pure functions over a snapshot's elements; `find` ranks on the result and says where the
//! words came from.

use deskpilot_types::{Rect, Role};
use serde::Serialize;

use crate::tree::Element;

/// Where an unnamed control's description came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum NameFrom {
    /// The label beside or above it.
    Label,
    /// Its own value (or its editable child's).
    Value,
}

impl NameFrom {
    pub fn as_str(self) -> &'static str {
        match self {
            NameFrom::Label => "label",
            NameFrom::Value => "value",
        }
    }
}

/// An unnamed control's description, and the element it came from (a label's index).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Described {
    pub text: String,
    pub from: NameFrom,
    /// The label element, for [`NameFrom::Label`].
    pub label: Option<usize>,
}

/// How far a label may sit to the left of its control, in physical pixels.
const LEFT_REACH: i64 = 320;
/// How far above.
const ABOVE_REACH: i64 = 80;

/// Roles that label other controls.
fn is_label(e: &Element) -> bool {
    matches!(e.role, Role::Text | Role::Heading) && !e.name.trim().is_empty() && e.bounds.is_some()
}

/// Controls worth describing when they have no name.
fn wants_name(e: &Element) -> bool {
    e.name.trim().is_empty()
        && matches!(
            e.role,
            Role::Edit
                | Role::ComboBox
                | Role::SpinButton
                | Role::Slider
                | Role::CheckBox
                | Role::RadioButton
                | Role::Button
                | Role::ToggleButton
                | Role::List
                | Role::Table
                | Role::Tree
        )
}

/// `i`'s ancestors, nearest first.
fn ancestors(elements: &[Element], i: usize) -> impl Iterator<Item = usize> + '_ {
    std::iter::successors(elements[i].parent, |&p| elements[p].parent)
}

/// How near `label` sits to `control` as a label: its distance, when it is on the control's
/// left on the same line or just above it.
fn nearness(label: Rect, control: Rect) -> Option<i64> {
    let (l, c) = (label, control);
    let (l_right, l_bottom) = (l.x as i64 + l.width as i64, l.y as i64 + l.height as i64);
    let (c_right, c_bottom) = (c.x as i64 + c.width as i64, c.y as i64 + c.height as i64);
    // Left, on the same line: the label's vertical centre within the control's height.
    let l_mid = l.y as i64 + l.height as i64 / 2;
    if l_right <= c.x as i64 + 4 && (c.y as i64..=c_bottom).contains(&l_mid) {
        let gap = c.x as i64 - l_right;
        return (gap <= LEFT_REACH).then_some(gap.max(0));
    }
    // Above: overlapping the control horizontally (or starting where it starts).
    let overlaps = (l.x as i64) < c_right && l_right > c.x as i64;
    if l_bottom <= c.y as i64 + 4 && overlaps {
        let gap = c.y as i64 - l_bottom;
        // A label above counts a little less than one on the same line.
        return (gap <= ABOVE_REACH).then_some(gap.max(0) + 8);
    }
    None
}

/// A description for every unnamed control that has one (`None` elsewhere).
pub fn describe(elements: &[Element]) -> Vec<Option<Described>> {
    let labels: Vec<usize> = (0..elements.len())
        .filter(|&i| is_label(&elements[i]))
        .collect();
    (0..elements.len())
        .map(|i| {
            let e = &elements[i];
            if !wants_name(e) {
                return None;
            }
            by_label(elements, &labels, i).or_else(|| by_value(elements, i))
        })
        .collect()
}

fn by_label(elements: &[Element], labels: &[usize], i: usize) -> Option<Described> {
    let bounds = elements[i].bounds?;
    // The same container: under the control's parent, or its grandparent.
    let scope: Vec<usize> = ancestors(elements, i).take(2).collect();
    let within = |l: usize| ancestors(elements, l).any(|a| scope.contains(&a));
    let (_, best) = labels
        .iter()
        .filter(|&&l| l != i && within(l))
        .filter_map(|&l| Some((nearness(elements[l].bounds?, bounds)?, l)))
        .min()?;
    Some(Described {
        text: elements[best].name.trim().to_string(),
        from: NameFrom::Label,
        label: Some(best),
    })
}

fn by_value(elements: &[Element], i: usize) -> Option<Described> {
    let own = elements[i]
        .value
        .as_deref()
        .filter(|v| !v.trim().is_empty());
    let child = || {
        let mut editable = elements
            .iter()
            .filter(|c| c.parent == Some(i) && c.role == Role::Edit);
        let only = editable.next()?;
        if editable.next().is_some() {
            return None;
        }
        only.value.as_deref().filter(|v| !v.trim().is_empty())
    };
    let text = own.or_else(child)?;
    Some(Described {
        text: text.trim().chars().take(80).collect(),
        from: NameFrom::Value,
        label: None,
    })
}

#[cfg(test)]
mod tests {
    use deskpilot_backend::fake::element;

    use super::*;

    fn el(index: usize, parent: Option<usize>, role: Role, name: &str, b: Rect) -> Element {
        let raw = element(role, name).parent(parent).bounds(b).build();
        Element {
            token: format!("s1:{index}"),
            ..Element::from_raw(index, raw)
        }
    }

    /// The GTK file chooser's save dialog as read: an unnamed entry beside "Name:", a column
    /// header "Name" further down and a "Folder:" label on the next line.
    #[test]
    fn an_unnamed_field_is_named_by_the_label_on_its_left() {
        let els = vec![
            el(
                0,
                None,
                Role::Dialog,
                "Save File",
                Rect::new(0, 0, 800, 600),
            ),
            el(1, Some(0), Role::Group, "", Rect::new(10, 10, 780, 60)),
            el(2, Some(1), Role::Text, "Name:", Rect::new(20, 20, 50, 20)),
            el(3, Some(1), Role::Edit, "", Rect::new(80, 16, 400, 28)),
            el(4, Some(1), Role::Text, "Folder:", Rect::new(20, 50, 60, 20)),
            el(
                5,
                Some(0),
                Role::ColumnHeader,
                "Name",
                Rect::new(200, 100, 200, 20),
            ),
            el(6, Some(1), Role::ComboBox, "", Rect::new(90, 46, 300, 28)),
        ];
        let d = describe(&els);
        assert_eq!(
            d[3],
            Some(Described {
                text: "Name:".to_string(),
                from: NameFrom::Label,
                label: Some(2)
            })
        );
        assert_eq!(d[6].as_ref().map(|d| d.text.as_str()), Some("Folder:"));
        assert_eq!(d[2], None, "a label needs no description");
        assert_eq!(d[5], None, "named elements keep their name");
    }

    #[test]
    fn a_label_above_counts_and_one_of_another_container_does_not() {
        let els = vec![
            el(0, None, Role::Window, "Form", Rect::new(0, 0, 800, 600)),
            el(1, Some(0), Role::Group, "", Rect::new(0, 0, 400, 600)),
            el(2, Some(1), Role::Group, "", Rect::new(0, 0, 400, 300)),
            el(
                3,
                Some(2),
                Role::Text,
                "Email address",
                Rect::new(20, 20, 120, 18),
            ),
            el(4, Some(2), Role::Edit, "", Rect::new(20, 42, 300, 26)),
            el(5, Some(0), Role::Group, "", Rect::new(400, 0, 400, 600)),
            el(6, Some(5), Role::Group, "", Rect::new(400, 0, 400, 600)),
            el(7, Some(6), Role::Edit, "", Rect::new(520, 40, 200, 26)),
            // Not in 7's container, although it sits on its left.
            el(8, Some(2), Role::Text, "Far", Rect::new(330, 44, 40, 18)),
        ];
        let d = describe(&els);
        assert_eq!(
            d[4].as_ref().map(|d| d.text.as_str()),
            Some("Email address")
        );
        assert_eq!(d[7], None);
    }

    /// A spreadsheet's Name Box: an unnamed combo box whose editable child holds "A1".
    #[test]
    fn without_a_label_the_value_describes_it() {
        let mut child = el(2, Some(1), Role::Edit, "", Rect::new(5, 40, 90, 22));
        child.value = Some("A1".to_string());
        let els = vec![
            el(
                0,
                None,
                Role::Window,
                "Untitled 1 - LibreOffice Calc",
                Rect::new(0, 0, 800, 600),
            ),
            el(1, Some(0), Role::ComboBox, "", Rect::new(5, 40, 100, 22)),
            child,
        ];
        let d = describe(&els);
        assert_eq!(
            d[1],
            Some(Described {
                text: "A1".to_string(),
                from: NameFrom::Value,
                label: None
            })
        );
        assert_eq!(d[2].as_ref().map(|d| d.from), Some(NameFrom::Value));
    }
}
