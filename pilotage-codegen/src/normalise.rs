//! Normalisations: rewrites of an in-memory *copy* of the schema into a form typify 0.8 reads
//! correctly. The vendored schema file is never touched, and the validators always use the
//! original, so every constraint a normalisation removes from the typify input is still
//! enforced by `T::validate` / `parse::<T>` in `pilotage-types`.
//!
//! Each normalisation is one named function with a doc comment saying which construct it
//! rewrites, why typify needs it, and what enforces the dropped constraint instead. They are
//! applied in the order of [`ALL`]; each returns the JSON Pointers it rewrote, and the
//! generated file lists them in its header so a reader sees exactly what was changed.

use serde_json::{json, Map, Value};

use crate::walk::walk_mut;

/// One named rewrite of the typify input.
#[derive(Clone, Copy)]
pub struct Normalisation {
    /// Stable name, used in the generated header and in tests.
    pub name: &'static str,
    /// The rewrite; returns the pointers of the subschemas it changed.
    pub apply: fn(&mut Value) -> Vec<String>,
}

/// Appends `note` to the object's `description` (or makes it the description), so that what a
/// normalisation changed is said in the generated doc comment.
fn append_to_description(object: &mut Map<String, Value>, note: &str) {
    let description = match object.get("description").and_then(Value::as_str) {
        Some(text) => format!("{text} {note}"),
        None => note.to_owned(),
    };
    object.insert("description".into(), Value::String(description));
}

/// Every normalisation, in the order they are applied.
#[rustfmt::skip]
pub const ALL: &[Normalisation] = &[
    Normalisation { name: "inline_deep_references", apply: inline_deep_references },
    Normalisation { name: "external_references_as_any", apply: external_references_as_any },
    Normalisation { name: "permissive_alternatives_as_any", apply: permissive_alternatives_as_any },
    Normalisation { name: "drop_conditionals", apply: drop_conditionals },
    Normalisation { name: "drop_presence_only_alternatives", apply: drop_presence_only_alternatives },
    Normalisation { name: "collapse_string_alternatives", apply: collapse_string_alternatives },
    Normalisation { name: "drop_defaults", apply: drop_defaults },
    Normalisation { name: "patterns_left_to_validator", apply: patterns_left_to_validator },
    Normalisation { name: "string_const_as_enum", apply: string_const_as_enum },
    Normalisation { name: "reduce_ref_refinements", apply: reduce_ref_refinements },
    Normalisation { name: "disjoint_alternatives_as_one_of", apply: disjoint_alternatives_as_one_of },
    Normalisation { name: "keep_unknown_members", apply: keep_unknown_members },
];

/// What [`apply_all`] did: for each normalisation that changed anything, its name and the
/// pointers it rewrote.
pub type Report = Vec<(&'static str, Vec<String>)>;

/// Applies every normalisation of [`ALL`] to `schema`, in order.
pub fn apply_all(schema: &mut Value) -> Report {
    ALL.iter()
        .filter_map(|n| {
            let changed = (n.apply)(schema);
            (!changed.is_empty()).then_some((n.name, changed))
        })
        .collect()
}

/// **`if`/`then`/`else` are removed** (and an `allOf` left empty by that is removed too).
///
/// Why: typify 0.8 panics on `if` (its converter has `todo!()` for conditionals).
/// Enforced instead by: the validator, e.g. `Outcome` ("error is null iff ok is true") and
/// `ExecuteResponse` ("diagnostics required when status is validation_error"). The generated
/// types keep the unconditional shape (`error: Option<String>`, `diagnostics` optional).
pub fn drop_conditionals(schema: &mut Value) -> Vec<String> {
    let mut changed = Vec::new();
    walk_mut(schema, "", &mut |object, at| {
        let mut touched = false;
        for key in ["if", "then", "else"] {
            touched |= object.remove(key).is_some();
        }
        if let Some(Value::Array(all_of)) = object.get_mut("allOf") {
            for member in all_of.iter_mut() {
                if let Value::Object(member) = member {
                    for key in ["if", "then", "else"] {
                        touched |= member.remove(key).is_some();
                    }
                }
            }
            all_of.retain(|member| member.as_object().is_none_or(|m| !m.is_empty()));
            if all_of.is_empty() {
                object.remove("allOf");
            }
        }
        if touched {
            changed.push(at.to_owned());
        }
    });
    changed
}

/// True when `schema` only asserts presence: it has no keywords but `required`, and
/// `properties`/`items` whose subschemas again only assert presence.
fn asserts_presence_only(schema: &Value) -> bool {
    let Value::Object(object) = schema else {
        return false;
    };
    !object.is_empty()
        && object.iter().all(|(key, value)| match key.as_str() {
            "required" => value.is_array(),
            "items" => asserts_presence_only(value),
            "properties" => value
                .as_object()
                .is_some_and(|props| props.values().all(asserts_presence_only)),
            _ => false,
        })
}

/// **`anyOf`/`oneOf` whose every branch only asserts presence are removed**: branches such as
/// `{"required": ["program"]}` or `{"properties": {"languages": {"items": {"required": [...]}}}}`
/// that declare no new member and no new type.
///
/// Why: typify 0.8 turns each branch into its own copy of the parent struct (an untagged enum
/// of near-identical structs: `Manifest`, `ExecuteRequest`, `InitializeMetaValue`), so one
/// wire shape gets several Rust types and the members become awkward to reach.
/// Enforced instead by: the validator (Part II 4.2's "every Language has a capability
/// declaration", Part II 6.5.1's "exactly one of program or program_ref", Part III 3.2's
/// "manifest or manifest_uri"). The typed struct keeps every member optional as declared.
pub fn drop_presence_only_alternatives(schema: &mut Value) -> Vec<String> {
    let mut changed = Vec::new();
    walk_mut(schema, "", &mut |object, at| {
        for key in ["anyOf", "oneOf"] {
            let presence_only = object
                .get(key)
                .and_then(Value::as_array)
                .is_some_and(|branches| !branches.is_empty() && branches.iter().all(asserts_presence_only));
            if presence_only {
                object.remove(key);
                changed.push(format!("{at}/{key}"));
            }
        }
    });
    changed
}

/// True when `schema` is `{"type": "string", ...}` with only string-level assertions.
fn is_plain_string_schema(schema: &Value) -> bool {
    let Value::Object(object) = schema else {
        return false;
    };
    object.get("type") == Some(&json!("string"))
        && object.keys().all(|key| {
            matches!(
                key.as_str(),
                "type"
                    | "enum"
                    | "const"
                    | "pattern"
                    | "minLength"
                    | "maxLength"
                    | "format"
                    | "description"
                    | "title"
                    | "$comment"
            )
        })
}

/// **An `anyOf` whose branches are all string schemas becomes one `{"type": "string"}`**
/// (for example `Retention`: the enum `none`/`session` or an ISO 8601 duration pattern).
///
/// Why: typify 0.8 merges such branches into a struct of flattened optional variants that
/// neither deserialises a bare string nor round-trips.
/// Enforced instead by: the validator (the enum values and the duration pattern). The Rust
/// type is a `String` newtype; its doc comment keeps the schema's description.
pub fn collapse_string_alternatives(schema: &mut Value) -> Vec<String> {
    let mut changed = Vec::new();
    walk_mut(schema, "", &mut |object, at| {
        let all_strings = object
            .get("anyOf")
            .and_then(Value::as_array)
            .is_some_and(|branches| branches.len() > 1 && branches.iter().all(is_plain_string_schema));
        if all_strings {
            object.remove("anyOf");
            object.insert("type".into(), json!("string"));
            changed.push(at.to_owned());
        }
    });
    changed
}

/// **`default` is removed, and stated in the description instead** ("Default when absent: ...").
///
/// Why: typify 0.8 makes a member with a `default` non-optional and fills the default in on
/// deserialisation, so a value read and written again gains members it never had (a
/// `LanguageEntry` without `trace_subprogram` comes back with `"trace_subprogram": "opaque"`).
/// Pilotage defaults are receiver-side interpretation, not wire content.
/// Enforced instead by: nothing needs enforcing; the default is documented on the member.
pub fn drop_defaults(schema: &mut Value) -> Vec<String> {
    let mut changed = Vec::new();
    walk_mut(schema, "", &mut |object, at| {
        if let Some(default) = object.remove("default") {
            let note = format!("Default when absent: `{default}`.");
            append_to_description(object, &note);
            changed.push(at.to_owned());
        }
    });
    changed
}

/// **A string `const` becomes a one-value string `enum`**: `{"const": "pilotage_get_guide"}`
/// becomes `{"type": "string", "enum": ["pilotage_get_guide"]}`.
///
/// Why: typify 0.8 maps an untyped `const` to `serde_json::Value` and a typed one to a plain
/// `String`, losing the constant either way (for example `LanguageEntry.guides`, bound to
/// `"pilotage_get_guide"` by Part III Section 4). A one-value enum puts the constant in the
/// Rust type: only that string deserialises, and it is what serialises.
/// Enforced instead by: nothing is dropped; both forms accept exactly the same instances.
pub fn string_const_as_enum(schema: &mut Value) -> Vec<String> {
    let mut changed = Vec::new();
    walk_mut(schema, "", &mut |object, at| {
        let Some(Value::String(constant)) = object.get("const").cloned() else {
            return;
        };
        let typed_other = object.get("type").is_some_and(|t| t != "string");
        if typed_other || object.contains_key("enum") {
            return;
        }
        object.remove("const");
        object.insert("type".into(), json!("string"));
        object.insert("enum".into(), json!([constant]));
        changed.push(at.to_owned());
    });
    changed
}

/// True when `object` declares members (`properties`) of an object instance.
fn declares_object_members(object: &Map<String, Value>) -> bool {
    object.contains_key("properties")
}

/// **An object schema with `properties` and no `additionalProperties` gets
/// `"additionalProperties": {}`**, which typify renders as a flattened
/// `extra: serde_json::Map<String, Value>` member.
///
/// Why: the schema never closes objects (receivers ignore unknown members, Part II 1.2), and
/// the typed round trip must be lossless: without this, typify's structs silently drop every
/// member they do not declare, so `from_value` then `to_value` loses data.
/// Enforced instead by: nothing is dropped; an absent `additionalProperties` already means
/// `{}` in JSON Schema. Schemas that do close objects (`additionalProperties: false`) are left
/// alone and become `#[serde(deny_unknown_fields)]` structs.
pub fn keep_unknown_members(schema: &mut Value) -> Vec<String> {
    let mut changed = Vec::new();
    walk_mut(schema, "", &mut |object, at| {
        if declares_object_members(object) && !object.contains_key("additionalProperties") {
            object.insert("additionalProperties".into(), json!({}));
            changed.push(at.to_owned());
        }
    });
    changed
}

/// True when `schema` only asserts things about a value's presence or absence and nothing
/// about its shape: `required`, or `not: {required: [...]}`.
fn is_presence_refinement(schema: &Value) -> bool {
    let Value::Object(object) = schema else {
        return false;
    };
    object.iter().all(|(key, value)| match key.as_str() {
        "required" => value.is_array(),
        "not" => value
            .as_object()
            .is_some_and(|not| not.len() == 1 && not.get("required").is_some_and(Value::is_array)),
        "description" | "$comment" => true,
        _ => false,
    })
}

/// **An `allOf` of one `$ref` plus presence-only refinements becomes that `$ref`**:
/// `{"allOf": [{"$ref": "#/$defs/Guide"}], "required": ["body"]}` (the fetched guide) and
/// `{"allOf": [{"$ref": "#/$defs/Guide"}, {"not": {"required": ["body"]}}]}` (an index entry).
///
/// Why: typify 0.8 merges such an `allOf` into a fresh copy of the referenced struct, with its
/// own copies of every nested enum (`GuideFetchResultGuide`, `GuideFetchResultGuideLevel`, ...),
/// so the same wire shape has several unrelated Rust types.
/// Enforced instead by: the validator (`body` present in the fetch form and absent in index
/// entries, Part III 4.1). The Rust type is the referenced one (`Guide`, `body: Option<String>`).
pub fn reduce_ref_refinements(schema: &mut Value) -> Vec<String> {
    let mut changed = Vec::new();
    walk_mut(schema, "", &mut |object, at| {
        let Some(Value::Array(all_of)) = object.get("allOf") else {
            return;
        };
        let refs: Vec<&Value> = all_of.iter().filter(|m| m.get("$ref").is_some()).collect();
        let [single_ref] = refs.as_slice() else { return };
        let Some(Value::String(target)) = single_ref.get("$ref").cloned() else {
            return;
        };
        let members_ok = all_of.iter().all(|m| {
            m.get("$ref").is_some() && m.as_object().is_some_and(|o| o.len() == 1) || is_presence_refinement(m)
        });
        let siblings_ok = object.iter().all(|(key, value)| match key.as_str() {
            "allOf" | "description" | "$comment" | "title" => true,
            "required" => value.is_array(),
            _ => false,
        });
        if members_ok && siblings_ok {
            object.remove("allOf");
            object.remove("required");
            object.insert("$ref".into(), Value::String(target));
            changed.push(at.to_owned());
        }
    });
    changed
}

/// The member names a branch of an `anyOf` requires, when the branch is an object schema.
fn required_members(branch: &Value) -> Option<Vec<&str>> {
    let object = branch.as_object()?;
    object.get("properties")?;
    let required = object.get("required")?.as_array()?;
    let names: Vec<&str> = required.iter().filter_map(Value::as_str).collect();
    (!names.is_empty()).then_some(names)
}

/// **An `anyOf` of object branches that each require members no other branch declares
/// becomes a `oneOf`** (`ProgramDeclaration`: `{argument, language}` or `{languages}`).
///
/// Why: typify 0.8 renders an `anyOf` of objects as a struct of flattened optional
/// sub-structs, each with its own catch-all map, which serialises members twice and hides
/// which form a value has. As a `oneOf` it becomes an untagged enum with one variant per
/// form. Every instance still deserialises: the variants keep unknown members, so a value
/// carrying both forms lands, losslessly, in the first.
/// Enforced instead by: the validator, which reads the original `anyOf`.
pub fn disjoint_alternatives_as_one_of(schema: &mut Value) -> Vec<String> {
    let mut changed = Vec::new();
    walk_mut(schema, "", &mut |object, at| {
        let Some(Value::Array(branches)) = object.get("anyOf") else {
            return;
        };
        if branches.len() < 2 {
            return;
        }
        let Some(required): Option<Vec<Vec<&str>>> = branches.iter().map(required_members).collect() else {
            return;
        };
        let declared_elsewhere = |index: usize, name: &str| {
            branches
                .iter()
                .enumerate()
                .any(|(other, branch)| other != index && branch.get("properties").and_then(|p| p.get(name)).is_some())
        };
        let disjoint = required
            .iter()
            .enumerate()
            .all(|(index, names)| names.iter().all(|name| !declared_elsewhere(index, name)));
        if disjoint {
            let branches = object.remove("anyOf").unwrap_or_default();
            object.insert("oneOf".into(), branches);
            changed.push(format!("{at}/anyOf"));
        }
    });
    changed
}

/// True when `schema` admits `null` through its `type` keyword or a `{"type": "null"}` branch.
fn admits_null_explicitly(schema: &Value) -> bool {
    let Value::Object(object) = schema else {
        return false;
    };
    let by_type = match object.get("type") {
        Some(Value::Array(types)) => types.iter().any(|t| t == "null"),
        Some(Value::String(t)) => t == "null",
        _ => false,
    };
    let by_branch = ["anyOf", "oneOf"].iter().any(|key| {
        object
            .get(*key)
            .and_then(Value::as_array)
            .is_some_and(|branches| branches.iter().any(|b| b.get("type") == Some(&json!("null"))))
    });
    by_type || by_branch
}

/// The pointers of the **optional members whose schema admits `null`** (for example
/// `CatalogEntry.output_schema`, `["object", "null"]`). Not a rewrite: the set travels as data
/// to [`crate::postpass`].
///
/// Why: typify 0.8 types such a member `Option<T>`, so an explicit `null` and an absent member
/// both become `None`, and re-serialising drops the `null` (a catalog entry whose output is
/// declared `null` is real data). The post-pass turns these members into `Option<Option<T>>`:
/// `None` absent, `Some(None)` null, `Some(Some(v))` a value. Members typed `{}` need nothing:
/// they are `Option<serde_json::Value>`, where `null` is a value.
pub fn nullable_optional_members(schema: &Value) -> Vec<String> {
    let mut found = Vec::new();
    crate::walk::walk(schema, "", &mut |object, at| {
        let required: Vec<String> = object
            .get("required")
            .and_then(Value::as_array)
            .map(|r| r.iter().filter_map(Value::as_str).map(str::to_owned).collect())
            .unwrap_or_default();
        let Some(Value::Object(properties)) = object.get("properties") else {
            return;
        };
        for (name, property) in properties {
            if !required.contains(name) && admits_null_explicitly(property) {
                found.push(format!("{at}/properties/{}", crate::error::escape_pointer_token(name)));
            }
        }
    });
    found
}

/// **A `$ref` to a location deeper than a definition is replaced by a copy of its target**
/// (`#/$defs/partition_list_output/properties/partitions`).
///
/// Why: typify 0.8 resolves a `$ref` by its last path segment, so a deep pointer silently
/// names the wrong type (here a definition called `partitions`) or none.
/// Enforced instead by: nothing is dropped; the copy is the same schema. Targets that are
/// themselves deep references are resolved first; a cycle is left as it is (typify reports it).
pub fn inline_deep_references(schema: &mut Value) -> Vec<String> {
    let document = schema.clone();
    let mut changed = Vec::new();
    walk_mut(schema, "", &mut |object, at| {
        for _ in 0..8 {
            let Some(Value::String(reference)) = object.get("$ref") else {
                return;
            };
            let Some(fragment) = reference.strip_prefix('#') else {
                return;
            };
            let depth = fragment.split('/').filter(|t| !t.is_empty()).count();
            if depth <= 2 {
                return;
            }
            let Some(Value::Object(target)) = document.pointer(fragment) else {
                return;
            };
            let reference = reference.clone();
            object.remove("$ref");
            for (key, value) in target {
                object.entry(key.clone()).or_insert_with(|| value.clone());
            }
            changed.push(format!("{at} ({reference})"));
        }
    });
    changed
}

/// **A `$ref` to another document is replaced by `{}`: any JSON value**, and its description
/// says so (`memory.page.schema.json#/$defs/path`, `profile.core.schema.json`, ...).
///
/// Why: the referenced documents are not available to the codegen, and typify 0.8 panics on
/// a reference it cannot resolve. The explicit fallback is `serde_json::Value`, so no member
/// is dropped: whatever the other document allows is kept as JSON. `cargo xtask regen` warns
/// about each one.
/// Enforced instead by: the validator treats the same references as accepting any value
/// (`SchemaValidators::unresolved_references` lists them); vendor the referenced documents to
/// check them.
pub fn external_references_as_any(schema: &mut Value) -> Vec<String> {
    let mut changed = Vec::new();
    walk_mut(schema, "", &mut |object, at| {
        let Some(Value::String(reference)) = object.get("$ref").cloned() else {
            return;
        };
        if reference.starts_with('#') {
            return;
        }
        object.remove("$ref");
        let note = format!(
            "Unresolved external reference `{reference}`: any JSON value (serde_json::Value) until that document is vendored."
        );
        append_to_description(object, &note);
        changed.push(format!("{at} ({reference})"));
    });
    changed
}

/// True when `schema` accepts every value: `true`, `{}`, or only annotations.
fn accepts_anything(schema: &Value) -> bool {
    match schema {
        Value::Bool(accepts) => *accepts,
        Value::Object(object) => object.keys().all(|k| {
            matches!(
                k.as_str(),
                "description" | "title" | "$comment" | "examples" | "default"
            )
        }),
        _ => false,
    }
}

/// **An `anyOf`/`oneOf` with a branch that accepts anything becomes that: any JSON value**
/// (for example `anyOf: [null, <external profile.core>, <external profile.team>]` once the
/// external references are `{}`).
///
/// Why: typify 0.8 renders such an `anyOf` as a struct of flattened optional parts (one of
/// them `()`), which neither reads nor writes the value faithfully.
/// Enforced instead by: the validator, which reads the original alternatives. The Rust type
/// is `serde_json::Value`, which holds every value the alternatives allow.
pub fn permissive_alternatives_as_any(schema: &mut Value) -> Vec<String> {
    let mut changed = Vec::new();
    walk_mut(schema, "", &mut |object, at| {
        for key in ["anyOf", "oneOf"] {
            let permissive = object
                .get(key)
                .and_then(Value::as_array)
                .is_some_and(|branches| branches.iter().any(accepts_anything));
            if permissive {
                // Keep what the dropped branches said about themselves (the fallback notes).
                let notes: Vec<String> = object
                    .remove(key)
                    .and_then(|branches| branches.as_array().cloned())
                    .unwrap_or_default()
                    .iter()
                    .filter_map(|branch| branch.get("description").and_then(Value::as_str).map(str::to_owned))
                    .collect();
                if !notes.is_empty() {
                    let description = object.get("description").and_then(Value::as_str).map(str::to_owned);
                    let joined = description.into_iter().chain(notes).collect::<Vec<_>>().join(" ");
                    object.insert("description".into(), Value::String(joined));
                }
                changed.push(format!("{at}/{key}"));
            }
        }
    });
    changed
}

/// **`pattern` is removed from string schemas** (`VersionString`, `LanguageIdentifier`, ...);
/// the pattern is stated in the description instead.
///
/// Why: typify 0.8 enforces a pattern at deserialisation with the `regress` regex engine,
/// which is the single most expensive crate of a downstream build (3.6 s of a 9.3 s cold
/// build of three derived tools, against a budget of 1.3 times serde + schemars alone), while
/// Pilotage's rule is that types carry the shape and validators the rules.
/// Enforced instead by: the validator (`T::validate`, and `parse`, which validates first).
/// A bare `from_value` accepts any string there, like any other member the validator checks.
pub fn patterns_left_to_validator(schema: &mut Value) -> Vec<String> {
    let mut changed = Vec::new();
    walk_mut(schema, "", &mut |object, at| {
        let Some(Value::String(pattern)) = object.remove("pattern") else {
            return;
        };
        let note = format!("Pattern (enforced by the validator): `{pattern}`.");
        append_to_description(object, &note);
        changed.push(at.to_owned());
    });
    changed
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(f: fn(&mut Value) -> Vec<String>, mut schema: Value) -> (Value, Vec<String>) {
        let changed = f(&mut schema);
        (schema, changed)
    }

    #[test]
    fn drop_conditionals_removes_if_then_else_and_empty_all_of() {
        let (out, changed) = run(
            drop_conditionals,
            json!({"$defs": {"O": {
                "type": "object", "properties": {"ok": {"type": "boolean"}},
                "allOf": [{"if": {"required": ["ok"]}, "then": {"required": ["x"]}, "else": {}}]
            }}}),
        );
        assert_eq!(
            out,
            json!({"$defs": {"O": {"type": "object", "properties": {"ok": {"type": "boolean"}}}}})
        );
        assert_eq!(changed, ["/$defs/O"]);
    }

    #[test]
    fn drop_presence_only_alternatives_keeps_shape_alternatives() {
        let (out, changed) = run(
            drop_presence_only_alternatives,
            json!({
                "properties": {"a": {}, "b": {}, "l": {"type": "array"}},
                "oneOf": [{"required": ["a"]}, {"required": ["b"]}],
                "anyOf": [{"required": ["a"]}, {"properties": {"l": {"items": {"required": ["c"]}}}}]
            }),
        );
        assert_eq!(out, json!({"properties": {"a": {}, "b": {}, "l": {"type": "array"}}}));
        assert_eq!(changed, ["/anyOf", "/oneOf"]);
        let shaped = json!({"anyOf": [{"required": ["a"]}, {"type": "string"}]});
        assert_eq!(run(drop_presence_only_alternatives, shaped.clone()).0, shaped);
    }

    #[test]
    fn collapse_string_alternatives_only_when_every_branch_is_a_string() {
        let (out, changed) = run(
            collapse_string_alternatives,
            json!({"description": "d", "anyOf": [
            {"type": "string", "enum": ["none"]}, {"type": "string", "pattern": "^P"}]}),
        );
        assert_eq!(out, json!({"description": "d", "type": "string"}));
        assert_eq!(changed, [""]);
        let mixed = json!({"anyOf": [{"type": "string"}, {"type": "integer"}]});
        assert_eq!(run(collapse_string_alternatives, mixed.clone()).0, mixed);
    }

    #[test]
    fn drop_defaults_documents_the_default() {
        let (out, _) = run(
            drop_defaults,
            json!({"properties": {
            "a": {"type": "string", "default": "x", "description": "A."}, "b": {"default": 3}}}),
        );
        assert_eq!(
            out["properties"]["a"],
            json!({"type": "string", "description": "A. Default when absent: `\"x\"`."})
        );
        assert_eq!(
            out["properties"]["b"],
            json!({"description": "Default when absent: `3`."})
        );
    }

    #[test]
    fn string_const_as_enum_rewrites_string_consts_only() {
        let (out, changed) = run(
            string_const_as_enum,
            json!({"properties": {
            "g": {"const": "pilotage_get_guide"}, "n": {"const": 1}, "t": {"type": "string", "const": "x"}}}),
        );
        assert_eq!(
            out["properties"]["g"],
            json!({"type": "string", "enum": ["pilotage_get_guide"]})
        );
        assert_eq!(out["properties"]["n"], json!({"const": 1}));
        assert_eq!(out["properties"]["t"], json!({"type": "string", "enum": ["x"]}));
        assert_eq!(changed.len(), 2);
    }

    #[test]
    fn reduce_ref_refinements_keeps_the_reference() {
        let (out, changed) = run(
            reduce_ref_refinements,
            json!({"properties": {
                "fetch": {"allOf": [{"$ref": "#/$defs/G"}], "required": ["body"]},
                "index": {"allOf": [{"$ref": "#/$defs/G"}, {"not": {"required": ["body"]}}]},
                "merge": {"allOf": [{"$ref": "#/$defs/G"}, {"properties": {"x": {}}}]}
            }}),
        );
        assert_eq!(out["properties"]["fetch"], json!({"$ref": "#/$defs/G"}));
        assert_eq!(out["properties"]["index"], json!({"$ref": "#/$defs/G"}));
        assert!(out["properties"]["merge"].get("allOf").is_some(), "a real merge stays");
        assert_eq!(changed.len(), 2);
    }

    #[test]
    fn disjoint_alternatives_become_one_of() {
        let disjoint = json!({"anyOf": [
            {"properties": {"argument": {}, "language": {}}, "required": ["argument", "language"]},
            {"properties": {"languages": {}}, "required": ["languages"]}]});
        let (out, changed) = run(disjoint_alternatives_as_one_of, disjoint);
        assert!(out.get("oneOf").is_some() && out.get("anyOf").is_none());
        assert_eq!(changed, ["/anyOf"]);
        let overlapping = json!({"anyOf": [
            {"properties": {"a": {}}, "required": ["a"]}, {"properties": {"a": {}, "b": {}}, "required": ["b"]}]});
        assert_eq!(run(disjoint_alternatives_as_one_of, overlapping.clone()).0, overlapping);
    }

    #[test]
    fn nullable_optional_members_are_found_only_when_optional_and_nullable() {
        let schema = json!({
            "properties": {
                "o": {"type": ["object", "null"]}, "r": {"type": ["string", "null"]}, "s": {"type": "string"},
                "b": {"anyOf": [{"type": "string"}, {"type": "null"}]},
                "nested": {"properties": {"n": {"type": "null"}}}},
            "required": ["r"]});
        assert_eq!(
            nullable_optional_members(&schema),
            ["/properties/b", "/properties/o", "/properties/nested/properties/n"]
        );
    }

    #[test]
    fn keep_unknown_members_opens_objects_explicitly_but_respects_closed_ones() {
        let (out, changed) = run(
            keep_unknown_members,
            json!({"$defs": {
            "Open": {"type": "object", "properties": {"a": {}}},
            "Closed": {"type": "object", "properties": {"a": {}}, "additionalProperties": false},
            "Bare": {"type": "object"}}}),
        );
        assert_eq!(out["$defs"]["Open"]["additionalProperties"], json!({}));
        assert_eq!(out["$defs"]["Closed"]["additionalProperties"], json!(false));
        assert!(out["$defs"]["Bare"].get("additionalProperties").is_none());
        assert_eq!(changed, ["/$defs/Open"]);
    }

    #[test]
    fn deep_references_are_inlined_and_external_ones_become_any() {
        let mut schema = json!({"$defs": {
            "out": {"properties": {"items": {"type": "array", "items": {"type": "string"}}}},
            "user": {"properties": {
                "deep": {"$ref": "#/$defs/out/properties/items", "description": "d"},
                "shallow": {"$ref": "#/$defs/out"},
                "far": {"$ref": "other.json#/$defs/x"}
            }}
        }});
        let deep = inline_deep_references(&mut schema);
        assert_eq!(deep, ["/$defs/user/properties/deep (#/$defs/out/properties/items)"]);
        assert_eq!(
            schema["$defs"]["user"]["properties"]["deep"],
            json!({"type": "array", "items": {"type": "string"}, "description": "d"})
        );
        assert_eq!(
            schema["$defs"]["user"]["properties"]["shallow"],
            json!({"$ref": "#/$defs/out"})
        );
        let far = external_references_as_any(&mut schema);
        assert_eq!(far, ["/$defs/user/properties/far (other.json#/$defs/x)"]);
        let far = &schema["$defs"]["user"]["properties"]["far"];
        assert!(far.get("$ref").is_none());
        assert!(far["description"].as_str().unwrap().contains("other.json#/$defs/x"));
    }

    #[test]
    fn permissive_alternatives_become_any() {
        let (out, changed) = run(
            permissive_alternatives_as_any,
            json!({"properties": {
            "p": {"description": "d", "anyOf": [{"type": "null"}, {"description": "external"}]},
            "q": {"anyOf": [{"type": "null"}, {"type": "string"}]}}}),
        );
        assert_eq!(out["properties"]["p"], json!({"description": "d external"}));
        assert!(out["properties"]["q"].get("anyOf").is_some());
        assert_eq!(changed, ["/properties/p/anyOf"]);
    }

    #[test]
    fn patterns_move_to_the_description() {
        let (out, changed) = run(
            patterns_left_to_validator,
            json!({"$defs": {"V": {"type": "string", "pattern": "^[0-9]+$", "description": "V."}}}),
        );
        assert_eq!(
            out["$defs"]["V"],
            json!({"type": "string", "description": "V. Pattern (enforced by the validator): `^[0-9]+$`."})
        );
        assert_eq!(changed, ["/$defs/V"]);
    }

    #[test]
    fn apply_all_reports_only_what_changed() {
        let mut schema = json!({"$defs": {"S": {"type": "string"}}});
        assert!(apply_all(&mut schema).is_empty());
        assert_eq!(schema, json!({"$defs": {"S": {"type": "string"}}}));
    }
}
