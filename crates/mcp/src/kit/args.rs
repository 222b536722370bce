//! Tool arguments that fail to parse say which field, what was expected and what was given
//! (`x: expected a number, got the string "ten"`), as an `INVALID_ARGUMENT` tool error whose
//! hint lists the tool's parameters.
//!
//! [`Parameters`] stands in for rmcp's wrapper of the same name (rmcp's `#[tool]` macro finds
//! the input schema by that name). Its extraction fails with an `invalid_params` error
//! carrying [`ARGUMENT_ERROR`] in its data; the server turns that into the tool error, since
//! only it knows the tool's schema.

use rmcp::handler::server::common::FromContextPart;
use rmcp::handler::server::tool::ToolCallContext;
use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

/// The key in an `invalid_params` error's data that marks an argument error of ours.
pub(crate) const ARGUMENT_ERROR: &str = "deskpilotArgumentError";

/// A tool's parsed arguments.
#[derive(Debug)]
pub struct Parameters<P>(pub P);

impl<P: JsonSchema> JsonSchema for Parameters<P> {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        P::schema_name()
    }

    fn json_schema(generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
        P::json_schema(generator)
    }
}

impl<S, P: DeserializeOwned> FromContextPart<ToolCallContext<'_, S>> for Parameters<P> {
    fn from_context_part(context: &mut ToolCallContext<S>) -> Result<Self, rmcp::ErrorData> {
        let arguments = Value::Object(context.arguments.take().unwrap_or_default());
        parse(arguments).map(Parameters).map_err(|message| {
            rmcp::ErrorData::invalid_params(
                message.clone(),
                Some(json!({ ARGUMENT_ERROR: message })),
            )
        })
    }
}

/// A window id as a tool takes it: a number, or the same as text — decimal, or the `0x…` hex
/// that result texts print (`0x1a00003`), so an id copied from a text works.
pub(crate) fn window_id<'de, D: serde::Deserializer<'de>>(d: D) -> Result<u64, D::Error> {
    use serde::Deserialize as _;
    #[derive(serde::Deserialize)]
    #[serde(untagged)]
    enum Raw {
        Number(u64),
        Text(String),
    }
    match Raw::deserialize(d)? {
        Raw::Number(n) => Ok(n),
        Raw::Text(s) => {
            let t = s.trim();
            let parsed = match t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
                Some(hex) => u64::from_str_radix(hex, 16),
                None => t.parse(),
            };
            parsed.map_err(|_| {
                serde::de::Error::custom(format!(
                    "expected a window id (a number, or 0x… as result texts print it), got the string \"{s}\""
                ))
            })
        }
    }
}

/// Keys as a tool takes them: a list (`["ctrl", "s"]`) or one string (`"ctrl+s"`), which
/// models send as often as the list their schema asks for.
pub(crate) fn key_list<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Vec<String>, D::Error> {
    use serde::Deserialize as _;
    #[derive(serde::Deserialize)]
    #[serde(untagged)]
    enum Raw {
        List(Vec<String>),
        Text(String),
    }
    Ok(
        match Raw::deserialize(d).map_err(|_| {
            serde::de::Error::custom(
                "expected keys as a list ([\"ctrl\", \"s\"]) or a string (\"ctrl+s\")",
            )
        })? {
            Raw::List(keys) => keys,
            Raw::Text(keys) => vec![keys],
        },
    )
}

/// Parses `arguments`, or says which field is wrong and how.
pub(crate) fn parse<P: DeserializeOwned>(arguments: Value) -> Result<P, String> {
    serde_path_to_error::deserialize::<_, P>(arguments).map_err(|e| {
        let path = e.path().to_string();
        describe(&path, &e.into_inner().to_string())
    })
}

/// `path` + serde's message → `field: expected …, got …`.
fn describe(path: &str, serde: &str) -> String {
    let field = |name: &str| {
        if path == "." || path.is_empty() || path == name || path.ends_with(&format!(".{name}")) {
            name.to_string()
        } else {
            format!("{path}.{name}")
        }
    };
    let here = if path == "." || path.is_empty() {
        "arguments".to_string()
    } else {
        path.to_string()
    };
    let serde = serde.split(" at line ").next().unwrap_or(serde);
    if let Some(rest) = serde.strip_prefix("invalid type: ")
        && let Some((got, expected)) = rest.split_once(", expected ")
    {
        return format!(
            "{here}: expected {}, got {}",
            expected_words(expected),
            got_words(got)
        );
    }
    if let Some(rest) = serde.strip_prefix("invalid value: ")
        && let Some((got, expected)) = rest.split_once(", expected ")
    {
        return format!(
            "{here}: expected {}, got {}",
            expected_words(expected),
            got_words(got)
        );
    }
    if let Some(rest) = serde.strip_prefix("missing field `") {
        let name = rest.trim_end_matches('`');
        return format!("{}: required, but missing", field(name));
    }
    if let Some(rest) = serde.strip_prefix("unknown field `") {
        if let Some((name, valid)) = rest.split_once("`, expected ") {
            return format!(
                "{}: unknown field; valid fields: {}",
                field(name),
                valid.trim_start_matches("one of ").replace('`', "")
            );
        }
        let name = rest.split('`').next().unwrap_or(rest);
        return format!("{}: unknown field", field(name));
    }
    if let Some(rest) = serde.strip_prefix("unknown variant `")
        && let Some((got, valid)) = rest.split_once("`, expected ")
    {
        return format!(
            "{here}: expected {}, got \"{got}\"",
            valid.replace('`', "\"")
        );
    }
    format!("{here}: {serde}")
}

fn expected_words(expected: &str) -> String {
    match expected {
        "f64" | "f32" => "a number".to_string(),
        "i64" | "i32" | "i16" | "i8" | "isize" => "an integer".to_string(),
        "u64" | "u32" | "u16" | "u8" | "usize" => "a non-negative integer".to_string(),
        "a boolean" => "true or false".to_string(),
        "a sequence" => "an array".to_string(),
        "a map" => "an object".to_string(),
        other => other.replace('`', "\""),
    }
}

fn got_words(got: &str) -> String {
    let unticked = got.replace('`', "");
    if let Some(s) = got.strip_prefix("string ") {
        format!("the string {s}")
    } else if let Some(n) = unticked.strip_prefix("integer ") {
        format!("the integer {n}")
    } else if let Some(n) = unticked.strip_prefix("floating point ") {
        format!("the number {n}")
    } else if let Some(b) = unticked.strip_prefix("boolean ") {
        b.to_string()
    } else {
        match got {
            "map" => "an object".to_string(),
            "sequence" => "an array".to_string(),
            "unit value" | "null" => "null".to_string(),
            other => other.to_string(),
        }
    }
}

/// The message of an argument error of ours inside an `invalid_params` error, if it is one.
pub(crate) fn argument_error(error: &rmcp::ErrorData) -> Option<String> {
    error
        .data
        .as_ref()?
        .get(ARGUMENT_ERROR)?
        .as_str()
        .map(str::to_string)
}

/// A router's answer with an argument error of ours turned into an `INVALID_ARGUMENT` tool
/// error whose hint lists `tool`'s parameters.
pub(crate) fn into_tool_error(
    answer: Result<rmcp::model::CallToolResponse, rmcp::ErrorData>,
    tool: Option<&rmcp::model::Tool>,
    wording: &dyn super::Wording,
) -> Result<rmcp::model::CallToolResponse, rmcp::ErrorData> {
    let error = match answer {
        Err(e) => e,
        ok => return ok,
    };
    let Some(message) = argument_error(&error) else {
        return Err(error);
    };
    let params: Vec<String> = tool
        .and_then(|t| t.input_schema.get("properties"))
        .and_then(Value::as_object)
        .map(|p| p.keys().cloned().collect())
        .unwrap_or_default();
    let code = deskpilot_types::ErrorCode::InvalidArgument;
    let name = wording.code_name(code);
    let hint = format!(
        "{} Parameters of {}: {}.",
        wording.hint(code),
        tool.map_or("this tool", |t| t.name.as_ref()),
        if params.is_empty() {
            "none".to_string()
        } else {
            params.join(", ")
        }
    );
    let mut result = rmcp::model::CallToolResult::error(vec![rmcp::model::ContentBlock::text(
        format!("{name}: {message}\nHint: {hint}"),
    )]);
    result.structured_content = Some(json!({
        "error": { "code": name, "message": message, "hint": hint },
        "effect": "refused",
    }));
    Ok(result.into())
}

#[cfg(test)]
mod tests {
    #[test]
    fn window_ids_are_numbers_decimal_text_or_hex_text() {
        #[derive(serde::Deserialize, Debug)]
        struct A {
            #[serde(default, deserialize_with = "super::window_id")]
            window_id: u64,
        }
        for (v, want) in [
            (serde_json::json!({ "window_id": 27262979 }), 27262979),
            (serde_json::json!({ "window_id": "27262979" }), 27262979),
            (serde_json::json!({ "window_id": "0x1a00003" }), 0x1a00003),
            (serde_json::json!({}), 0),
        ] {
            assert_eq!(parse::<A>(v).unwrap().window_id, want);
        }
        let e = parse::<A>(serde_json::json!({ "window_id": "mousepad" })).unwrap_err();
        assert!(e.contains("0x"), "{e}");
    }

    use serde::Deserialize;

    use super::*;

    #[derive(Debug, Deserialize)]
    #[serde(deny_unknown_fields)]
    #[allow(dead_code)]
    struct Args {
        x: f64,
        #[serde(default)]
        count: u8,
        #[serde(default)]
        format: Format,
        #[serde(default)]
        region: Option<Region>,
    }

    #[derive(Debug, Default, Deserialize)]
    #[serde(rename_all = "lowercase")]
    enum Format {
        #[default]
        Jpeg,
        Png,
    }

    #[derive(Debug, Deserialize)]
    #[allow(dead_code)]
    struct Region {
        x: i32,
        width: u32,
    }

    fn err(v: Value) -> String {
        parse::<Args>(v).unwrap_err()
    }

    #[test]
    fn errors_name_the_field_what_was_expected_and_what_was_given() {
        assert_eq!(
            err(json!({ "x": "ten" })),
            "x: expected a number, got the string \"ten\""
        );
        assert_eq!(err(json!({})), "x: required, but missing");
        assert_eq!(
            err(json!({ "x": 1, "count": -1 })),
            "count: expected a non-negative integer, got the integer -1"
        );
        assert_eq!(
            err(json!({ "x": 1, "format": "gif" })),
            "format: expected \"jpeg\" or \"png\", got \"gif\""
        );
        assert_eq!(
            err(json!({ "x": 1, "bogus": 1 })),
            "bogus: unknown field; valid fields: x, count, format, region"
        );
        assert_eq!(
            err(json!({ "x": 1, "region": { "x": 0 } })),
            "region.width: required, but missing"
        );
        assert_eq!(
            err(json!({ "x": 1, "region": { "x": 0.5, "width": 2 } })),
            "region.x: expected an integer, got the number 0.5"
        );
    }
}
