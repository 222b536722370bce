//! The engine's one vocabulary of advertised action names, and the [`Affordance`] of an
//! element worked out from it: which names mean "activate", "toggle", "open or close" and
//! "select", and which of them a click through the accessibility interface runs, best first.
//!
//! Every list of action names lives here; surfaces read [`Element::affordance`] and
//! [`Element::unclassified_actions`] and never compare action names themselves.

use deskpilot_types::{Affordance, Role};

use crate::tree::Element;

/// Advertised actions that mean "activate".
const ACTIVATE: &[&str] = &[
    "click", "press", "activate", "jump", "open", "invoke", "default",
];

/// Advertised actions that flip a two-state control (Gecko names a check box's action after
/// what it will do: "check" / "uncheck").
const TOGGLE: &[&str] = &["toggle", "check", "uncheck"];

/// Advertised actions that open or close a node (AT-SPI tree cells, MSAA outline items).
const EXPAND: &[&str] = &[
    "expand",
    "collapse",
    "expand or contract",
    "expand or collapse",
    "expand/collapse",
];

/// Advertised actions that select an item in its container.
const SELECT: &[&str] = &["select"];

/// Action names a click runs through the accessibility interface, best first.
pub(crate) const CLICK: &[&str] = &[
    "click", "press", "activate", "jump", "toggle", "open", "select", "invoke", "check", "uncheck",
];

/// Roles whose activation flips a state rather than running a command.
fn two_state(role: Role) -> bool {
    matches!(
        role,
        Role::CheckBox
            | Role::ToggleButton
            | Role::RadioButton
            | Role::CheckMenuItem
            | Role::RadioMenuItem
    )
}

/// Roles selected in their container.
fn selectable(role: Role) -> bool {
    matches!(
        role,
        Role::ListItem | Role::TreeItem | Role::Tab | Role::Row | Role::Cell
    )
}

/// Whether `name` is one of `names`, case-insensitively.
fn is_one_of(name: &str, names: &[&str]) -> bool {
    names.iter().any(|n| n.eq_ignore_ascii_case(name))
}

impl Element {
    /// What can be done to the element, from its role, states and advertised actions.
    pub fn affordance(&self) -> Affordance {
        let has = |names: &[&str]| self.actions.iter().any(|a| is_one_of(a, names));
        let runs = has(ACTIVATE) || has(TOGGLE);
        let toggle = two_state(self.role) && runs;
        Affordance {
            invoke: runs && !toggle,
            toggle,
            expand: self.states.expandable
                || self.expanded
                || has(EXPAND)
                || matches!(self.role, Role::ComboBox | Role::TreeItem) && has(ACTIVATE),
            select: selectable(self.role) || has(SELECT),
            edit: self.editable,
            focus: self.focusable && !self.focused,
        }
    }

    /// The advertised actions no affordance covers, as the application names them.
    pub fn unclassified_actions(&self) -> impl Iterator<Item = &str> {
        self.actions.iter().map(String::as_str).filter(|a| {
            ![ACTIVATE, TOGGLE, EXPAND, SELECT]
                .iter()
                .any(|names| is_one_of(a, names))
        })
    }
}

#[cfg(test)]
mod tests {

    use super::*;

    fn el(role: Role, actions: &[&str]) -> Element {
        Element::from_raw(
            0,
            deskpilot_backend::fake::element(role, "x")
                .actions(actions)
                .build(),
        )
    }

    #[test]
    fn a_two_state_control_toggles_and_anything_else_invokes() {
        let b = el(Role::Button, &["Click"]).affordance();
        assert!(b.invoke && !b.toggle && b.activates());
        let c = el(Role::CheckBox, &["uncheck"]).affordance();
        assert!(c.toggle && !c.invoke);
        let combo = el(Role::ComboBox, &["press", "showmenu"]);
        assert!(combo.affordance().invoke && combo.affordance().expand);
        assert_eq!(
            combo.unclassified_actions().collect::<Vec<_>>(),
            ["showmenu"]
        );
        let label = el(Role::Text, &[]).affordance();
        assert!(!label.activates() && !label.select);
        assert!(el(Role::ListItem, &[]).affordance().select);
    }
}
