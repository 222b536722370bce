//! Tool schemas without the noise a model pays tokens for and learns nothing from, keeping
//! their JSON Schema 2020-12 meaning: every call valid under the compact schema is one the
//! server takes as it would under the declared one. Names, types, enums, required fields,
//! `x-…` keywords (such as `x-mcp-header`) and meaningful defaults stay. What goes, and why
//! that is safe:
//!
//! - `$schema` when it names 2020-12: MCP reads a schema without `$schema` as 2020-12.
//! - `$defs`, once every `$ref` to them is inlined: a reference replaced by its target
//!   validates the same (a schema whose definitions refer to themselves, carry an `$anchor` or
//!   `$id`, or are referred to by anything but `#/$defs/<name>` is kept as declared).
//! - `additionalProperties: false`: schemars writes it only for `#[serde(deny_unknown_fields)]`,
//!   so the server refuses an unknown argument itself, with an error naming the valid ones
//!   (`kit::args`); the schema then says less, never something the server does not do.
//! - `format` and the integer bounds schemars derives from Rust types (`uint8`, 0..=255):
//!   `format` is an annotation in 2020-12; a value out of a type's range is refused by the
//!   server with the field named, as above.
//! - An optional field's `null` (`anyOf: [S, null]`, `type: [T, "null"]`): leaving the field out
//!   says the same, and the compact schema accepts less, not more.
//! - `oneOf` of string `const`s becomes one `enum` (the same values; the per-value
//!   descriptions are annotations).
//! - Empty defaults and a default the description states, `title`s in annotations, the line
//!   breaks of doc comments: annotations only.
//!
//! These edits are sound where a subschema counts positively toward the whole. A schema
//! with a keyword under which that fails — `not`, `if`/`then`/`else`, `dependentSchemas`,
//! `unevaluatedProperties`/`unevaluatedItems` (they see what `additionalProperties` removed),
//! `$dynamicRef`/`$dynamicAnchor` — or another dialect's `$schema` is passed as declared
//! ([`compactable`]).
//!
//! [`wire_line`] is `tools/list`'s answer as one JSON-RPC line, the size a client pays for.

use rmcp::model::Tool;
use serde_json::{Map, Value};

/// `tool` with a compact input schema and a one-paragraph description.
pub(crate) fn compact(mut tool: Tool) -> Tool {
    let mut schema = Value::Object((*tool.input_schema).clone());
    if compactable(&schema) {
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

/// The 2020-12 dialect, the one MCP assumes when a schema names none.
const DIALECT_2020_12: &str = "https://json-schema.org/draft/2020-12/schema";

/// Keywords under which narrowing or widening a subschema does not narrow or widen the whole,
/// or that see what compaction removes: a schema using one is passed as declared.
const KEPT_AS_DECLARED: &[&str] = &[
    "not",
    "if",
    "then",
    "else",
    "dependentSchemas",
    "unevaluatedProperties",
    "unevaluatedItems",
    "$dynamicRef",
    "$dynamicAnchor",
];

/// Whether compacting `schema` keeps its meaning (see the module docs): it is 2020-12, uses no
/// keyword of [`KEPT_AS_DECLARED`], and each `$ref` names a definition under `$defs` that can be
/// inlined — one without `$anchor` or `$id`, which never refers back to itself.
fn compactable(schema: &Value) -> bool {
    if schema
        .get("$schema")
        .is_some_and(|d| d.as_str() != Some(DIALECT_2020_12))
    {
        return false;
    }
    let defs = schema.get("$defs").and_then(Value::as_object);
    // The definition a `$ref` names, by its name as `$defs` spells it.
    let target = |r: &str| -> Option<&str> {
        let name = r.strip_prefix("#/$defs/")?;
        defs?.get_key_value(name).map(|(k, _)| k.as_str())
    };
    // Every keyword and reference, root and definitions alike; then no cycle among the
    // definitions (a `$ref` inlined into itself would never end).
    let mut refs_of = std::collections::BTreeMap::<&str, Vec<&str>>::new();
    let mut ok = keywords_ok(schema, &mut |r| target(r).is_some(), &mut Vec::new());
    for (name, def) in defs.into_iter().flatten() {
        let name = name.as_str();
        let mut refs = Vec::new();
        ok = ok
            && def.get("$anchor").is_none()
            && def.get("$id").is_none()
            && keywords_ok(def, &mut |r| target(r).is_some(), &mut refs);
        refs_of.insert(name, refs.iter().filter_map(|r| target(r)).collect());
    }
    ok && !refs_of.keys().any(|start| reaches_itself(start, &refs_of))
}

/// Walks the keywords of `v` (not the names of its properties): false on a keyword of
/// [`KEPT_AS_DECLARED`], on an `$anchor` or `$id` below the root, or on a `$ref` `resolves`
/// refuses; every `$ref` seen is pushed to `refs`.
fn keywords_ok<'a>(
    v: &'a Value,
    resolves: &mut dyn FnMut(&str) -> bool,
    refs: &mut Vec<&'a str>,
) -> bool {
    match v {
        Value::Object(map) => map.iter().all(|(key, child)| match (key.as_str(), child) {
            (k, _) if KEPT_AS_DECLARED.contains(&k) => false,
            ("$anchor" | "$id", _) => false,
            ("$ref", Value::String(r)) => {
                refs.push(r);
                resolves(r)
            }
            // The definitions are walked one by one by `compactable`.
            ("$defs", _) => true,
            ("properties" | "patternProperties", Value::Object(named)) => {
                named.values().all(|s| keywords_ok(s, resolves, refs))
            }
            // Values, not schemas.
            ("enum" | "const" | "default" | "examples" | "required", _) => true,
            (_, child) => keywords_ok(child, resolves, refs),
        }),
        Value::Array(items) => items.iter().all(|i| keywords_ok(i, resolves, refs)),
        _ => true,
    }
}

/// Whether following `$ref`s from the definition `start` leads back to it.
fn reaches_itself(start: &str, refs_of: &std::collections::BTreeMap<&str, Vec<&str>>) -> bool {
    let mut seen = Vec::new();
    let mut todo: Vec<&str> = refs_of.get(start).cloned().unwrap_or_default();
    while let Some(name) = todo.pop() {
        if name == start {
            return true;
        }
        if !seen.contains(&name) {
            seen.push(name);
            todo.extend(refs_of.get(name).into_iter().flatten().copied());
        }
    }
    false
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

    fn tool(schema: Value) -> Tool {
        let Value::Object(map) = schema else {
            panic!("not an object")
        };
        Tool::new("t", "A tool.", map)
    }

    /// A schema whose meaning compaction cannot keep is listed as declared, byte for byte:
    /// conditionals, `$anchor`, another dialect, a reference it cannot inline, a recursive
    /// definition (which inlining would never finish).
    #[test]
    fn what_compaction_cannot_keep_stays_as_declared() {
        let address = json!({ "type": "object", "properties": { "street": { "type": "string" } } });
        let cases = [
            json!({ "$schema": DIALECT_2020_12, "type": "object",
                "properties": { "a": { "type": "string", "format": "uuid" } },
                "if": { "required": ["a"] }, "then": { "required": ["b"] },
                "additionalProperties": false }),
            json!({ "type": "object", "properties": { "a": { "not": { "type": "null" } } } }),
            json!({ "$schema": DIALECT_2020_12, "type": "object",
                "$defs": { "address": { "$anchor": "address", "type": "object" } },
                "properties": { "home": { "$ref": "#/$defs/address" } } }),
            json!({ "$schema": "http://json-schema.org/draft-07/schema#", "type": "object",
                "properties": { "n": { "type": "integer", "format": "uint8" } } }),
            json!({ "type": "object", "$defs": { "address": address },
                "properties": { "home": { "$ref": "#/$defs/elsewhere" } } }),
            json!({ "type": "object", "$defs": { "node": { "type": "object",
                "properties": { "children": { "type": "array", "items": { "$ref": "#/$defs/node" } } } } },
                "properties": { "root": { "$ref": "#/$defs/node" } } }),
            json!({ "type": "object", "properties": { "rest": { "unevaluatedProperties": false } } }),
        ];
        for schema in cases {
            let compacted = compact(tool(schema.clone()));
            assert_eq!(Value::Object((*compacted.input_schema).clone()), schema);
        }
    }

    /// The JSON Schema 2020-12 features the conformance suite looks for survive `tools/list`
    /// (its fixture has conditionals, so it is kept whole), and `x-mcp-header` survives
    /// compaction of an ordinary schema.
    #[test]
    fn header_annotations_and_2020_12_keywords_survive() {
        let compacted = compact(tool(json!({
            "$schema": DIALECT_2020_12, "type": "object",
            "properties": { "region": { "type": "string", "x-mcp-header": "Region" } },
            "required": ["region"], "additionalProperties": false
        })));
        assert_eq!(
            Value::Object((*compacted.input_schema).clone()),
            json!({ "type": "object",
                "properties": { "region": { "type": "string", "x-mcp-header": "Region" } },
                "required": ["region"] })
        );
        // A property named like a keyword is a name, not the keyword.
        let named = json!({ "type": "object", "properties": { "if": { "type": "string" } } });
        assert!(compactable(&named));
    }
}
