//! What an element can do: one classification, worked out by the engine from the element's
//! role, states and the actions its application advertises, and read by every surface (which
//! only words it). No surface keeps a list of action names of its own.

use serde::Serialize;

/// What can be done to an element. A disabled element keeps its affordances: whether acting
/// on it now is allowed is the engine's check at the time of the action.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Affordance {
    /// It runs an activation of its own (click, press, activate, open …) — and is not a
    /// two-state control, whose activation is [`Affordance::toggle`].
    pub invoke: bool,
    /// A two-state control (check box, toggle or radio button, checkable menu item) that
    /// flips through an advertised action.
    pub toggle: bool,
    /// It opens and closes (a tree node, a combo box, an expander).
    pub expand: bool,
    /// It is selected in its container (a list or tree item, a tab, a row, a cell).
    pub select: bool,
    /// It takes text or a value.
    pub edit: bool,
    /// It can take the keyboard focus and does not hold it now.
    pub focus: bool,
}

impl Affordance {
    /// Whether its own action runs it: invoked or toggled, no pointer needed.
    pub fn activates(&self) -> bool {
        self.invoke || self.toggle
    }
}
