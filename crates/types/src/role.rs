//! One role vocabulary for every platform's accessibility tree.
//!
//! AT-SPI has ~130 roles and UI Automation ~40 control types; agents see this smaller set,
//! named the way UI Automation and ARIA name things (`Button`, `Edit`, `MenuItem`). Each
//! backend maps its own roles here; what does not map is `Other`, with the platform's name
//! kept beside it in the element.

use serde::{Deserialize, Serialize};

/// The normalized role of an element.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
#[non_exhaustive]
pub enum Role {
    Application,
    Window,
    Dialog,
    Alert,
    Button,
    ToggleButton,
    CheckBox,
    RadioButton,
    ComboBox,
    /// Editable text: entries, text areas, editors.
    Edit,
    /// Static text and labels.
    Text,
    Heading,
    Link,
    Image,
    List,
    ListItem,
    Tree,
    TreeItem,
    Table,
    Row,
    Cell,
    ColumnHeader,
    Menu,
    MenuBar,
    MenuItem,
    CheckMenuItem,
    RadioMenuItem,
    TabList,
    Tab,
    TabPanel,
    ToolBar,
    StatusBar,
    Slider,
    SpinButton,
    ScrollBar,
    ProgressBar,
    Separator,
    ToolTip,
    Document,
    /// Panels, fillers, frames inside a window, sections: containers without semantics.
    Group,
    ScrollPane,
    SplitPane,
    Other,
}

impl Role {
    /// The name used in tree text and accepted by `role` filters (`"Button"`, `"MenuItem"`).
    pub const fn as_str(self) -> &'static str {
        match self {
            Role::Application => "Application",
            Role::Window => "Window",
            Role::Dialog => "Dialog",
            Role::Alert => "Alert",
            Role::Button => "Button",
            Role::ToggleButton => "ToggleButton",
            Role::CheckBox => "CheckBox",
            Role::RadioButton => "RadioButton",
            Role::ComboBox => "ComboBox",
            Role::Edit => "Edit",
            Role::Text => "Text",
            Role::Heading => "Heading",
            Role::Link => "Link",
            Role::Image => "Image",
            Role::List => "List",
            Role::ListItem => "ListItem",
            Role::Tree => "Tree",
            Role::TreeItem => "TreeItem",
            Role::Table => "Table",
            Role::Row => "Row",
            Role::Cell => "Cell",
            Role::ColumnHeader => "ColumnHeader",
            Role::Menu => "Menu",
            Role::MenuBar => "MenuBar",
            Role::MenuItem => "MenuItem",
            Role::CheckMenuItem => "CheckMenuItem",
            Role::RadioMenuItem => "RadioMenuItem",
            Role::TabList => "TabList",
            Role::Tab => "Tab",
            Role::TabPanel => "TabPanel",
            Role::ToolBar => "ToolBar",
            Role::StatusBar => "StatusBar",
            Role::Slider => "Slider",
            Role::SpinButton => "SpinButton",
            Role::ScrollBar => "ScrollBar",
            Role::ProgressBar => "ProgressBar",
            Role::Separator => "Separator",
            Role::ToolTip => "ToolTip",
            Role::Document => "Document",
            Role::Group => "Group",
            Role::ScrollPane => "ScrollPane",
            Role::SplitPane => "SplitPane",
            Role::Other => "Other",
        }
    }

    /// Whether an agent would act on it directly (click, type, toggle, pick).
    pub const fn is_interactive(self) -> bool {
        matches!(
            self,
            Role::Button
                | Role::ToggleButton
                | Role::CheckBox
                | Role::RadioButton
                | Role::ComboBox
                | Role::Edit
                | Role::Link
                | Role::ListItem
                | Role::TreeItem
                | Role::MenuItem
                | Role::CheckMenuItem
                | Role::RadioMenuItem
                | Role::Tab
                | Role::Slider
                | Role::SpinButton
                | Role::Cell
        )
    }
}

impl std::fmt::Display for Role {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}
