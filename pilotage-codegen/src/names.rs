//! The name table: the Rust names of generated types and variants, as data.
//!
//! typify names an inline subschema after its parent and member (`RequestErrorErrorKind`,
//! `ProgramDeclarationVariant1LanguagesItem`); a table (JSON, checked in beside the code that
//! generates from the schema) gives the names a Rust user would write instead. It is applied
//! through typify's own mechanism: the `title` of the subschema in the codegen's in-memory
//! copy (typify prefers a `title` over the name it would suggest, for types and for the
//! variants of `anyOf`/`oneOf` enums). The vendored schema is never touched.
//!
//! ```json
//! {
//!   "types": { "/$defs/RequestError/properties/error/properties/kind": "RequestErrorKind" },
//!   "variants": { "/$defs/ProgramDeclaration/anyOf/0": "Single" }
//! }
//! ```
//!
//! Every entry is checked against the schema before anything is generated: a pointer that no
//! longer resolves (a stale entry after a spec bump), a name that is not a Rust type name, a
//! `variants` entry that is not a member of an `anyOf`/`oneOf`, a name that is also a
//! definition's name, or one name given to two subschemas that differ (typify would silently
//! merge them) is a [`CodegenError`] naming the table and the entry.

use std::collections::BTreeMap;

use serde_json::{Map, Value};

use crate::error::{unescape_pointer_token, CodegenError};

/// Keywords that annotate a subschema without changing what it accepts; two subschemas that
/// differ only in these may share one generated type.
const ANNOTATIONS: &[&str] = &["title", "description", "$comment", "examples", "default", "deprecated"];

/// A name table: [`NameTable::parse`], or [`NameTable::new`] and the `with_*` methods.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct NameTable {
    /// The table's display name (its path), used in errors.
    pub file: String,
    /// JSON Pointer (into the schema document) of a subschema → the name of its type.
    pub types: BTreeMap<String, String>,
    /// JSON Pointer of a member of an `anyOf`/`oneOf` → the name of its variant.
    pub variants: BTreeMap<String, String>,
}

impl NameTable {
    /// An empty table, named `file` in errors.
    pub fn new(file: impl Into<String>) -> Self {
        Self {
            file: file.into(),
            ..Self::default()
        }
    }

    /// Names the type of the subschema at `pointer` (a JSON Pointer into the schema) `name`.
    #[must_use]
    pub fn with_type(mut self, pointer: impl Into<String>, name: impl Into<String>) -> Self {
        self.types.insert(pointer.into(), name.into());
        self
    }

    /// Names the variant of the `anyOf` / `oneOf` member at `pointer` `name`.
    #[must_use]
    pub fn with_variant(mut self, pointer: impl Into<String>, name: impl Into<String>) -> Self {
        self.variants.insert(pointer.into(), name.into());
        self
    }

    /// Parses a table: a JSON object with optional `types` and `variants` objects mapping JSON
    /// Pointers to names (and an optional `$comment`).
    pub fn parse(bytes: &[u8], file: &str) -> Result<Self, CodegenError> {
        let value: Value =
            serde_json::from_slice(bytes).map_err(|e| CodegenError::new(file, "", format!("not valid JSON: {e}")))?;
        let Value::Object(object) = value else {
            return Err(CodegenError::new(file, "", "a name table must be a JSON object"));
        };
        let mut table = Self {
            file: file.to_owned(),
            ..Self::default()
        };
        for (key, section) in &object {
            let target = match key.as_str() {
                "types" => &mut table.types,
                "variants" => &mut table.variants,
                "$comment" => continue,
                other => {
                    return Err(CodegenError::new(
                        file,
                        format!("/{other}"),
                        "unknown section: a name table has `types` and `variants`",
                    ))
                }
            };
            let Value::Object(entries) = section else {
                return Err(CodegenError::new(
                    file,
                    format!("/{key}"),
                    "must be an object of JSON Pointer → name",
                ));
            };
            for (pointer, name) in entries {
                let Value::String(name) = name else {
                    return Err(CodegenError::new(
                        file,
                        format!("/{key}/{}", crate::error::escape_pointer_token(pointer)),
                        "a name must be a string",
                    ));
                };
                target.insert(pointer.clone(), name.clone());
            }
        }
        Ok(table)
    }

    /// Whether the table names nothing.
    pub fn is_empty(&self) -> bool {
        self.types.is_empty() && self.variants.is_empty()
    }
}

/// A name the table gave, for the generated file's header: (pointer, name).
pub type Applied = Vec<(String, String)>;

/// Whether `name` is a Rust type name in `PascalCase` (ASCII letters and digits, starting
/// with an upper-case letter).
fn is_type_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars.next().is_some_and(|c| c.is_ascii_uppercase()) && chars.all(|c| c.is_ascii_alphanumeric())
}

/// The definition's key and the rest of the pointer, for a pointer inside `$defs` or
/// `definitions`.
fn split_definition(pointer: &str) -> Option<(String, &str)> {
    let rest = pointer
        .strip_prefix("/$defs/")
        .or_else(|| pointer.strip_prefix("/definitions/"))?;
    let (def, tail) = rest.split_once('/').map_or((rest, ""), |(d, t)| (d, t));
    Some((unescape_pointer_token(def), tail))
}

/// The subschema without its annotations, for comparing what two subschemas accept.
fn without_annotations(value: &Value) -> Value {
    match value {
        Value::Object(object) => Value::Object(
            object
                .iter()
                .filter(|(k, _)| !ANNOTATIONS.contains(&k.as_str()))
                .map(|(k, v)| (k.clone(), without_annotations(v)))
                .collect::<Map<_, _>>(),
        ),
        Value::Array(items) => Value::Array(items.iter().map(without_annotations).collect()),
        other => other.clone(),
    }
}

/// Checks every entry of `table` against `original` (the schema document) and gives each
/// named subschema of `defs` (the codegen's copy of the definitions, keyed by definition
/// name, before any normalisation) its name as `title`. `def_type_names` are the Rust names
/// of the definitions themselves, which no entry may take.
pub fn apply(
    table: &NameTable,
    original: &Value,
    defs: &mut Map<String, Value>,
    def_type_names: &[String],
) -> Result<Applied, CodegenError> {
    let file = table.file.as_str();
    let error = |pointer: &str, message: String| CodegenError::new(file, pointer.to_owned(), message);
    let mut applied = Vec::new();
    let mut by_name: BTreeMap<&str, Vec<(&str, Value)>> = BTreeMap::new();
    let entries = table
        .types
        .iter()
        .map(|(p, n)| (p, n, false))
        .chain(table.variants.iter().map(|(p, n)| (p, n, true)));
    for (pointer, name, variant) in entries {
        if !is_type_name(name) {
            return Err(error(
                pointer,
                format!("`{name}` is not a Rust type name (PascalCase letters and digits)"),
            ));
        }
        let Some(target) = original.pointer(pointer) else {
            return Err(error(
                pointer,
                format!("stale entry: the schema has nothing at this pointer, so `{name}` names nothing; update or remove the entry"),
            ));
        };
        let Some((def, tail)) = split_definition(pointer) else {
            return Err(error(
                pointer,
                "only subschemas inside `$defs` (or `definitions`) can be named".to_owned(),
            ));
        };
        if tail.is_empty() {
            return Err(error(
                pointer,
                format!("a definition's type is named after the definition (`{def}`); name a subschema inside it"),
            ));
        }
        if !target.is_object() {
            return Err(error(pointer, "only an object-form subschema can be named".to_owned()));
        }
        if target.get("$ref").is_some() {
            return Err(error(
                pointer,
                "a `$ref` has the type of what it references; name the referenced subschema".to_owned(),
            ));
        }
        let parent_keyword = tail.rsplit('/').nth(1);
        let in_alternatives = matches!(parent_keyword, Some("anyOf" | "oneOf"))
            && tail.rsplit('/').next().is_some_and(|i| i.parse::<usize>().is_ok());
        if variant && !in_alternatives {
            return Err(error(
                pointer,
                "a `variants` entry must be a member of an `anyOf` or `oneOf`".to_owned(),
            ));
        }
        if !variant && def_type_names.iter().any(|d| d == name) {
            return Err(error(
                pointer,
                format!("`{name}` is already the type of a definition; typify would merge the two"),
            ));
        }
        let copy = defs
            .get_mut(&def)
            .and_then(|d| d.pointer_mut(&format!("/{tail}")))
            .and_then(Value::as_object_mut)
            .ok_or_else(|| error(pointer, "not found in the codegen's copy of the definitions".to_owned()))?;
        copy.insert("title".to_owned(), Value::String(name.clone()));
        if !variant {
            by_name
                .entry(name.as_str())
                .or_default()
                .push((pointer.as_str(), without_annotations(target)));
        }
        applied.push((pointer.clone(), name.clone()));
    }
    for (name, places) in &by_name {
        if let Some(((first, shape), rest)) = places.split_first() {
            if let Some((other, _)) = rest.iter().find(|(_, s)| s != shape) {
                return Err(error(
                    other,
                    format!("`{name}` is also given to {first}, which accepts different values; one name, one type"),
                ));
            }
        }
    }
    applied.sort();
    Ok(applied)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn schema() -> Value {
        json!({"$defs": {
            "A": {"properties": {
                "kind": {"type": "string", "enum": ["x", "y"]},
                "level": {"type": "string", "enum": ["s", "f"], "description": "one"},
                "or": {"anyOf": [{"type": "object"}, {"type": "string"}]}
            }},
            "B": {"properties": {
                "level": {"type": "string", "enum": ["s", "f"], "description": "two"},
                "other": {"type": "string", "enum": ["s", "f", "n"]}
            }}
        }})
    }

    fn run(table: &str) -> Result<(Applied, Map<String, Value>), CodegenError> {
        let table = NameTable::parse(table.as_bytes(), "names.json")?;
        let original = schema();
        let mut defs = original["$defs"].as_object().unwrap().clone();
        let applied = apply(&table, &original, &mut defs, &["A".to_owned(), "B".to_owned()])?;
        Ok((applied, defs))
    }

    #[test]
    fn names_become_titles_of_the_copy() {
        let (applied, defs) = run(r#"{"types": {"/$defs/A/properties/kind": "Kind"},
            "variants": {"/$defs/A/properties/or/anyOf/0": "Object"}}"#)
        .unwrap();
        assert_eq!(defs["A"]["properties"]["kind"]["title"], "Kind");
        assert_eq!(defs["A"]["properties"]["or"]["anyOf"][0]["title"], "Object");
        assert_eq!(applied.len(), 2);
    }

    #[test]
    fn equal_subschemas_may_share_a_name_differing_ones_may_not() {
        let shared = run(r#"{"types": {"/$defs/A/properties/level": "Level", "/$defs/B/properties/level": "Level"}}"#);
        assert!(shared.is_ok(), "descriptions differ only: {shared:?}");
        let error = run(r#"{"types": {"/$defs/A/properties/level": "Level", "/$defs/B/properties/other": "Level"}}"#)
            .unwrap_err();
        assert!(error.message.contains("different values"), "{error}");
    }

    #[test]
    fn every_bad_entry_is_an_error_naming_it() {
        let cases = [
            (r#"{"types": {"/$defs/A/properties/gone": "Gone"}}"#, "stale entry"),
            (r#"{"types": {"/$defs/Gone/properties/x": "Gone"}}"#, "stale entry"),
            (
                r#"{"types": {"/$defs/A/properties/kind": "kind_lower"}}"#,
                "not a Rust type name",
            ),
            (r#"{"types": {"/$defs/A": "Other"}}"#, "named after the definition"),
            (
                r#"{"types": {"/$defs/A/properties/kind": "B"}}"#,
                "already the type of a definition",
            ),
            (
                r#"{"variants": {"/$defs/A/properties/kind": "K"}}"#,
                "member of an `anyOf`",
            ),
            (r#"{"typez": {}}"#, "unknown section"),
        ];
        for (table, expected) in cases {
            let error = run(table).unwrap_err();
            assert!(error.message.contains(expected), "{table}: {error}");
            assert_eq!(error.file, "names.json");
        }
    }
}
