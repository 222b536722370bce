//! A page's nodes by their backend node id (what a snapshot's refs name): where one shows,
//! what is at a point, focus, and the scripts deskpilot runs on a node (containment, a short
//! description, its value, choosing `<select>` options, what a secret may go into), kept as
//! `.js` files in `js/`. A password field's value never leaves the page: it is read as filled
//! or empty only.

use serde_json::{Value, json};

use crate::cdp::Connection;
use crate::{CALL, Error};

/// `function(n)`: `this` contains `n` (through shadow roots; an `<iframe>` counts as containing
/// what is inside it).
const CONTAINS: &str = include_str!("js/contains.js");
/// `function()`: `div#modal.overlay "Please confirm"`.
const DESCRIBE: &str = include_str!("js/describe.js");
/// `function()`: a control's value, else its text; for a password field only whether it is
/// filled.
const READ_VALUE: &str = include_str!("js/read_value.js");
/// `function()`: whether a field is a password field, takes typing, is disabled or read-only,
/// and the origins of its document and of the documents above it.
const SECRET_FIELD: &str = include_str!("js/secret_field.js");
/// `function()`: whether a field holds anything (a boolean: never its value or length).
const FILLED: &str = include_str!("js/filled.js");
/// `function(values)`: selects a `<select>`'s options by value, then label, then
/// case-insensitive text, firing `input` and `change`.
const SELECT_OPTIONS: &str = include_str!("js/select_options.js");
/// `function(op, value)`: what a form field is (`kind`), whether it is checked, toggling it,
/// selecting its text, setting its value with `input`/`change`, its chosen files' names.
const FILL: &str = include_str!("js/fill.js");

/// One content quad of a node: four corners (x, y), in viewport CSS pixels.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Quad(pub [f64; 8]);

impl Quad {
    /// The mean of its corners.
    pub fn center(&self) -> (f64, f64) {
        let q = &self.0;
        (
            (q[0] + q[2] + q[4] + q[6]) / 4.0,
            (q[1] + q[3] + q[5] + q[7]) / 4.0,
        )
    }

    /// Its bounding box: (left, top, right, bottom).
    pub fn bounds(&self) -> (f64, f64, f64, f64) {
        let q = &self.0;
        let xs = [q[0], q[2], q[4], q[6]];
        let ys = [q[1], q[3], q[5], q[7]];
        let min = |v: [f64; 4]| v.iter().copied().fold(f64::INFINITY, f64::min);
        let max = |v: [f64; 4]| v.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        (min(xs), min(ys), max(xs), max(ys))
    }
}

fn node(backend: i64) -> Value {
    json!({ "backendNodeId": backend })
}

/// Scrolls node `backend` into view and returns its first content quad; `Ok(None)` when it
/// has no box (hidden, `display: none`), `Err` when the node is gone from the page.
pub fn visible_quad(cdp: &Connection, session: &str, backend: i64) -> Result<Option<Quad>, Error> {
    let _ = cdp.call(
        "DOM.scrollIntoViewIfNeeded",
        node(backend),
        Some(session),
        CALL,
    );
    let quads = cdp.call("DOM.getContentQuads", node(backend), Some(session), CALL)?;
    let q: Vec<f64> = quads["quads"][0]
        .as_array()
        .map(|q| q.iter().filter_map(Value::as_f64).collect())
        .unwrap_or_default();
    Ok(q.get(..8)
        .and_then(|q| <[f64; 8]>::try_from(q).ok())
        .map(Quad))
}

/// The node drawn at viewport point (`x`, `y`) (user-agent shadow DOM included, elements with
/// `pointer-events: none` looked through), when there is one.
pub fn node_at(cdp: &Connection, session: &str, x: i64, y: i64) -> Result<Option<i64>, Error> {
    // The browser hit-tests in document coordinates: add how far the page is scrolled.
    let m = cdp.call("Page.getLayoutMetrics", json!({}), Some(session), CALL)?;
    let scrolled = |k: &str| m["cssVisualViewport"][k].as_f64().unwrap_or(0.0).round() as i64;
    let hit = cdp.call(
        "DOM.getNodeForLocation",
        json!({ "x": x + scrolled("pageX"), "y": y + scrolled("pageY"), "includeUserAgentShadowDOM": true, "ignorePointerEventsNone": true }),
        Some(session),
        CALL,
    )?;
    Ok(hit["backendNodeId"].as_i64())
}

/// Focuses node `backend`; `Err` when it is gone.
pub fn focus(cdp: &Connection, session: &str, backend: i64) -> Result<(), Error> {
    cdp.call("DOM.focus", node(backend), Some(session), CALL)
        .map(|_| ())
}

/// A script handle to node `backend`, when it still exists.
fn object_of(cdp: &Connection, session: &str, backend: i64) -> Option<String> {
    cdp.call("DOM.resolveNode", node(backend), Some(session), CALL)
        .ok()?["object"]["objectId"]
        .as_str()
        .map(str::to_string)
}

/// Calls `function` (a `.js` file's `function(…)`) with `this` the object `object` and
/// `arguments`, returning its JSON value.
fn call_on(
    cdp: &Connection,
    session: &str,
    object: &str,
    function: &str,
    arguments: Value,
) -> Result<Value, Error> {
    let mut v = cdp.call(
        "Runtime.callFunctionOn",
        json!({
            "objectId": object,
            "functionDeclaration": function.trim(),
            "arguments": arguments,
            "returnByValue": true,
        }),
        Some(session),
        CALL,
    )?;
    Ok(v["result"]["value"].take())
}

/// Whether node `outer` contains node `inner` (through shadow roots too); an `<iframe>` hit is
/// taken as containing what is inside it.
pub fn contains(cdp: &Connection, session: &str, outer: i64, inner: i64) -> bool {
    let (Some(o), Some(i)) = (
        object_of(cdp, session, outer),
        object_of(cdp, session, inner),
    ) else {
        return false;
    };
    call_on(cdp, session, &o, CONTAINS, json!([{ "objectId": i }]))
        .ok()
        .and_then(|v| v.as_bool())
        .unwrap_or(false)
}

/// Node `backend` as a person would point at it: `div#modal.overlay "Please confirm"`.
pub fn describe(cdp: &Connection, session: &str, backend: i64) -> String {
    object_of(cdp, session, backend)
        .and_then(|o| call_on(cdp, session, &o, DESCRIBE, json!([])).ok())
        .and_then(|v| v.as_str().map(str::to_string))
        .unwrap_or_else(|| "another element".to_string())
}

/// What a field holds, as deskpilot may say it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FieldValue {
    /// A control's value, else the node's text.
    Text(String),
    /// A password field: only whether it holds anything, never what or how much.
    Password { filled: bool },
}

impl FieldValue {
    /// The text, or `(password field, filled)` / `(password field, empty)`.
    pub fn shown(&self) -> String {
        match self {
            FieldValue::Text(t) => t.clone(),
            FieldValue::Password { filled: true } => "(password field, filled)".into(),
            FieldValue::Password { filled: false } => "(password field, empty)".into(),
        }
    }

    fn read(v: &Value) -> Option<FieldValue> {
        match v {
            Value::String(s) => Some(FieldValue::Text(s.clone())),
            Value::Object(o) if o.get("password") == Some(&Value::Bool(true)) => {
                Some(FieldValue::Password {
                    filled: o.get("filled") == Some(&Value::Bool(true)),
                })
            }
            _ => None,
        }
    }
}

/// A control's value (`value`), else the node's text (a password field: whether it is
/// filled); `None` when the node is gone.
pub fn read_value(cdp: &Connection, session: &str, backend: i64) -> Option<FieldValue> {
    let o = object_of(cdp, session, backend)?;
    FieldValue::read(&call_on(cdp, session, &o, READ_VALUE, json!([])).ok()?)
}

/// What a secret may be typed into, as the page says it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SecretField {
    /// An `<input type=password>`.
    pub password: bool,
    /// Takes typed text (a text input, a textarea, an editable element).
    pub typable: bool,
    pub disabled: bool,
    pub readonly: bool,
    /// The origin of the field's document, then those of the documents it is framed in, the
    /// top one last (`location.ancestorOrigins`); `null` for an opaque origin.
    pub origins: Vec<String>,
}

impl SecretField {
    fn read(v: &Value) -> SecretField {
        let flag = |k: &str| v[k].as_bool() == Some(true);
        SecretField {
            password: flag("password"),
            typable: flag("typable"),
            disabled: flag("disabled"),
            readonly: flag("readonly"),
            origins: strings(&v["origins"]),
        }
    }
}

/// What node `backend` is as a target for a secret; `Ok(None)` when it is gone.
pub fn secret_field(
    cdp: &Connection,
    session: &str,
    backend: i64,
) -> Result<Option<SecretField>, Error> {
    let Some(o) = object_of(cdp, session, backend) else {
        return Ok(None);
    };
    Ok(Some(SecretField::read(&call_on(
        cdp,
        session,
        &o,
        SECRET_FIELD,
        json!([]),
    )?)))
}

/// Whether the field `backend` holds anything. Only a boolean crosses from the page: never the
/// value, never its length.
pub fn filled(cdp: &Connection, session: &str, backend: i64) -> Result<bool, Error> {
    let o = object_of(cdp, session, backend).ok_or_else(|| Error::Protocol {
        method: "DOM.resolveNode".into(),
        message: "the node is gone".into(),
    })?;
    Ok(call_on(cdp, session, &o, FILLED, json!([]))?.as_bool() == Some(true))
}

/// What choosing options of a `<select>` did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Selection {
    /// The node is gone from the page.
    Gone,
    /// The node is not a `<select>`.
    NotSelect,
    /// Some values name no option; nothing was changed.
    Missing {
        missing: Vec<String>,
        /// The labels of the options it has.
        options: Vec<String>,
    },
    /// Several options for a single select; nothing was changed.
    Single,
    /// The options now selected (labels), and whether that differs from before.
    Selected {
        selected: Vec<String>,
        changed: bool,
    },
}

fn strings(v: &Value) -> Vec<String> {
    v.as_array()
        .map(|a| {
            a.iter()
                .filter_map(|x| x.as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

impl Selection {
    fn read(v: &Value) -> Selection {
        if v["notSelect"].as_bool() == Some(true) {
            return Selection::NotSelect;
        }
        if v["missing"].as_array().is_some_and(|m| !m.is_empty()) {
            return Selection::Missing {
                missing: strings(&v["missing"]),
                options: strings(&v["options"]),
            };
        }
        if v["single"].as_bool() == Some(true) {
            return Selection::Single;
        }
        Selection::Selected {
            selected: strings(&v["selected"]),
            changed: v["changed"].as_bool() == Some(true),
        }
    }
}

/// Chooses the options of `<select>` node `backend` whose value or label is in `values`, as a
/// person picking them would (`input` and `change` fire).
pub fn select_options(
    cdp: &Connection,
    session: &str,
    backend: i64,
    values: &[String],
) -> Result<Selection, Error> {
    let Some(object) = object_of(cdp, session, backend) else {
        return Ok(Selection::Gone);
    };
    let v = call_on(
        cdp,
        session,
        &object,
        SELECT_OPTIONS,
        json!([{ "value": values }]),
    )?;
    Ok(Selection::read(&v))
}

/// What kind of form field a node is, as filling it goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Field {
    /// Typed into: text inputs, textareas, editable elements.
    Text,
    /// Typed into, and never read back or shown: an `<input type=password>`.
    Password,
    /// Checked or not: checkboxes, radios, switches.
    Check,
    /// A `<select>`.
    Select,
    /// An `<input type=file>`.
    File,
    /// Set as a whole value: date, time, colour and range inputs.
    Value,
    /// Not a field.
    Other,
}

fn fill(
    cdp: &Connection,
    session: &str,
    backend: i64,
    op: &str,
    value: &str,
) -> Result<Value, Error> {
    let object = object_of(cdp, session, backend).ok_or_else(|| Error::Protocol {
        method: "DOM.resolveNode".into(),
        message: "the node is gone".into(),
    })?;
    call_on(
        cdp,
        session,
        &object,
        FILL,
        json!([{ "value": op }, { "value": value }]),
    )
}

/// The kind of field node `backend` is; `Err` when it is gone.
pub fn field(cdp: &Connection, session: &str, backend: i64) -> Result<Field, Error> {
    Ok(match fill(cdp, session, backend, "kind", "")?.as_str() {
        Some("text") => Field::Text,
        Some("password") => Field::Password,
        Some("check") => Field::Check,
        Some("select") => Field::Select,
        Some("file") => Field::File,
        Some("value") => Field::Value,
        _ => Field::Other,
    })
}

/// Whether a checkbox, radio or switch is checked.
pub fn checked(cdp: &Connection, session: &str, backend: i64) -> Result<bool, Error> {
    Ok(fill(cdp, session, backend, "checked", "")?.as_bool() == Some(true))
}

/// Clicks a checkbox, radio or switch (its own `click()`, so a hidden native box behind a
/// styled label toggles too) and says whether it is checked now.
pub fn toggle(cdp: &Connection, session: &str, backend: i64) -> Result<bool, Error> {
    Ok(fill(cdp, session, backend, "toggle", "")?.as_bool() == Some(true))
}

/// Focuses a text field and selects all its text (what is typed next replaces it).
pub fn select_all(cdp: &Connection, session: &str, backend: i64) -> Result<(), Error> {
    fill(cdp, session, backend, "select_all", "").map(|_| ())
}

/// Sets a date, time, colour or range input's value as its picker would (`input`, `change`)
/// and reads it back.
pub fn set_value(
    cdp: &Connection,
    session: &str,
    backend: i64,
    value: &str,
) -> Result<String, Error> {
    Ok(fill(cdp, session, backend, "set_value", value)?
        .as_str()
        .unwrap_or_default()
        .to_string())
}

/// Sets the files of `<input type=file>` node `backend` (absolute paths) and returns the
/// names the page sees.
pub fn set_files(
    cdp: &Connection,
    session: &str,
    backend: i64,
    paths: &[String],
) -> Result<Vec<String>, Error> {
    cdp.call(
        "DOM.setFileInputFiles",
        json!({ "files": paths, "backendNodeId": backend }),
        Some(session),
        CALL,
    )?;
    Ok(strings(&fill(cdp, session, backend, "files", "")?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_quad_has_a_centre_and_bounds() {
        let q = Quad([10.0, 20.0, 30.0, 20.0, 30.0, 40.0, 10.0, 40.0]);
        assert_eq!(q.center(), (20.0, 30.0));
        assert_eq!(q.bounds(), (10.0, 20.0, 30.0, 40.0));
    }

    #[test]
    fn a_password_field_is_read_as_filled_or_empty_only() {
        assert_eq!(
            FieldValue::read(&json!("Ada")),
            Some(FieldValue::Text("Ada".into()))
        );
        let filled = FieldValue::read(&json!({"password": true, "filled": true})).unwrap();
        assert_eq!(filled, FieldValue::Password { filled: true });
        assert_eq!(filled.shown(), "(password field, filled)");
        assert_eq!(FieldValue::read(&json!(null)), None);
        let f = SecretField::read(&json!({
            "password": true, "typable": true, "origins": ["http://127.0.0.1:8080", "null"]
        }));
        assert!(f.password && f.typable && !f.disabled && !f.readonly);
        assert_eq!(f.origins, ["http://127.0.0.1:8080", "null"]);
    }

    #[test]
    fn reads_what_a_selection_did() {
        assert_eq!(
            Selection::read(&json!({"notSelect": true})),
            Selection::NotSelect
        );
        assert_eq!(
            Selection::read(&json!({"missing": ["x"], "options": ["A", "B"]})),
            Selection::Missing {
                missing: vec!["x".into()],
                options: vec!["A".into(), "B".into()]
            }
        );
        assert_eq!(Selection::read(&json!({"single": true})), Selection::Single);
        assert_eq!(
            Selection::read(&json!({"selected": ["B"], "changed": true})),
            Selection::Selected {
                selected: vec!["B".into()],
                changed: true
            }
        );
    }
}
