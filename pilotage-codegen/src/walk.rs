//! Walking every subschema of a JSON Schema (draft 2020-12 vocabulary, plus the draft-07
//! spellings `definitions`, `additionalItems` and array-form `items`), with the JSON Pointer
//! of each. The normalisations and the `$ref` check are written on top of this one walker.

use serde_json::{Map, Value};

use crate::error::escape_pointer_token;

/// Keywords whose value is one subschema.
const SINGLE: &[&str] = &[
    "additionalProperties",
    "additionalItems",
    "unevaluatedProperties",
    "unevaluatedItems",
    "propertyNames",
    "contains",
    "contentSchema",
    "not",
    "if",
    "then",
    "else",
];
/// Keywords whose value is an object of subschemas.
const MAP: &[&str] = &[
    "properties",
    "patternProperties",
    "dependentSchemas",
    "$defs",
    "definitions",
];
/// Keywords whose value is an array of subschemas.
const ARRAY: &[&str] = &["allOf", "anyOf", "oneOf", "prefixItems"];

/// Calls `visit` on every object-form subschema below and including `schema`, parents before
/// children, passing the subschema's JSON Pointer (relative to the document root when
/// `pointer` is the schema's own pointer). Boolean schemas have nothing to rewrite and are
/// skipped. Children are visited after `visit` returns, so a rewrite of a parent is seen by
/// the walk of its children.
pub fn walk_mut(schema: &mut Value, pointer: &str, visit: &mut dyn FnMut(&mut Map<String, Value>, &str)) {
    let Value::Object(object) = schema else {
        return;
    };
    visit(object, pointer);
    for (key, child) in object.iter_mut() {
        let key_pointer = format!("{pointer}/{}", escape_pointer_token(key));
        if SINGLE.contains(&key.as_str()) {
            walk_mut(child, &key_pointer, visit);
        } else if key == "items" {
            match child {
                Value::Array(items) => walk_array(items, &key_pointer, visit),
                other => walk_mut(other, &key_pointer, visit),
            }
        } else if MAP.contains(&key.as_str()) {
            if let Value::Object(members) = child {
                for (name, sub) in members.iter_mut() {
                    let sub_pointer = format!("{key_pointer}/{}", escape_pointer_token(name));
                    walk_mut(sub, &sub_pointer, visit);
                }
            }
        } else if ARRAY.contains(&key.as_str()) {
            if let Value::Array(items) = child {
                walk_array(items, &key_pointer, visit);
            }
        }
    }
}

fn walk_array(items: &mut [Value], pointer: &str, visit: &mut dyn FnMut(&mut Map<String, Value>, &str)) {
    for (index, item) in items.iter_mut().enumerate() {
        walk_mut(item, &format!("{pointer}/{index}"), visit);
    }
}

/// Keywords whose value is an instance value, not schemas: [`walk_objects_mut`] does not enter them.
const DATA: &[&str] = &["enum", "const", "default", "examples"];

/// Calls `visit` on every JSON object below and including `schema`, subschema or not (the
/// value of an unknown keyword too, which a `$ref` may point into), except inside instance
/// values (`enum`, `const`, `default`, `examples`); parents before children.
pub fn walk_objects_mut(schema: &mut Value, pointer: &str, visit: &mut dyn FnMut(&mut Map<String, Value>, &str)) {
    walk_objects(schema, pointer, false, visit);
}

/// [`walk_objects_mut`]; `names`: the object's keys are member or definition names (the value
/// of `properties`, `$defs`, ...), not keywords, so a member called `default` is entered.
fn walk_objects(schema: &mut Value, pointer: &str, names: bool, visit: &mut dyn FnMut(&mut Map<String, Value>, &str)) {
    match schema {
        Value::Object(object) => {
            if !names {
                visit(object, pointer);
            }
            for (key, child) in object.iter_mut() {
                if names || !DATA.contains(&key.as_str()) {
                    let child_names = !names && MAP.contains(&key.as_str());
                    walk_objects(
                        child,
                        &format!("{pointer}/{}", escape_pointer_token(key)),
                        child_names,
                        visit,
                    );
                }
            }
        }
        Value::Array(items) => {
            for (index, item) in items.iter_mut().enumerate() {
                walk_objects(item, &format!("{pointer}/{index}"), false, visit);
            }
        }
        _ => {}
    }
}

/// Read-only variant of [`walk_mut`].
pub fn walk(schema: &Value, pointer: &str, visit: &mut dyn FnMut(&Map<String, Value>, &str)) {
    // The schemas this crate reads are small (tens of KiB); a clone keeps one walker.
    let mut copy = schema.clone();
    walk_mut(&mut copy, pointer, &mut |object, at| visit(object, at));
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn every_object_is_visited_but_instance_values() {
        let mut schema = json!({
            "x-group": {"full": {"$ref": "#/a"}},
            "allOf": [{"enum": [{"$ref": "data"}]}],
            "const": {"$ref": "data"},
            "default": {"a": {}},
            "examples": [{}],
            "properties": {"default": {"$ref": "#/b"}, "enum": {}}
        });
        let mut seen = Vec::new();
        walk_objects_mut(&mut schema, "", &mut |_, at| seen.push(at.to_owned()));
        // Members named like instance keywords are schemas (modelparams' `default`).
        assert_eq!(
            seen,
            [
                "",
                "/allOf/0",
                "/properties/default",
                "/properties/enum",
                "/x-group",
                "/x-group/full"
            ]
        );
    }

    #[test]
    fn visits_every_subschema_with_its_pointer() {
        let schema = json!({
            "$defs": {"a/b": {"properties": {"x": {"items": {"type": "string"}}}}},
            "anyOf": [{"not": {"type": "null"}}, true],
            "items": [{"type": "integer"}],
            "if": {}, "then": {}, "else": {},
            "const": {"properties": {"not_a_schema": {}}}
        });
        let mut seen = Vec::new();
        walk(&schema, "", &mut |_, at| seen.push(at.to_owned()));
        assert_eq!(
            seen,
            [
                "",
                "/$defs/a~1b",
                "/$defs/a~1b/properties/x",
                "/$defs/a~1b/properties/x/items",
                "/anyOf/0",
                "/anyOf/0/not",
                "/else",
                "/if",
                "/items/0",
                "/then",
            ]
        );
    }
}
