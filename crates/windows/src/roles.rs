//! How Windows accessibility names things, mapped to deskpilot's: MSAA roles and state bits,
//! UI Automation control types. Plain tables with no Win32 calls, so they are unit-tested on
//! every platform.

use deskpilot_backend::ElementStates;
use deskpilot_types::Role;

/// MSAA `STATE_SYSTEM_*` bits that matter here (oleacc.h).
pub mod state {
    pub const UNAVAILABLE: u32 = 0x1;
    pub const SELECTED: u32 = 0x2;
    pub const FOCUSED: u32 = 0x4;
    pub const PRESSED: u32 = 0x8;
    pub const CHECKED: u32 = 0x10;
    pub const READONLY: u32 = 0x40;
    pub const EXPANDED: u32 = 0x200;
    pub const COLLAPSED: u32 = 0x400;
    pub const INVISIBLE: u32 = 0x8000;
    pub const OFFSCREEN: u32 = 0x1_0000;
    pub const FOCUSABLE: u32 = 0x10_0000;
    pub const HASPOPUP: u32 = 0x4000_0000;
    pub const PROTECTED: u32 = 0x2000_0000;
}

/// `ROLE_SYSTEM_WINDOW`: a window's frame object.
pub const ROLE_WINDOW: u32 = 9;
/// `ROLE_SYSTEM_CLIENT`: a window's client area.
pub const ROLE_CLIENT: u32 = 10;

/// The deskpilot role and the platform's own name of an MSAA `ROLE_SYSTEM_*` value.
pub fn msaa_role(role: u32) -> (Role, &'static str) {
    match role {
        1 => (Role::Other, "title bar"),
        2 => (Role::MenuBar, "menu bar"),
        3 => (Role::ScrollBar, "scroll bar"),
        4 => (Role::Other, "grip"),
        8 => (Role::Alert, "alert"),
        9 => (Role::Window, "window"),
        10 => (Role::Group, "client"),
        11 => (Role::Menu, "popup menu"),
        12 => (Role::MenuItem, "menu item"),
        13 => (Role::ToolTip, "tool tip"),
        14 => (Role::Application, "application"),
        15 => (Role::Document, "document"),
        16 => (Role::Group, "pane"),
        18 => (Role::Dialog, "dialog"),
        20 => (Role::Group, "grouping"),
        21 => (Role::Separator, "separator"),
        22 => (Role::ToolBar, "tool bar"),
        23 => (Role::StatusBar, "status bar"),
        24 => (Role::Table, "table"),
        25 => (Role::ColumnHeader, "column header"),
        26 => (Role::Other, "row header"),
        28 => (Role::Row, "row"),
        29 => (Role::Cell, "cell"),
        30 => (Role::Link, "link"),
        33 => (Role::List, "list"),
        34 => (Role::ListItem, "list item"),
        35 => (Role::Tree, "outline"),
        36 => (Role::TreeItem, "outline item"),
        37 => (Role::Tab, "page tab"),
        38 => (Role::TabPanel, "property page"),
        40 => (Role::Image, "graphic"),
        41 => (Role::Text, "static text"),
        42 => (Role::Edit, "text"),
        43 => (Role::Button, "push button"),
        44 => (Role::CheckBox, "check button"),
        45 => (Role::RadioButton, "radio button"),
        46 => (Role::ComboBox, "combo box"),
        47 => (Role::ComboBox, "drop-down list"),
        48 => (Role::ProgressBar, "progress bar"),
        51 => (Role::Slider, "slider"),
        52 => (Role::SpinButton, "spin button"),
        56 => (Role::Button, "drop-down button"),
        57 => (Role::Button, "menu button"),
        60 => (Role::TabList, "page tab list"),
        62 => (Role::Button, "split button"),
        64 => (Role::Button, "outline button"),
        _ => (Role::Other, "other"),
    }
}

/// The role of a standard Win32 control from its window class and style, for MSAA objects that
/// only say "client" (Wine's). `None` for classes this does not know.
pub fn control_role(class: &str, style: u32) -> Option<(Role, &'static str)> {
    // BS_TYPEMASK and the button types of winuser.h.
    const BS_TYPEMASK: u32 = 0xf;
    let class = class.to_ascii_lowercase();
    Some(match class.as_str() {
        "button" => match style & BS_TYPEMASK {
            0x2 | 0x3 | 0x5 | 0x6 => (Role::CheckBox, "check button"),
            0x4 | 0x9 => (Role::RadioButton, "radio button"),
            0x7 => (Role::Group, "grouping"),
            _ => (Role::Button, "push button"),
        },
        "edit" | "richedit20w" | "richedit50w" => (Role::Edit, "text"),
        "static" => (Role::Text, "static text"),
        "listbox" | "combolbox" => (Role::List, "list"),
        "combobox" => (Role::ComboBox, "combo box"),
        "msctls_progress32" => (Role::ProgressBar, "progress bar"),
        "msctls_trackbar32" => (Role::Slider, "slider"),
        "systreeview32" => (Role::Tree, "outline"),
        "syslistview32" => (Role::List, "list"),
        "systabcontrol32" => (Role::TabList, "page tab list"),
        "scrollbar" => (Role::ScrollBar, "scroll bar"),
        _ => return None,
    })
}

/// Element states from MSAA state bits. `editable` comes from the role (an MSAA text that is
/// not read-only).
pub fn msaa_states(bits: u32, role: Role) -> ElementStates {
    let has = |b: u32| bits & b != 0;
    ElementStates {
        enabled: !has(state::UNAVAILABLE),
        focusable: has(state::FOCUSABLE),
        focused: has(state::FOCUSED),
        selected: has(state::SELECTED),
        checked: has(state::CHECKED) || (role == Role::ToggleButton && has(state::PRESSED)),
        expandable: has(state::EXPANDED) || has(state::COLLAPSED) || has(state::HASPOPUP),
        expanded: has(state::EXPANDED),
        editable: role == Role::Edit && !has(state::READONLY),
        // MSAA has no state for it.
        required: false,
        protected: has(state::PROTECTED),
        onscreen: !has(state::OFFSCREEN) && !has(state::INVISIBLE),
    }
}

/// Whether MSAA state bits mean the element is not shown at all.
pub fn msaa_hidden(bits: u32) -> bool {
    bits & state::INVISIBLE != 0
}

/// The deskpilot role and UI Automation's name of a `UIA_*ControlTypeId`.
pub fn uia_control_type(id: i32) -> (Role, &'static str) {
    match id {
        50000 => (Role::Button, "ButtonControl"),
        50001 => (Role::Table, "CalendarControl"),
        50002 => (Role::CheckBox, "CheckBoxControl"),
        50003 => (Role::ComboBox, "ComboBoxControl"),
        50004 => (Role::Edit, "EditControl"),
        50005 => (Role::Link, "HyperlinkControl"),
        50006 => (Role::Image, "ImageControl"),
        50007 => (Role::ListItem, "ListItemControl"),
        50008 => (Role::List, "ListControl"),
        50009 => (Role::Menu, "MenuControl"),
        50010 => (Role::MenuBar, "MenuBarControl"),
        50011 => (Role::MenuItem, "MenuItemControl"),
        50012 => (Role::ProgressBar, "ProgressBarControl"),
        50013 => (Role::RadioButton, "RadioButtonControl"),
        50014 => (Role::ScrollBar, "ScrollBarControl"),
        50015 => (Role::Slider, "SliderControl"),
        50016 => (Role::SpinButton, "SpinnerControl"),
        50017 => (Role::StatusBar, "StatusBarControl"),
        50018 => (Role::TabList, "TabControl"),
        50019 => (Role::Tab, "TabItemControl"),
        50020 => (Role::Text, "TextControl"),
        50021 => (Role::ToolBar, "ToolBarControl"),
        50022 => (Role::ToolTip, "ToolTipControl"),
        50023 => (Role::Tree, "TreeControl"),
        50024 => (Role::TreeItem, "TreeItemControl"),
        50025 => (Role::Other, "CustomControl"),
        50026 => (Role::Group, "GroupControl"),
        50027 => (Role::Other, "ThumbControl"),
        50028 => (Role::Table, "DataGridControl"),
        50029 => (Role::Row, "DataItemControl"),
        50030 => (Role::Document, "DocumentControl"),
        50031 => (Role::Button, "SplitButtonControl"),
        50032 => (Role::Window, "WindowControl"),
        50033 => (Role::Group, "PaneControl"),
        50034 => (Role::Row, "HeaderControl"),
        50035 => (Role::ColumnHeader, "HeaderItemControl"),
        50036 => (Role::Table, "TableControl"),
        50037 => (Role::Other, "TitleBarControl"),
        50038 => (Role::Separator, "SeparatorControl"),
        50039 => (Role::Group, "SemanticZoomControl"),
        50040 => (Role::ToolBar, "AppBarControl"),
        _ => (Role::Other, "UnknownControl"),
    }
}

/// The semantic action names a UI Automation element offers, from the patterns it has, in
/// the order the engine should prefer them.
pub fn uia_actions(patterns: UiaPatterns) -> Vec<String> {
    let mut actions = Vec::new();
    let mut add = |yes: bool, name: &str| {
        if yes {
            actions.push(name.to_string());
        }
    };
    add(patterns.invoke, "invoke");
    add(patterns.toggle, "toggle");
    add(patterns.expand_collapse, "expand");
    add(patterns.expand_collapse, "collapse");
    add(patterns.selection_item, "select");
    add(patterns.scroll_item, "scroll into view");
    add(patterns.legacy_default_action, "default action");
    actions
}

/// Which control patterns a UI Automation element supports.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct UiaPatterns {
    pub invoke: bool,
    pub toggle: bool,
    pub expand_collapse: bool,
    pub selection_item: bool,
    pub scroll_item: bool,
    pub value: bool,
    pub value_read_only: bool,
    pub legacy_default_action: bool,
}

/// `ToggleState_On` and `ExpandCollapseState_*` as UI Automation reports them.
pub const UIA_TOGGLE_ON: i32 = 1;
pub const UIA_EXPANDED: i32 = 1;
pub const UIA_PARTIALLY_EXPANDED: i32 = 2;
pub const UIA_LEAF: i32 = 3;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn msaa_roles_cover_the_common_controls() {
        assert_eq!(msaa_role(43), (Role::Button, "push button"));
        assert_eq!(msaa_role(44).0, Role::CheckBox);
        assert_eq!(msaa_role(42).0, Role::Edit);
        assert_eq!(msaa_role(46).0, Role::ComboBox);
        assert_eq!(msaa_role(33).0, Role::List);
        assert_eq!(msaa_role(34).0, Role::ListItem);
        assert_eq!(msaa_role(2).0, Role::MenuBar);
        assert_eq!(msaa_role(9999).0, Role::Other);
    }

    #[test]
    fn control_classes_refine_a_client_role() {
        // BS_PUSHBUTTON | WS_TABSTOP, BS_AUTOCHECKBOX, BS_AUTORADIOBUTTON
        assert_eq!(control_role("Button", 0x1_0000).unwrap().0, Role::Button);
        assert_eq!(control_role("Button", 0x3).unwrap().0, Role::CheckBox);
        assert_eq!(control_role("BUTTON", 0x9).unwrap().0, Role::RadioButton);
        assert_eq!(control_role("ListBox", 0).unwrap().0, Role::List);
        assert_eq!(control_role("ComboBox", 0x3).unwrap().0, Role::ComboBox);
        assert_eq!(control_role("Static", 0).unwrap().0, Role::Text);
        assert_eq!(control_role("AfxWnd140", 0), None);
    }

    #[test]
    fn msaa_states_map_bit_by_bit() {
        let s = msaa_states(
            state::CHECKED | state::FOCUSABLE | state::FOCUSED,
            Role::CheckBox,
        );
        assert!(s.checked && s.focusable && s.focused && s.enabled && s.onscreen);
        assert!(!s.editable);
        let s = msaa_states(state::UNAVAILABLE | state::OFFSCREEN, Role::Button);
        assert!(!s.enabled && !s.onscreen);
        assert!(msaa_states(0, Role::Edit).editable);
        assert!(!msaa_states(state::READONLY, Role::Edit).editable);
        let s = msaa_states(state::COLLAPSED, Role::ComboBox);
        assert!(s.expandable && !s.expanded);
        assert!(msaa_hidden(state::INVISIBLE));
    }

    #[test]
    fn uia_control_types_and_actions() {
        assert_eq!(uia_control_type(50000), (Role::Button, "ButtonControl"));
        assert_eq!(uia_control_type(50004).0, Role::Edit);
        assert_eq!(uia_control_type(50032).0, Role::Window);
        assert_eq!(uia_control_type(1).0, Role::Other);
        let actions = uia_actions(UiaPatterns {
            invoke: true,
            expand_collapse: true,
            ..Default::default()
        });
        assert_eq!(actions, ["invoke", "expand", "collapse"]);
    }
}
