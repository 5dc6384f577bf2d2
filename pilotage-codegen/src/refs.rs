//! `$ref` resolution check. typify 0.8 resolves a `$ref` by its last path segment and panics
//! or silently misresolves when the target is missing or deeper than `#/$defs/<name>`; this
//! module checks every `$ref` against the document first, so the error names the pointer.

use serde_json::Value;

use crate::error::{unescape_pointer_token, CodegenError};
use crate::walk::walk;

/// How a `$ref` resolved.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum RefTarget {
    /// `#/$defs/<name>` (or `#/definitions/<name>`) naming an existing definition.
    Definition(String),
    /// `#`: the document root.
    Root,
    /// A local pointer deeper than a definition, e.g. `#/$defs/a/properties/b`.
    DeepPointer(String),
    /// A reference to another document (a relative or absolute URI).
    External(String),
}

/// Every `$ref` in `schema`: (pointer of the referring subschema, reference text, target).
/// A local reference whose target does not exist is an error naming the referring pointer.
pub fn collect_refs(schema: &Value, file: &str) -> Result<Vec<(String, String, RefTarget)>, CodegenError> {
    let mut found = Vec::new();
    let mut error = None;
    walk(schema, "", &mut |object, at| {
        let Some(reference) = object.get("$ref") else { return };
        if error.is_some() {
            return;
        }
        let Some(reference) = reference.as_str() else {
            error = Some(CodegenError::new(file, format!("{at}/$ref"), "`$ref` must be a string"));
            return;
        };
        match classify(schema, reference) {
            Ok(target) => found.push((at.to_owned(), reference.to_owned(), target)),
            Err(why) => error = Some(CodegenError::new(file, format!("{at}/$ref"), why)),
        }
    });
    match error {
        Some(error) => Err(error),
        None => Ok(found),
    }
}

fn classify(schema: &Value, reference: &str) -> Result<RefTarget, String> {
    let Some(fragment) = reference.strip_prefix('#') else {
        return Ok(RefTarget::External(reference.to_owned()));
    };
    if fragment.is_empty() {
        return Ok(RefTarget::Root);
    }
    if !fragment.starts_with('/') {
        return Err(format!(
            "`$ref` \"{reference}\" uses a plain-name fragment, which this codegen does not resolve"
        ));
    }
    if schema.pointer(fragment).is_none() {
        return Err(format!(
            "`$ref` \"{reference}\" does not resolve: no such location in this document"
        ));
    }
    let tokens: Vec<String> = fragment[1..].split('/').map(unescape_pointer_token).collect();
    match tokens.as_slice() {
        [container, name] if container == "$defs" || container == "definitions" => {
            Ok(RefTarget::Definition(name.clone()))
        }
        _ => Ok(RefTarget::DeepPointer(fragment.to_owned())),
    }
}

/// Keywords through which a schema applies another to the *same* instance: a reference
/// reached only through these, back to where it started, describes no finite type.
const IN_PLACE: &[&str] = &["allOf", "anyOf", "oneOf", "not", "if", "then", "else", "$ref"];

/// The definitions a definition applies to the same instance (through [`IN_PLACE`] keywords
/// only), by name.
fn in_place_refs(schema: &Value, out: &mut Vec<String>) {
    let Value::Object(object) = schema else { return };
    if let Some(Value::String(reference)) = object.get("$ref") {
        let name = reference
            .strip_prefix("#/$defs/")
            .or_else(|| reference.strip_prefix("#/definitions/"))
            .filter(|rest| !rest.contains('/'));
        if let Some(name) = name {
            out.push(unescape_pointer_token(name));
        }
    }
    for keyword in IN_PLACE {
        match object.get(*keyword) {
            Some(Value::Array(branches)) => branches.iter().for_each(|b| in_place_refs(b, out)),
            Some(branch @ Value::Object(_)) => in_place_refs(branch, out),
            _ => {}
        }
    }
}

/// A definition that reaches itself through `allOf`/`anyOf`/`oneOf`/`not`/conditionals and
/// `$ref`s alone, with no object member or array item in between (`B: {"allOf": [..., {"$ref":
/// "#/$defs/B"}]}`): an error naming it and the cycle. typify would recurse without end on it
/// (a stack overflow); recursion *through* a member or an item (a tree) is fine.
pub fn check_unguarded_cycles(defs: &serde_json::Map<String, Value>, file: &str) -> Result<(), CodegenError> {
    let edges: std::collections::BTreeMap<&str, Vec<String>> = defs
        .iter()
        .map(|(name, schema)| {
            let mut out = Vec::new();
            in_place_refs(schema, &mut out);
            (name.as_str(), out)
        })
        .collect();
    for start in edges.keys() {
        let mut stack: Vec<(String, Vec<String>)> = vec![((*start).to_owned(), vec![(*start).to_owned()])];
        let mut seen = std::collections::BTreeSet::new();
        while let Some((at, path)) = stack.pop() {
            for next in edges.get(at.as_str()).into_iter().flatten() {
                if next == start {
                    let mut cycle = path.clone();
                    cycle.push(next.clone());
                    return Err(CodegenError::new(
                        file,
                        format!("/$defs/{}", crate::error::escape_pointer_token(start)),
                        format!(
                            "this definition applies itself to the same value ({}), with no member or item in between: it describes no finite type",
                            cycle.join(" -> ")
                        ),
                    ));
                }
                if seen.insert(next.clone()) {
                    let mut longer = path.clone();
                    longer.push(next.clone());
                    stack.push((next.clone(), longer));
                }
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unguarded_cycles_are_errors_and_trees_are_not() {
        let defs = |v: Value| v.as_object().unwrap().clone();
        let direct = defs(serde_json::json!({"B": {"allOf": [{"type": "integer"}, {"$ref": "#/$defs/B"}]}}));
        let error = check_unguarded_cycles(&direct, "s.json").unwrap_err();
        assert_eq!(error.pointer, "/$defs/B");
        assert!(error.message.contains("B -> B"), "{error}");
        let mutual = defs(
            serde_json::json!({"A": {"$ref": "#/$defs/C"}, "C": {"anyOf": [{"$ref": "#/$defs/A"}, {"type": "null"}]}}),
        );
        assert!(check_unguarded_cycles(&mutual, "s.json")
            .unwrap_err()
            .message
            .contains("->"));
        let tree = defs(
            serde_json::json!({"Node": {"type": "object", "properties": {"children": {"type": "array", "items": {"$ref": "#/$defs/Node"}}}}}),
        );
        assert!(check_unguarded_cycles(&tree, "s.json").is_ok());
    }
    use serde_json::json;

    #[test]
    fn missing_definition_is_named_by_pointer() {
        let schema = json!({"$defs": {"A": {"properties": {"b": {"$ref": "#/$defs/Missing"}}}}});
        let error = collect_refs(&schema, "s.json").unwrap_err();
        assert_eq!(error.pointer, "/$defs/A/properties/b/$ref");
        assert!(error.message.contains("#/$defs/Missing"), "{error}");
    }

    #[test]
    fn classifies_targets() {
        let schema = json!({"$defs": {"A": {"properties": {"b": {}}}, "R": {"anyOf": [
            {"$ref": "#/$defs/A"}, {"$ref": "#/$defs/A/properties/b"}, {"$ref": "other.json"}, {"$ref": "#"}
        ]}}});
        let targets: Vec<RefTarget> = collect_refs(&schema, "s")
            .unwrap()
            .into_iter()
            .map(|(_, _, t)| t)
            .collect();
        assert_eq!(
            targets,
            [
                RefTarget::Definition("A".into()),
                RefTarget::DeepPointer("/$defs/A/properties/b".into()),
                RefTarget::External("other.json".into()),
                RefTarget::Root,
            ]
        );
    }
}
