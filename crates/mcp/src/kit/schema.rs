//! Tool schemas without the noise a model pays tokens for and learns nothing from:
//! `$schema`, `format` and the integer bounds schemars derives from Rust types, one-use
//! `$defs` of string enums (inlined as `enum`), `additionalProperties: false` (the server
//! refuses unknown fields itself, naming the valid ones), empty defaults, a default said twice,
//! and the line breaks of doc comments. Names, types, enums, required fields and meaningful
//! defaults stay.
//!
//! [`wire_line`] is `tools/list`'s answer as one JSON-RPC line, the size a client pays for.

use rmcp::model::Tool;
use serde_json::{Map, Value};

/// `tool` with a compact input schema and a one-paragraph description.
pub(crate) fn compact(mut tool: Tool) -> Tool {
    let mut schema = Value::Object((*tool.input_schema).clone());
    let defs = schema
        .as_object_mut()
        .and_then(|s| s.remove("$defs"))
        .unwrap_or(Value::Null);
    if let Some(s) = schema.as_object_mut() {
        s.remove("$schema");
    }
    clean(&mut schema, &defs);
    if let Value::Object(map) = schema {
        tool.input_schema = std::sync::Arc::new(map);
    }
    if let Some(d) = tool.description.take() {
        tool.description = Some(one_paragraph(&d).into());
    }
    if let Some(a) = tool.annotations.as_mut() {
        // The tool's name is its title in every client that shows one.
        a.title = None;
        // A hint equal to the protocol's default says nothing a client does not assume
        // (readOnlyHint false, destructiveHint true, idempotentHint false, openWorldHint true;
        // destructiveHint and idempotentHint mean nothing for a read-only tool).
        let read_only = a.read_only_hint == Some(true);
        if a.read_only_hint == Some(false) {
            a.read_only_hint = None;
        }
        if a.destructive_hint == Some(true) || read_only {
            a.destructive_hint = None;
        }
        if a.idempotent_hint == Some(false) || read_only {
            a.idempotent_hint = None;
        }
        if a.open_world_hint == Some(true) {
            a.open_world_hint = None;
        }
    }
    // Nothing left to say: the protocol's defaults hold without the object.
    if tool.annotations.as_ref().is_some_and(|a| {
        a.title.is_none()
            && a.read_only_hint.is_none()
            && a.destructive_hint.is_none()
            && a.idempotent_hint.is_none()
            && a.open_world_hint.is_none()
    }) {
        tool.annotations = None;
    }
    tool
}

/// Doc-comment line breaks become spaces; blank lines stay paragraph breaks.
fn one_paragraph(text: &str) -> String {
    text.split("\n\n")
        .map(|p| p.split_whitespace().collect::<Vec<_>>().join(" "))
        .collect::<Vec<_>>()
        .join("\n")
}

fn clean(v: &mut Value, defs: &Value) {
    match v {
        Value::Object(map) => {
            // An optional enum is `anyOf: [{$ref}, null]`: unwrap it first so the `$ref`
            // below is inlined (its `$defs` are dropped).
            not_null(map);
            if let Some(Value::String(r)) = map.get("$ref").cloned()
                && let Some(def) = r.strip_prefix("#/$defs/").and_then(|name| defs.get(name))
            {
                map.remove("$ref");
                let mut def = def.clone();
                clean(&mut def, defs);
                if let Value::Object(d) = def {
                    for (k, v) in d {
                        if k == "description" && map.contains_key("description") {
                            continue;
                        }
                        map.entry(k).or_insert(v);
                    }
                }
            }
            enum_of_consts(map);
            not_null(map);
            // Unknown arguments are refused by the server with the valid names (`kit::args`);
            // saying so in every object costs 28 bytes.
            if map.get("additionalProperties") == Some(&Value::Bool(false)) {
                map.remove("additionalProperties");
            }
            default_of_enum(map);
            // What schemars derives from Rust integer types says nothing to a model.
            if map.remove("format").is_some() {
                if map.get("minimum") == Some(&Value::from(0)) {
                    map.remove("minimum");
                }
                for bound in [255, 65535, 4294967295u64] {
                    if map.get("maximum") == Some(&Value::from(bound)) {
                        map.remove("maximum");
                    }
                }
            }
            let empty_default = match map.get("default") {
                Some(Value::String(s)) => s.is_empty(),
                Some(Value::Array(a)) => a.is_empty(),
                Some(Value::Bool(b)) => !b,
                Some(Value::Null) => true,
                _ => false,
            };
            // A default the description states ("default 12", "(0: last)", "-1: all",
            // "default main") is said once.
            let stated_default = match (map.get("default"), map.get("description")) {
                (Some(Value::Number(n)), Some(Value::String(d))) => {
                    d.to_lowercase().contains("default") || d.contains(&format!("{n}:"))
                }
                (Some(Value::String(_) | Value::Bool(_)), Some(Value::String(d))) => {
                    d.to_lowercase().contains("default")
                }
                _ => false,
            };
            if empty_default || stated_default {
                map.remove("default");
            }
            if let Some(Value::String(d)) = map.get_mut("description") {
                *d = one_paragraph(d);
            }
            for (key, child) in map.iter_mut() {
                match (key.as_str(), child) {
                    // A map of names to schemas: its keys are parameter names, not keywords
                    // (`format`, `description` and `default` are parameters of some tools).
                    ("properties" | "$defs" | "definitions", Value::Object(named)) => {
                        for schema in named.values_mut() {
                            clean(schema, defs);
                        }
                    }
                    (_, child) => clean(child, defs),
                }
            }
        }
        Value::Array(items) => {
            for item in items {
                clean(item, defs);
            }
        }
        _ => {}
    }
}

/// An optional field's `anyOf: [S, null]` or `type: [T, "null"]` → `S` / `T`: leaving an
/// optional field out is how a caller says "none" (and some clients mishandle nullable types).
fn not_null(map: &mut Map<String, Value>) {
    let is_null = |v: &Value| v.get("type") == Some(&Value::from("null"));
    if let Some(Value::Array(options)) = map.get("anyOf")
        && options.len() == 2
        && options.iter().any(is_null)
    {
        let Some(Value::Object(kept)) = options.iter().find(|v| !is_null(v)).cloned() else {
            return;
        };
        map.remove("anyOf");
        for (k, v) in kept {
            if k == "description" && map.contains_key("description") {
                continue;
            }
            map.entry(k).or_insert(v);
        }
    }
    if let Some(Value::Array(types)) = map.get("type")
        && types.len() == 2
        && types.iter().any(|t| t == "null")
        && let Some(t) = types.iter().find(|t| *t != "null").cloned()
    {
        map.insert("type".into(), t);
    }
}

/// `oneOf` of string `const`s (and of string `enum`s, which schemars makes of the variants
/// without a doc comment) → one `enum` (the per-value descriptions belong in the field's).
fn enum_of_consts(map: &mut Map<String, Value>) {
    let Some(Value::Array(variants)) = map.get("oneOf") else {
        return;
    };
    let mut values = Vec::new();
    for v in variants {
        match (v.get("const"), v.get("enum")) {
            (Some(c @ Value::String(_)), None) => values.push(c.clone()),
            (None, Some(Value::Array(e))) if e.iter().all(Value::is_string) => {
                values.extend(e.iter().cloned())
            }
            _ => return,
        }
    }
    map.remove("oneOf");
    map.insert("type".into(), Value::from("string"));
    map.insert("enum".into(), Value::Array(values));
}

/// An enum described only as "Default X." with X one of its values: the default said as
/// `default`, which is shorter and machine-readable.
fn default_of_enum(map: &mut Map<String, Value>) {
    let (Some(Value::Array(values)), Some(Value::String(d))) =
        (map.get("enum"), map.get("description"))
    else {
        return;
    };
    let Some(v) = d
        .strip_prefix("Default ")
        .and_then(|v| v.strip_suffix('.'))
        .map(Value::from)
    else {
        return;
    };
    if values.contains(&v) && !map.contains_key("default") {
        map.remove("description");
        map.insert("default".into(), v);
    }
}

/// `tools` as the one JSON-RPC line a server writes for a `tools/list` answer (request id 1),
/// newline included: what a client reads, and what the size limit is about.
pub fn wire_line(tools: Vec<Tool>) -> String {
    use rmcp::model::{ListToolsResult, RequestId, ServerJsonRpcMessage, ServerResult};
    let message = ServerJsonRpcMessage::response(
        ServerResult::ListToolsResult(ListToolsResult::with_all_items(tools)),
        RequestId::Number(1),
    );
    serde_json::to_string(&message).unwrap_or_default() + "\n"
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn noise_goes_and_meaning_stays() {
        let mut schema = json!({
            "$schema": "x",
            "$defs": { "Mode": { "oneOf": [
                { "const": "fail", "description": "Refuse.", "type": "string" },
                { "const": "off", "type": "string" }
            ] } },
            "type": "object",
            "properties": {
                "mode": { "$ref": "#/$defs/Mode", "description": "\"fail\" or\n\"off\"." },
                "id": { "type": "integer", "format": "uint64", "minimum": 0, "default": 0 },
                "count": { "type": "integer", "format": "uint8", "minimum": 0, "maximum": 255, "default": 1 },
                "text": { "type": "string", "default": "" },
                "steps": { "type": "integer", "default": 12, "description": "Moves (default 12)." },
                "shot": { "type": "integer", "default": 0, "description": "Source (0: last)." },
                "session": { "type": "string", "default": "main", "description": "Session (default main)." },
                "dx": { "type": "integer", "default": 0, "description": "Notches right." },
                "format": { "type": "string", "description": "a parameter named like a keyword" },
                "default": { "type": "integer", "format": "uint8", "minimum": 0 },
                "x": { "type": ["number", "null"], "description": "X." },
                "region": { "anyOf": [{ "type": "object", "description": "A rect." }, { "type": "null" }], "description": "Where." },
                "hit": { "anyOf": [{ "$ref": "#/$defs/Mode" }, { "type": "null" }], "description": "Default off." },
                "action": { "description": "What.", "oneOf": [
                    { "enum": ["min", "max"], "type": "string" },
                    { "const": "close", "description": "Closes.", "type": "string" }
                ] },
                "mark": { "type": "object", "additionalProperties": false,
                    "properties": { "x": { "type": "integer" } }, "required": ["x"] }
            },
            "required": ["mode"]
        });
        let defs = schema.as_object_mut().unwrap().remove("$defs").unwrap();
        schema.as_object_mut().unwrap().remove("$schema");
        clean(&mut schema, &defs);
        assert_eq!(
            schema,
            json!({
                "type": "object",
                "properties": {
                    "mode": { "type": "string", "enum": ["fail", "off"], "description": "\"fail\" or \"off\"." },
                    "id": { "type": "integer", "default": 0 },
                    "count": { "type": "integer", "default": 1 },
                    "text": { "type": "string" },
                    "steps": { "type": "integer", "description": "Moves (default 12)." },
                    "shot": { "type": "integer", "description": "Source (0: last)." },
                    "session": { "type": "string", "description": "Session (default main)." },
                    "dx": { "type": "integer", "default": 0, "description": "Notches right." },
                    "format": { "type": "string", "description": "a parameter named like a keyword" },
                    "default": { "type": "integer" },
                    "x": { "type": "number", "description": "X." },
                    "region": { "type": "object", "description": "Where." },
                    "hit": { "type": "string", "enum": ["fail", "off"], "default": "off" },
                    "action": { "type": "string", "enum": ["min", "max", "close"], "description": "What." },
                    "mark": { "type": "object", "properties": { "x": { "type": "integer" } }, "required": ["x"] }
                },
                "required": ["mode"]
            })
        );
    }
}
