//! The structural checker behind `from_arguments` (Part III 7.1 routing): decides whether
//! arguments have a *structural* fault against a derived loop-tool inputSchema, without
//! compiling a JSON Schema validator, so the derive does not depend on `jsonschema`.
//!
//! Derived inputSchemas are structural by construction (`loop_tool` strips every value
//! keyword), so they use only `type`, `properties`, `required`, `items`, `prefixItems`,
//! `additionalProperties` (as a schema), `anyOf` and `allOf`, plus annotations. Those are
//! exactly the keywords checked here, with JSON Schema 2020-12 semantics (an `integer` is a
//! number with a zero fractional part). Any other keyword is ignored; the tests check that
//! this checker and `jsonschema` agree on derived schemas.

use crate::escape_pointer_token;
use serde_json::Value;

/// Every structural fault of `value` against `schema`: `(instance pointer, message)`.
pub fn faults(schema: &Value, value: &Value) -> Vec<(String, String)> {
    let mut out = Vec::new();
    check(schema, value, &mut String::new(), &mut out);
    out
}

fn type_matches(name: &str, value: &Value) -> bool {
    match name {
        "null" => value.is_null(),
        "boolean" => value.is_boolean(),
        "object" => value.is_object(),
        "array" => value.is_array(),
        "string" => value.is_string(),
        "number" => value.is_number(),
        "integer" => match value {
            Value::Number(n) => n.is_i64() || n.is_u64() || n.as_f64().is_some_and(|f| f.fract() == 0.0),
            _ => false,
        },
        _ => true,
    }
}

fn json_type(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

fn check(schema: &Value, value: &Value, at: &mut String, out: &mut Vec<(String, String)>) {
    let Value::Object(schema) = schema else {
        if schema == &Value::Bool(false) {
            out.push((at.clone(), "no value is allowed here".to_owned()));
        }
        return;
    };
    if let Some(types) = schema.get("type") {
        let allowed: Vec<&str> = match types {
            Value::String(t) => vec![t.as_str()],
            Value::Array(ts) => ts.iter().filter_map(Value::as_str).collect(),
            _ => Vec::new(),
        };
        if !allowed.is_empty() && !allowed.iter().any(|t| type_matches(t, value)) {
            out.push((
                at.clone(),
                format!("expected {}, found {}", allowed.join(" or "), json_type(value)),
            ));
            return;
        }
    }
    if let Some(Value::Array(branches)) = schema.get("allOf") {
        for branch in branches {
            check(branch, value, at, out);
        }
    }
    if let Some(Value::Array(branches)) = schema.get("anyOf") {
        let fits = branches.iter().any(|branch| faults_at(branch, value, at).is_empty());
        if !fits && !branches.is_empty() {
            out.push((at.clone(), "matches none of the allowed shapes".to_owned()));
        }
    }
    match value {
        Value::Object(members) => {
            if let Some(Value::Array(required)) = schema.get("required") {
                for name in required.iter().filter_map(Value::as_str) {
                    if !members.contains_key(name) {
                        out.push((at.clone(), format!("missing required member `{name}`")));
                    }
                }
            }
            let properties = schema.get("properties").and_then(Value::as_object);
            for (name, member) in members {
                let declared = properties.and_then(|p| p.get(name));
                let sub = declared.or_else(|| schema.get("additionalProperties").filter(|s| s.is_object()));
                if let Some(sub) = sub {
                    let len = at.len();
                    at.push('/');
                    at.push_str(&escape_pointer_token(name));
                    check(sub, member, at, out);
                    at.truncate(len);
                }
            }
        }
        Value::Array(items) => {
            let prefix = schema.get("prefixItems").and_then(Value::as_array);
            for (index, item) in items.iter().enumerate() {
                let sub = prefix.and_then(|p| p.get(index)).or_else(|| schema.get("items"));
                if let Some(sub) = sub {
                    let len = at.len();
                    at.push('/');
                    at.push_str(&index.to_string());
                    check(sub, item, at, out);
                    at.truncate(len);
                }
            }
        }
        _ => {}
    }
}

fn faults_at(schema: &Value, value: &Value, at: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    check(schema, value, &mut at.to_owned(), &mut out);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn types_required_nested_and_alternatives() {
        let schema = json!({"type": "object", "required": ["run_id"], "properties": {
            "run_id": {"type": "string"},
            "n": {"type": "integer"},
            "opt": {"type": ["string", "null"]},
            "list": {"type": "array", "items": {"type": "object", "required": ["a"], "properties": {"a": {"type": "boolean"}}}},
            "either": {"anyOf": [{"type": "string"}, {"type": "array", "items": {"type": "string"}}]}
        }});
        assert!(faults(
            &schema,
            &json!({"run_id": "r", "n": 5.0, "opt": null, "list": [{"a": true}], "either": ["x"], "unknown": 1})
        )
        .is_empty());
        let found = faults(&schema, &json!({"n": 1.5, "list": [{"a": 1}, {}], "either": 3}));
        let pointers: Vec<&str> = found.iter().map(|(p, _)| p.as_str()).collect();
        assert_eq!(pointers, ["", "/either", "/list/0/a", "/list/1", "/n"]);
        assert_eq!(
            faults(&schema, &json!([])),
            [(String::new(), "expected object, found array".to_owned())]
        );
    }
}
