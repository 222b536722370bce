//! The mouse buttons, one type for every layer: the backends press it, the engine's requests
//! carry it and every profile's tool argument parses into it (`"left"`, `"right"`,
//! `"middle"`), each profile wording the argument in its own field description.

use serde::Deserialize;

/// A mouse button; `left` when a tool argument leaves it out. Parsed, never serialized (a
/// result names it with [`MouseButton::name`]), so a schema states no default the profile's
/// own field description does not.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum MouseButton {
    #[default]
    Left,
    Right,
    Middle,
}

impl MouseButton {
    /// The button's name as arguments spell it: `left`, `right` or `middle`.
    pub const fn name(self) -> &'static str {
        match self {
            MouseButton::Left => "left",
            MouseButton::Right => "right",
            MouseButton::Middle => "middle",
        }
    }
}

/// The schema is the bare enum of names with no description of its own: each profile describes
/// the argument in its own words on the field that takes it.
impl schemars::JsonSchema for MouseButton {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "MouseButton".into()
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "type": "string",
            "enum": ["left", "right", "middle"],
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_parse_and_print() {
        for b in [MouseButton::Left, MouseButton::Right, MouseButton::Middle] {
            let parsed: MouseButton = serde_json::from_value(serde_json::json!(b.name())).unwrap();
            assert_eq!(parsed, b);
        }
        assert!(serde_json::from_value::<MouseButton>(serde_json::json!("Left")).is_err());
        assert_eq!(MouseButton::default(), MouseButton::Left);
    }
}
