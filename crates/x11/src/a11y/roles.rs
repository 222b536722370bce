//! AT-SPI roles and states in deskpilot's vocabulary, and extents as rectangles.

use super::*;

/// AT-SPI role → deskpilot role.
pub(crate) fn role(r: atspi::Role) -> Role {
    use atspi::Role as A;
    match r {
        A::Application => Role::Application,
        A::Frame | A::Window => Role::Window,
        A::Dialog | A::FileChooser | A::ColorChooser | A::FontChooser => Role::Dialog,
        A::Alert | A::Notification => Role::Alert,
        A::Button | A::PushButtonMenu => Role::Button,
        A::ToggleButton => Role::ToggleButton,
        A::CheckBox => Role::CheckBox,
        A::RadioButton => Role::RadioButton,
        A::ComboBox => Role::ComboBox,
        A::Entry | A::PasswordText | A::Text | A::Terminal | A::Editbar => Role::Edit,
        A::Label | A::Static | A::Caption | A::Paragraph | A::Footnote => Role::Text,
        A::Heading => Role::Heading,
        A::Link => Role::Link,
        A::Image | A::Icon | A::DesktopIcon | A::Animation => Role::Image,
        A::List | A::ListBox | A::DescriptionList => Role::List,
        A::ListItem | A::DescriptionTerm | A::DescriptionValue => Role::ListItem,
        A::Tree | A::TreeTable => Role::Tree,
        A::TreeItem => Role::TreeItem,
        A::Table => Role::Table,
        A::TableRow => Role::Row,
        A::TableCell => Role::Cell,
        A::ColumnHeader | A::RowHeader | A::TableColumnHeader | A::TableRowHeader => {
            Role::ColumnHeader
        }
        A::Menu => Role::Menu,
        A::MenuBar => Role::MenuBar,
        A::MenuItem | A::TearoffMenuItem => Role::MenuItem,
        A::CheckMenuItem => Role::CheckMenuItem,
        A::RadioMenuItem => Role::RadioMenuItem,
        A::PageTabList => Role::TabList,
        A::PageTab => Role::Tab,
        A::ToolBar => Role::ToolBar,
        A::StatusBar => Role::StatusBar,
        A::Slider => Role::Slider,
        A::SpinButton => Role::SpinButton,
        A::ScrollBar => Role::ScrollBar,
        A::ProgressBar | A::LevelBar => Role::ProgressBar,
        A::Separator => Role::Separator,
        A::ToolTip => Role::ToolTip,
        A::DocumentFrame
        | A::DocumentText
        | A::DocumentWeb
        | A::DocumentEmail
        | A::DocumentPresentation
        | A::DocumentSpreadsheet
        | A::Article => Role::Document,
        A::ScrollPane | A::Viewport => Role::ScrollPane,
        A::SplitPane => Role::SplitPane,
        A::Panel
        | A::Filler
        | A::Section
        | A::Grouping
        | A::Form
        | A::InternalFrame
        | A::LayeredPane
        | A::RootPane
        | A::OptionPane
        | A::GlassPane
        | A::Landmark => Role::Group,
        _ => Role::Other,
    }
}

pub(super) fn states(s: StateSet, bounds: Option<Rect>, window: Rect) -> ElementStates {
    ElementStates {
        enabled: s.contains(State::Enabled) || s.contains(State::Sensitive),
        focusable: s.contains(State::Focusable),
        focused: s.contains(State::Focused),
        selected: s.contains(State::Selected),
        checked: s.contains(State::Checked) || s.contains(State::Pressed),
        expandable: s.contains(State::Expandable),
        expanded: s.contains(State::Expanded),
        editable: s.contains(State::Editable),
        required: s.contains(State::Required),
        // A role, not a state, in AT-SPI: the tree sets it (enrich).
        protected: false,
        onscreen: bounds.is_some_and(|b| b.intersect(&window).is_some()),
    }
}

/// Extents as a rectangle; `None` for the placeholders toolkits give hidden or unplaced
/// elements (GTK `i32::MIN`, Qt all zeros, empty sizes).
pub(super) fn bounds(x: i32, y: i32, w: i32, h: i32) -> Option<Rect> {
    if w <= 0 || h <= 0 || x == i32::MIN || y == i32::MIN || (x, y, w, h) == (0, 0, 0, 0) {
        return None;
    }
    Some(Rect::new(x, y, w as u32, h as u32))
}

/// An object's screen extents as a rectangle; `None` when it does not answer or is not placed.
pub(super) async fn screen_bounds(conn: &zbus::Connection, o: &ObjectRefOwned) -> Option<Rect> {
    let c = proxy_at::<ComponentProxy>(conn, o).await.ok()?;
    let (x, y, w, h) = c.get_extents(CoordType::Screen).await.ok()?;
    bounds(x, y, w, h)
}
