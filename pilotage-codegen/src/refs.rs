//! `$ref` resolution check. typify 0.8 resolves a `$ref` by its last path segment and panics
//! or silently misresolves when the target is missing or deeper than `#/$defs/<name>`; this
//! module checks every `$ref` against the document first, so the error names the pointer.

use serde_json::Value;

use crate::error::{unescape_pointer_token, CodegenError};
use crate::walk::walk;

/// How a `$ref` resolved.
#[derive(Debug, Clone, PartialEq, Eq)]
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

#[cfg(test)]
mod tests {
    use super::*;
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
