//! `fill_form`: the values (a JSON object, in its order, or `key=value` lines), each field
//! looked up among the window's controls now through the engine's ranking (`find_elements`,
//! OCR text where the tree has none), the tool and arguments that set it as its role and
//! state call for — or "leave it" when it already holds the value — then how to check every
//! field took, and the submit button's click only after that.

use deskpilot_engine::{Candidate, Element, Error, FindRequest, Session, TreeRequest, WindowRef};
use deskpilot_types::{Role, WindowId};
use rmcp::ErrorData;
use rmcp::model::GetPromptResult;
use serde_json::{Value, json};

use super::{Args, Toolbox, call_args, failed, resolve_window, user_text, window_line};
use crate::kit::render;
use crate::kit::server::{ProfileSpec, Server};

/// At most this many form fields are looked up.
const MAX_FIELDS: usize = 50;

/// One value to put in a field.
#[derive(Debug, Clone, PartialEq)]
enum Want {
    Text(String),
    On(bool),
}

impl Want {
    /// The value as a two-state control takes it, when it reads as one.
    fn as_bool(&self) -> Option<bool> {
        match self {
            Want::On(b) => Some(*b),
            Want::Text(t) => match t.trim().to_lowercase().as_str() {
                "true" | "yes" | "on" | "checked" | "1" | "x" => Some(true),
                "false" | "no" | "off" | "unchecked" | "0" | "" => Some(false),
                _ => None,
            },
        }
    }

    fn text(&self) -> String {
        match self {
            Want::Text(t) => t.clone(),
            Want::On(b) => b.to_string(),
        }
    }

    fn shown(&self) -> String {
        match self {
            Want::Text(t) => format!("\"{t}\""),
            Want::On(b) => b.to_string(),
        }
    }
}

/// The object's entries in the order written (serde_json's map sorts them).
struct Ordered(Vec<(String, Value)>);

impl<'de> serde::Deserialize<'de> for Ordered {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Visit;
        impl<'de> serde::de::Visitor<'de> for Visit {
            type Value = Ordered;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a JSON object")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut m: A,
            ) -> Result<Ordered, A::Error> {
                let mut entries = Vec::new();
                while let Some((k, v)) = m.next_entry::<String, Value>()? {
                    entries.push((k, v));
                }
                Ok(Ordered(entries))
            }
        }
        d.deserialize_map(Visit)
    }
}

/// The fields and values of `values`: a JSON object, or `key=value` lines.
fn parse_values(values: &str) -> Result<Vec<(String, Want)>, String> {
    let trimmed = values.trim();
    let mut fields = Vec::new();
    match serde_json::from_str::<Value>(trimmed) {
        Ok(Value::Object(_)) => {
            let Ordered(entries) = serde_json::from_str(trimmed)
                .map_err(|e| format!("values: not a JSON object ({e})"))?;
            for (k, v) in entries {
                let want = match v {
                    Value::String(s) => Want::Text(s),
                    Value::Bool(b) => Want::On(b),
                    Value::Number(n) => Want::Text(n.to_string()),
                    Value::Null => Want::Text(String::new()),
                    _ => {
                        return Err(format!(
                            "values: \"{k}\" must be text, a number or true/false"
                        ));
                    }
                };
                fields.push((k.trim().to_string(), want));
            }
        }
        Ok(other) => {
            return Err(format!(
                "values: JSON values must be an object of field: value, not {other}"
            ));
        }
        Err(json) => {
            for (n, line) in trimmed.lines().enumerate() {
                if line.trim().is_empty() {
                    continue;
                }
                let Some((k, v)) = line.split_once('=') else {
                    return Err(format!(
                        "values: line {} (\"{}\") is not key=value, and the whole is no JSON object ({json})",
                        n + 1,
                        line.trim()
                    ));
                };
                fields.push((k.trim().to_string(), Want::Text(v.trim().to_string())));
            }
        }
    }
    if let Some((_, _)) = fields.iter().find(|(k, _)| k.is_empty()) {
        return Err("values: a field has an empty name".to_string());
    }
    if fields.is_empty() {
        return Err("values: no fields given".to_string());
    }
    if fields.len() > MAX_FIELDS {
        return Err(format!(
            "values: {} fields; at most {MAX_FIELDS} at once",
            fields.len()
        ));
    }
    Ok(fields)
}

/// What a lookup found for one field: the best candidate, and its element when it is one
/// of the snapshot's.
#[derive(Debug)]
struct Spot {
    candidate: Candidate,
    element: Option<Element>,
    snapshot: u64,
}

/// Whether a role is a control that holds a value.
fn field_role(role: Role) -> bool {
    matches!(
        role,
        Role::Edit
            | Role::ComboBox
            | Role::CheckBox
            | Role::RadioButton
            | Role::ToggleButton
            | Role::Slider
            | Role::SpinButton
            | Role::List
            | Role::ListItem
            | Role::Document
            | Role::Cell
    )
}

/// The best control for `description` in window `id` (a field before a label), through the
/// engine's ranking (OCR text when the tree has no match).
fn locate(
    session: &Session,
    id: WindowId,
    description: &str,
    fields_only: bool,
    role: &str,
) -> Result<Option<Spot>, Error> {
    let (snapshot, candidates) = session.find_elements(&FindRequest {
        tree: TreeRequest {
            include_screenshot: false,
            ..TreeRequest::new(WindowRef::Id(id))
        },
        description: description.to_string(),
        name_contains: String::new(),
        role: role.to_string(),
        limit: 5,
        annotate: false,
    })?;
    let element_of = |c: &Candidate| {
        // An accessibility candidate carries its snapshot token; text OCR read has none.
        (!c.token.is_empty())
            .then(|| snapshot.elements.get(c.index))
            .flatten()
            .filter(|e| e.token == c.token)
            .cloned()
    };
    let best = candidates
        .iter()
        .find(|c| !fields_only || element_of(c).is_some_and(|e| field_role(e.role) || e.editable))
        .or(candidates.first());
    Ok(best.map(|c| Spot {
        candidate: c.clone(),
        element: element_of(c),
        snapshot: snapshot.id,
    }))
}

pub(super) async fn fill<P: ProfileSpec>(
    server: &Server<P>,
    args: &Args,
) -> Result<GetPromptResult, ErrorData> {
    let fields =
        parse_values(args.need("values")).map_err(|m| ErrorData::invalid_params(m, None))?;
    let asked = args.need("window").to_string();
    let submit = args.get("submit").map(str::to_string);
    let session = server.session();
    let keys: Vec<String> = fields.iter().map(|(k, _)| k.clone()).collect();
    let (window, spots, button) =
        render::blocking(server.request_timeout(), "prompt fill_form", move || {
            let w = resolve_window(&session, &asked)?;
            let mut spots = Vec::new();
            for key in &keys {
                spots.push(locate(&session, w.id, key, true, "")?);
            }
            let button = match &submit {
                Some(name) => Some((name.clone(), locate(&session, w.id, name, false, "")?)),
                None => None,
            };
            Ok((w, spots, button))
        })
        .await
        .map_err(|e| failed("window", e))?;
    let mut tools = Toolbox::new(server);
    let id = window.id.to_string();
    let snapshot = spots.iter().flatten().map(|s| s.snapshot).max();
    let mut text = format!(
        "Fill the form in the window {}.\nSet these {} values one field at a time, in this order.\n",
        window_line(&window),
        fields.len()
    );
    if let Some(s) = snapshot {
        text.push_str(&format!(
            "Each field was looked up in the window's controls just now (snapshot {s}); its token works while the window's structure is unchanged — when one is refused as stale, look the field up again with find_elements.\n"
        ));
    }
    for (n, ((key, want), spot)) in fields.iter().zip(&spots).enumerate() {
        text.push_str(&format!("\n{}. \"{key}\" = {}\n", n + 1, want.shown()));
        text.push_str(&field_steps(&mut tools, &id, key, want, spot.as_ref()));
    }
    text.push_str("\nThen check every field: ");
    let check = call_args(json!({ "window_id": id, "fresh": true }));
    text.push_str(&if tools.has("get_window_state") {
        format!(
            "read the window again (get_window_state {check}) and compare each field's value — or checked flag — with what is asked; "
        )
    } else {
        "take a new screenshot of the window and compare each field with what is asked; ".to_string()
    });
    text.push_str(
        "set again, another way, any field that does not show its value (click it, select all, type), and check again.\n",
    );
    match button {
        None => text.push_str(
            "Do not submit the form: report which fields are set and which could not be.\n",
        ),
        Some((name, spot)) => {
            text.push_str(&format!(
                "Only when every field is right, press \"{name}\": "
            ));
            text.push_str(&match spot.as_ref().and_then(|s| s.element.as_ref()) {
                Some(e) => format!(
                    "click {} ({} \"{}\"{})",
                    call_args(json!({ "element": e.token })),
                    e.role,
                    e.name,
                    if e.enabled {
                        ""
                    } else {
                        ", disabled until the form is complete"
                    }
                ),
                None => match spot {
                    Some(s) if s.candidate.screenshot_id.is_some() => ocr_click(&s.candidate),
                    _ => format!(
                        "it was not found in the window now: find it with find_elements {}",
                        call_args(json!({ "window_id": id, "description": name }))
                    ),
                },
            });
            text.push_str(
                "; then confirm it took effect (the window closes, changes or shows a message).\n",
            );
        }
    }
    tools.add(
        "get_window_state",
        "read the fields back (values, checked flags, tokens)",
    );
    tools.add("find_elements", "look a field up again by its label");
    tools.add(
        "screenshot",
        format!("see the form ({})", call_args(json!({ "window_id": id }))),
    );
    text.push_str("\nTools:\n");
    text.push_str(&tools.render());
    Ok(GetPromptResult::new(vec![user_text(text)])
        .with_description(format!("Fill the form in \"{}\"", window.title)))
}

fn ocr_click(c: &Candidate) -> String {
    match (c.image, c.screenshot_id) {
        (Some((x, y)), Some(sid)) => format!(
            "the text \"{}\" read by OCR: click {}",
            c.name,
            call_args(json!({ "x": x, "y": y, "screenshot_id": sid }))
        ),
        _ => format!("the text \"{}\" read by OCR", c.name),
    }
}

/// The steps for one field.
fn field_steps<P: ProfileSpec>(
    tools: &mut Toolbox<'_, P>,
    window: &str,
    key: &str,
    want: &Want,
    spot: Option<&Spot>,
) -> String {
    let Some(spot) = spot else {
        tools.add("screenshot", "see the form");
        return "   Not found among the window's controls or text: look for it on a screenshot; it may be further down (scroll) or on another tab of the form.\n".to_string();
    };
    let c = &spot.candidate;
    let Some(e) = &spot.element else {
        // Text read by OCR: no control, only where its label is.
        tools.add("click", "put the focus in a field found by OCR");
        tools.add("type_text", "type into the focused field");
        return format!(
            "   No control in the accessibility tree; {} (the field is at or next to that text), then type_text {}.\n",
            ocr_click(c),
            call_args(json!({ "text": want.text() }))
        );
    };
    let mut out = format!(
        "   {} \"{}\" {} — {}",
        e.role,
        if e.name.is_empty() {
            c.described_as.as_deref().unwrap_or("")
        } else {
            &e.name
        },
        e.token,
        c.why
    );
    if let Some(v) = &e.value {
        out.push_str(&format!(", now \"{v}\""));
    }
    if !e.enabled {
        out.push_str(", disabled now (it may enable once earlier fields are set: look again then)");
    }
    out.push('\n');
    let token = json!(e.token);
    let affordance = e.affordance();
    let step = if affordance.toggle
        || matches!(
            e.role,
            Role::CheckBox | Role::ToggleButton | Role::RadioButton
        ) {
        match want.as_bool() {
            Some(on) if on == e.checked => format!(
                "already {}: leave it",
                if on { "checked" } else { "unchecked" }
            ),
            Some(on) if on || e.role != Role::RadioButton => {
                tools.add("click", "toggle check boxes, press buttons");
                format!(
                    "now {}: click {} to {} it",
                    if e.checked { "checked" } else { "unchecked" },
                    call_args(json!({ "element": token })),
                    if on { "check" } else { "uncheck" }
                )
            }
            Some(_) => {
                "a radio button is unchecked by choosing another one of its group".to_string()
            }
            None => format!(
                "a two-state control: {} is neither true nor false — say which is meant",
                want.shown()
            ),
        }
    } else if e.editable
        || matches!(
            e.role,
            Role::Edit | Role::Slider | Role::SpinButton | Role::Document
        )
    {
        if e.value.as_deref() == Some(want.text().as_str()) {
            "already holds this value: leave it".to_string()
        } else if tools.has("set_value") {
            tools.add("set_value", "set a field's text or number and read it back");
            tools.add(
                "type_text",
                "type into the focused field when set_value is refused",
            );
            format!(
                "set_value {}; when refused: click it, press_key ctrl+a, type_text {}",
                call_args(json!({ "element": token, "value": want.text() })),
                call_args(json!({ "text": want.text() }))
            )
        } else {
            tools.add("click", "put the focus in a field");
            tools.add("type_text", "type into the focused field");
            format!(
                "click {}, press_key ctrl+a, then type_text {}",
                call_args(json!({ "element": token })),
                call_args(json!({ "text": want.text() }))
            )
        }
    } else if e.role == Role::ComboBox || affordance.expand {
        tools.add("click", "open a list and choose its item");
        format!(
            "open it (click {}), then click its item \"{}\" (find_elements {})",
            call_args(json!({ "element": token })),
            want.text(),
            call_args(json!({ "window_id": window, "description": want.text() }))
        )
    } else if affordance.select || affordance.activates() {
        tools.add("click", "choose items, press buttons");
        format!(
            "click {} ({} is a control that is chosen, not typed into: check the value is what is asked)",
            call_args(json!({ "element": token })),
            key
        )
    } else {
        tools.add("click", "put the focus in a field");
        tools.add("type_text", "type into the focused field");
        format!(
            "this is not a field (a label?): click the field beside it, then type_text {}; find_elements {} lists the candidates",
            call_args(json!({ "text": want.text() })),
            call_args(json!({ "window_id": window, "description": key }))
        )
    };
    out.push_str(&format!("   → {step}\n"));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_parse_as_json_in_their_order_or_as_lines() {
        let fields = parse_values(r#"{"Name": "Ada", "Age": 36, "Subscribe": true}"#).unwrap();
        assert_eq!(
            fields,
            vec![
                ("Name".to_string(), Want::Text("Ada".into())),
                ("Age".to_string(), Want::Text("36".into())),
                ("Subscribe".to_string(), Want::On(true)),
            ]
        );
        let fields = parse_values("Name = Ada Lovelace\n\nCity=London=UK\n").unwrap();
        assert_eq!(
            fields,
            vec![
                ("Name".to_string(), Want::Text("Ada Lovelace".into())),
                ("City".to_string(), Want::Text("London=UK".into())),
            ]
        );
        assert!(parse_values("just words").unwrap_err().contains("line 1"));
        assert!(parse_values(r#"{"a": [1]}"#).unwrap_err().contains("\"a\""));
        assert!(parse_values("{}").unwrap_err().contains("no fields"));
        assert!(parse_values("=x").unwrap_err().contains("empty name"));
    }
}
