//! Per-tool outputSchema unions (Part III 6, "Output schemas"): self-contained JSON Schemas
//! built from a `*ToolOutput` definition of the original schema, in two flavours.
//!
//! - [`Flavour::Bundled`]: the definition's `anyOf` of `$ref`s, plus only the `$defs` they
//!   reach (transitively);
//! - [`Flavour::Inlined`]: no `$ref` at all; every reference is replaced by its target (many
//!   MCP clients cannot resolve `$ref`). The Pilotage shapes are not recursive, so inlining
//!   terminates; a recursive reference is reported as an error, never looped on.
//!
//! Both carry `"type": "object"` at the root beside the `anyOf`: the 2025-06-18 and
//! 2025-11-25 MCP `Tool` definitions require it of an outputSchema. Every branch of a
//! `*ToolOutput` union is an object schema, so this adds no constraint the definition does
//! not already make. No `$schema` is emitted: MCP defaults to 2020-12, and clients configured
//! for draft-07 reject an unknown `$schema` URI.

use std::collections::BTreeSet;

use serde_json::{json, Map, Value};

use crate::error::{escape_pointer_token, unescape_pointer_token, CodegenError};

/// The two shapes of an outputSchema union.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Flavour {
    /// `anyOf` of `$ref`s plus the reachable `$defs`.
    Bundled,
    /// Every `$ref` replaced by its target.
    Inlined,
}

/// Builds the outputSchema union of `def` (a `$defs` entry whose root is an `anyOf`).
pub fn output_schema(schema: &Value, def: &str, flavour: Flavour, file: &str) -> Result<Value, CodegenError> {
    let pointer = format!("/$defs/{}", escape_pointer_token(def));
    let definition = schema.pointer(&pointer).ok_or_else(|| {
        CodegenError::new(
            file,
            pointer.clone(),
            format!("no definition `{def}` to build an outputSchema from"),
        )
    })?;
    if !definition.get("anyOf").is_some_and(Value::is_array) {
        return Err(CodegenError::new(
            file,
            pointer,
            "an outputSchema union is built from a definition whose root is an `anyOf`",
        ));
    }
    let mut root = Map::new();
    root.insert("type".into(), json!("object"));
    if let Value::Object(members) = definition {
        for (key, value) in members {
            root.insert(key.clone(), value.clone());
        }
    }
    let mut root = Value::Object(root);
    match flavour {
        Flavour::Bundled => {
            let mut reached = BTreeSet::new();
            collect_reachable(schema, &root, &mut reached, file)?;
            let defs: Map<String, Value> = reached
                .into_iter()
                .map(|name| {
                    let value = schema["$defs"][&name].clone();
                    (name, value)
                })
                .collect();
            root["$defs"] = Value::Object(defs);
        }
        Flavour::Inlined => {
            let mut stack = Vec::new();
            inline(schema, &mut root, &mut stack, file, &pointer)?;
        }
    }
    Ok(root)
}

/// The `$defs` name a local `#/$defs/<name>` reference points to.
fn def_name(reference: &str) -> Option<String> {
    let rest = reference.strip_prefix("#/$defs/")?;
    (!rest.contains('/')).then(|| unescape_pointer_token(rest))
}

fn collect_reachable(
    schema: &Value,
    node: &Value,
    reached: &mut BTreeSet<String>,
    file: &str,
) -> Result<(), CodegenError> {
    match node {
        Value::Object(members) => {
            if let Some(reference) = members.get("$ref").and_then(Value::as_str) {
                let name = def_name(reference).ok_or_else(|| {
                    CodegenError::new(
                        file,
                        "",
                        format!("outputSchema unions support only `#/$defs/<name>` references, not \"{reference}\""),
                    )
                })?;
                if reached.insert(name.clone()) {
                    let target = schema
                        .pointer(&format!("/$defs/{}", escape_pointer_token(&name)))
                        .ok_or_else(|| {
                            CodegenError::new(file, "", format!("`$ref` \"{reference}\" does not resolve"))
                        })?;
                    collect_reachable(schema, target, reached, file)?;
                }
            }
            for (key, value) in members {
                // `const`, `enum`, `default` and `examples` hold instances, not schemas.
                if !matches!(key.as_str(), "const" | "enum" | "default" | "examples") {
                    collect_reachable(schema, value, reached, file)?;
                }
            }
            Ok(())
        }
        Value::Array(items) => items
            .iter()
            .try_for_each(|item| collect_reachable(schema, item, reached, file)),
        _ => Ok(()),
    }
}

fn inline(schema: &Value, node: &mut Value, stack: &mut Vec<String>, file: &str, at: &str) -> Result<(), CodegenError> {
    match node {
        Value::Object(members) => {
            if let Some(reference) = members.get("$ref").and_then(Value::as_str).map(str::to_owned) {
                let name = def_name(&reference).ok_or_else(|| {
                    CodegenError::new(
                        file,
                        at,
                        format!("outputSchema unions support only `#/$defs/<name>` references, not \"{reference}\""),
                    )
                })?;
                if stack.contains(&name) {
                    return Err(CodegenError::new(
                        file,
                        at,
                        format!("`{name}` is recursive and cannot be inlined"),
                    ));
                }
                let mut target = schema
                    .pointer(&format!("/$defs/{}", escape_pointer_token(&name)))
                    .cloned()
                    .ok_or_else(|| CodegenError::new(file, at, format!("`$ref` \"{reference}\" does not resolve")))?;
                stack.push(name.clone());
                inline(
                    schema,
                    &mut target,
                    stack,
                    file,
                    &format!("/$defs/{}", escape_pointer_token(&name)),
                )?;
                stack.pop();
                members.remove("$ref");
                if members.is_empty() {
                    *node = target;
                } else {
                    // A `$ref` with siblings applies both: keep the siblings, add the target
                    // as one more `allOf` member.
                    let all_of = members.entry("allOf").or_insert_with(|| json!([]));
                    if let Value::Array(items) = all_of {
                        items.insert(0, target);
                    }
                    for (key, value) in members.iter_mut() {
                        if key != "allOf" && !matches!(key.as_str(), "const" | "enum" | "default" | "examples") {
                            inline(schema, value, stack, file, at)?;
                        }
                    }
                }
                return Ok(());
            }
            for (key, value) in members.iter_mut() {
                if !matches!(key.as_str(), "const" | "enum" | "default" | "examples") {
                    inline(schema, value, stack, file, at)?;
                }
            }
            Ok(())
        }
        Value::Array(items) => items
            .iter_mut()
            .try_for_each(|item| inline(schema, item, stack, file, at)),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Value {
        json!({"$defs": {
            "A": {"type": "object", "properties": {"b": {"$ref": "#/$defs/B"}}},
            "B": {"type": "string"},
            "Unused": {"type": "integer"},
            "R": {"type": "object", "properties": {"self": {"$ref": "#/$defs/R"}}},
            "Out": {"description": "d", "anyOf": [{"$ref": "#/$defs/A"}, {"type": "object", "properties": {"x": {"$ref": "#/$defs/B", "minLength": 2}}}]},
            "RecOut": {"anyOf": [{"$ref": "#/$defs/R"}]}
        }})
    }

    #[test]
    fn bundled_keeps_only_reachable_defs_and_adds_the_root_type() {
        let out = output_schema(&sample(), "Out", Flavour::Bundled, "s").unwrap();
        assert_eq!(out["type"], "object");
        assert_eq!(out["description"], "d");
        let defs: Vec<&String> = out["$defs"].as_object().unwrap().keys().collect();
        assert_eq!(defs, ["A", "B"]);
    }

    #[test]
    fn inlined_has_no_ref_and_keeps_ref_siblings() {
        let out = output_schema(&sample(), "Out", Flavour::Inlined, "s").unwrap();
        assert!(!out.to_string().contains("$ref"));
        assert_eq!(out["anyOf"][0]["properties"]["b"], json!({"type": "string"}));
        assert_eq!(
            out["anyOf"][1]["properties"]["x"],
            json!({"minLength": 2, "allOf": [{"type": "string"}]})
        );
        assert!(out.get("$defs").is_none());
    }

    #[test]
    fn recursion_is_an_error_not_a_loop() {
        let error = output_schema(&sample(), "RecOut", Flavour::Inlined, "s").unwrap_err();
        assert!(error.message.contains("recursive"), "{error}");
        assert!(output_schema(&sample(), "RecOut", Flavour::Bundled, "s").is_ok());
    }

    #[test]
    fn non_union_definition_is_rejected() {
        let error = output_schema(&sample(), "A", Flavour::Bundled, "s").unwrap_err();
        assert_eq!(error.pointer, "/$defs/A");
    }
}
