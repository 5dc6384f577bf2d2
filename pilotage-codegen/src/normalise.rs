//! Normalisations: rewrites of an in-memory *copy* of the schema into a form typify 0.8 reads
//! correctly. The vendored schema file is never touched, and the validators always use the
//! original, so every constraint a normalisation removes from the typify input is still
//! enforced by `T::validate` / `parse::<T>` in `pilotage-types`.
//!
//! Each normalisation is one named function with a doc comment saying which construct it
//! rewrites, why typify needs it, and what enforces the dropped constraint instead. They are
//! applied in the order of [`ALL`] (after [`rebase_references`]); each returns the JSON
//! Pointers it rewrote, and the generated file lists them in its header so a reader sees
//! exactly what was changed. Every one has a unit test below.
//!
//! | name | construct rewritten | typify's problem |
//! |---|---|---|
//! | [`local_references_as_pointers`] | `$ref` to an anchor, to a nested `$id`, or relative to one | resolves by last segment only |
//! | [`drop_reference_siblings`] | a `$ref`'s siblings, in draft-04/06/07 | merges what the draft ignores |
//! | [`rebase_references`] | `#`, `#/properties/..`, `#/definitions/a/..` | panics on a target it has not got |
//! | [`drop_ill_typed_annotations`] | `"deprecated": "use x"`, `"examples": "Yes"` | not a schema it can read |
//! | [`boolean_exclusive_bounds_as_numbers`] | draft-04 `"exclusiveMinimum": true` | not a schema it can read |
//! | [`hoist_deep_references`] | `$ref` deeper than a definition, to a recursive target | `$ref ... is missing` |
//! | [`inline_deep_references`] | `$ref` deeper than a definition | resolves by last segment |
//! | [`external_references_as_any`] | `$ref` to another document | panics; becomes `Value` |
//! | [`permissive_alternatives_as_any`] | `anyOf`/`oneOf` with an accept-all branch | unfaithful struct |
//! | [`drop_conditionals`] | `if`/`then`/`else` | `todo!()` |
//! | [`pattern_members_as_maps`] | `patternProperties` | key newtypes need `regress`; merges assert |
//! | [`drop_presence_only_alternatives`] | `anyOf`/`oneOf` of `required` only | one struct per branch |
//! | [`collapse_string_alternatives`] | `anyOf` of string schemas | no bare string |
//! | [`drop_defaults`] | `default` | fills defaults in (not lossless) |
//! | [`patterns_left_to_validator`] | `pattern` | needs `regress` |
//! | [`string_const_as_enum`] | string `const` | loses the constant |
//! | [`reduce_ref_refinements`] | `allOf` of one `$ref` + `required`/`not` | copies the struct |
//! | [`drop_negations`] | `not` | panics; exponential merges |
//! | [`disjoint_alternatives_as_one_of`] | `anyOf` of disjoint objects | flattened optional parts |
//! | [`keep_unknown_members`] | objects without `additionalProperties` | drops unknown members |
//! | [`formats_left_to_validator`] | `format` of [`TYPED_FORMATS`] | needs `chrono`/`uuid`; rejects annotated values |
//! | [`drop_contains`] | `contains`, `minContains`, `maxContains` | `unhandled array validation` |
//! | [`scalar_alternatives_as_their_type`] | `oneOf`/`anyOf` of bounds under one scalar `type` | `invalid (or unexpected) schema` |
//! | [`prefix_items_as_tuples`] | 2020-12 `prefixItems` | ignores it, applies `items` to every item |
//! | [`loose_tuples_as_lists`] | array-form `items` that is no fixed tuple | `unhandled array validation` |
//! | [`mixed_enums_as_any`] | untyped `enum` of several JSON types | panics |
//! | [`indistinct_enums_as_strings`] | string `enum` (or `oneOf` / `anyOf` of string constants) with values of one Rust name | panics |
//! | [`drop_types_beside_references`] | `type` beside `$ref` | asserts the target's `type` is the same |
//! | [`plain_merge_members`] | annotations of `allOf` members; `propertyNames` | merge assertions |
//! | [`large_merges_as_any`] | a merge with more than [`MAX_MERGED_ALTERNATIVES`] alternatives | exponential merge |
//! | [`recursive_merges_as_any`] | a merge that inlines its own definition | stack overflow (abort) |
//! | [`nullable_definitions_split`] | a definition of one named schema or `null` | defines a type twice |
//! | [`drop_colliding_titles`] | a nested `title` naming another type's name | defines a type twice |
//! | [`annotated_references_as_alternatives`] | `$ref` beside annotations (`description`, `title`) | asserts inside a merge |
//!
//! Together, [`patterns_left_to_validator`], [`pattern_members_as_maps`] and
//! [`formats_left_to_validator`] keep generated code's dependencies to `pilotage-types`,
//! `serde` and `serde_json`: typify would otherwise use `regress` for patterns (of values and
//! of member names) and `chrono`/`uuid` for formats.

use serde_json::{json, Map, Value};

use crate::walk::walk_mut;

/// One named rewrite of the typify input.
#[derive(Clone, Copy)]
#[non_exhaustive]
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
    Normalisation { name: "drop_ill_typed_annotations", apply: drop_ill_typed_annotations },
    Normalisation { name: "boolean_exclusive_bounds_as_numbers", apply: boolean_exclusive_bounds_as_numbers },
    Normalisation { name: "hoist_deep_references", apply: hoist_deep_references },
    Normalisation { name: "inline_deep_references", apply: inline_deep_references },
    Normalisation { name: "external_references_as_any", apply: external_references_as_any },
    Normalisation { name: "permissive_alternatives_as_any", apply: permissive_alternatives_as_any },
    Normalisation { name: "drop_conditionals", apply: drop_conditionals },
    Normalisation { name: "pattern_members_as_maps", apply: pattern_members_as_maps },
    Normalisation { name: "drop_presence_only_alternatives", apply: drop_presence_only_alternatives },
    Normalisation { name: "collapse_string_alternatives", apply: collapse_string_alternatives },
    Normalisation { name: "drop_defaults", apply: drop_defaults },
    Normalisation { name: "patterns_left_to_validator", apply: patterns_left_to_validator },
    Normalisation { name: "string_const_as_enum", apply: string_const_as_enum },
    Normalisation { name: "reduce_ref_refinements", apply: reduce_ref_refinements },
    Normalisation { name: "drop_negations", apply: drop_negations },
    Normalisation { name: "disjoint_alternatives_as_one_of", apply: disjoint_alternatives_as_one_of },
    Normalisation { name: "keep_unknown_members", apply: keep_unknown_members },
    Normalisation { name: "formats_left_to_validator", apply: formats_left_to_validator },
    Normalisation { name: "loose_tuples_as_lists", apply: loose_tuples_as_lists },
    Normalisation { name: "drop_contains", apply: drop_contains },
    Normalisation { name: "scalar_alternatives_as_their_type", apply: scalar_alternatives_as_their_type },
    Normalisation { name: "mixed_enums_as_any", apply: mixed_enums_as_any },
    Normalisation { name: "indistinct_enums_as_strings", apply: indistinct_enums_as_strings },
    Normalisation { name: "drop_types_beside_references", apply: drop_types_beside_references },
    Normalisation { name: "plain_merge_members", apply: plain_merge_members },
    Normalisation { name: "large_merges_as_any", apply: large_merges_as_any },
    Normalisation { name: "recursive_merges_as_any", apply: recursive_merges_as_any },
    Normalisation { name: "nullable_definitions_split", apply: nullable_definitions_split },
    Normalisation { name: "drop_colliding_titles", apply: drop_colliding_titles },
    Normalisation { name: "annotated_references_as_alternatives", apply: annotated_references_as_alternatives },
    Normalisation { name: "members_named_like_definitions", apply: members_named_like_definitions },
];

/// Every normalisation's name, in the order applied: [`local_references_as_pointers`] (run
/// first, by [`crate::generate_types`], on the whole document, since it needs every `$id`),
/// [`rebase_references`] (run next, since it needs the root type's name), then [`ALL`].
pub fn names() -> Vec<&'static str> {
    [
        "local_references_as_pointers",
        "rebase_references",
        "drop_reference_siblings",
        "prefix_items_as_tuples",
    ]
    .into_iter()
    .chain(ALL.iter().map(|n| n.name))
    .collect()
}

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

/// True when the ECMA-262 regular expression `pattern` matches every string (as a search,
/// which is how `patternProperties` applies it): `""`, `".*"`, `"^.*"`, `".*$"`, `"^"`, `"$"`.
/// `"^.*$"` is not among them: `.` does not match a line terminator, so a member name with a
/// newline escapes it.
fn matches_every_name(pattern: &str) -> bool {
    matches!(
        pattern,
        "" | "^" | "$" | ".*" | "^.*" | ".*$" | "(.*)" | "^(.*)" | "[\\s\\S]*" | "^[\\s\\S]*$"
    )
}

/// **`patternProperties` is folded into `additionalProperties`**: the members not named in
/// `properties` become one map, whose value schema is the one schema every such member can
/// have, or `{}` (any JSON value) when they can have several. The candidates are the
/// `patternProperties` schemas plus, unless one pattern matches every name
/// (`matches_every_name`), the `additionalProperties` schema (`{}` when absent, none when
/// `false`). So `{"patternProperties": {"^x-": S}, "additionalProperties": false}` is a map of
/// `S`, and `{"patternProperties": {"^x-": S}}` a map of any value.
///
/// Why: typify 0.8 types a pattern-keyed map's keys as a newtype checked with the `regress`
/// crate (a dependency generated code must not have), ignores `patternProperties` beside
/// `properties` (a closed struct then rejects the pattern members the schema allows), and
/// asserts in merges that objects have no `patternProperties`.
/// Enforced instead by: the validator, which reads the original `patternProperties` (names
/// and values); the map's keys are `String`s and its values at least as permissive.
pub fn pattern_members_as_maps(schema: &mut Value) -> Vec<String> {
    let mut changed = Vec::new();
    walk_mut(schema, "", &mut |object, at| {
        let Some(Value::Object(patterns)) = object.get("patternProperties") else {
            return;
        };
        if patterns.is_empty() {
            object.remove("patternProperties");
            changed.push(format!("{at}/patternProperties"));
            return;
        }
        let every_name = patterns.keys().any(|p| matches_every_name(p));
        let mut candidates: Vec<Value> = Vec::new();
        for value in patterns.values() {
            if !candidates.contains(value) {
                candidates.push(value.clone());
            }
        }
        if !every_name {
            match object.get("additionalProperties") {
                None | Some(Value::Bool(true)) => {
                    if !candidates.iter().any(accepts_anything) {
                        candidates.push(json!({}));
                    }
                }
                Some(Value::Bool(false)) => {}
                Some(other) => {
                    if !candidates.contains(other) {
                        candidates.push(other.clone());
                    }
                }
            }
        }
        let value = match candidates.as_slice() {
            [one] => one.clone(),
            [] => Value::Bool(false),
            _ => json!({}),
        };
        object.remove("patternProperties");
        object.insert("additionalProperties".into(), value);
        changed.push(format!("{at}/patternProperties"));
    });
    changed
}

/// True when typify 0.8 gives `schema` a type of its own, named after where it is: a struct
/// (`properties`, `required`), an enum (`enum`, `oneOf`, `anyOf`), a merge (`allOf`) or a
/// constrained string newtype (`minLength`, `maxLength`, `pattern`).
fn is_named_kind(schema: &Map<String, Value>) -> bool {
    [
        "properties",
        "required",
        "enum",
        "oneOf",
        "anyOf",
        "allOf",
        "minLength",
        "maxLength",
        "pattern",
    ]
    .iter()
    .any(|k| schema.contains_key(*k))
}

/// Whether JSON Pointer `pointer` is `target` or inside it.
fn is_within(pointer: &str, target: &str) -> bool {
    pointer == target || pointer.strip_prefix(target).is_some_and(|rest| rest.starts_with('/'))
}

/// `stem`, or `stem` + `separator` + 2, 3, ...: the first whose Rust type name is not yet in
/// `taken`, which then holds it.
fn unique_name(taken: &mut std::collections::BTreeSet<String>, stem: &str, separator: &str) -> String {
    let mut name = stem.to_owned();
    let mut n = 2;
    while !taken.insert(crate::render::rust_type_name(&name)) {
        name = format!("{stem}{separator}{n}");
        n += 1;
    }
    name
}

/// Whether the branch `v` of an `anyOf` / `oneOf` admits only `null`: `{"type": "null"}`,
/// `{"const": null}` or `{"enum": [null]}`.
fn is_null_branch(v: &Value) -> bool {
    v.get("type") == Some(&json!("null"))
        || v.get("const") == Some(&Value::Null)
        || v.get("enum") == Some(&json!([null]))
}

/// **A definition that is one named schema or `null` gets that schema as a definition of its
/// own, `<Name>Value`**: `pathConfig: {"oneOf": [{"type": "object", "properties": ..},
/// {"type": "null"}]}` becomes `pathConfig: {"oneOf": [{"$ref": "#/$defs/pathConfigValue"},
/// {"type": "null"}]}` plus `pathConfigValue`, and the same for `anyOf`, for a `null` branch
/// written `{"const": null}` or `{"enum": [null]}` (webpack's `Layer`: `{"anyOf": [{"enum":
/// [null]}, {"type": "string", "minLength": 1}]}`), and for a `type` of
/// one type and `"null"` (`{"type": ["object", "null"], "properties": ..}`). The Rust types
/// are `PathConfig(Option<PathConfigValue>)` and the struct `PathConfigValue`.
///
/// Why: typify 0.8 names the inner struct or enum after the definition and then wraps the
/// `Option` in a newtype of the same name, so the name is defined twice.
/// Enforced instead by: nothing changes but a name; the value is the same.
pub fn nullable_definitions_split(schema: &mut Value) -> Vec<String> {
    let Some(Value::Object(defs)) = schema.get_mut("$defs") else {
        return Vec::new();
    };
    let mut taken: std::collections::BTreeSet<String> = defs.keys().map(|k| crate::render::rust_type_name(k)).collect();
    let mut added: Vec<(String, Value)> = Vec::new();
    let mut changed = Vec::new();
    for (key, def) in defs.iter_mut() {
        let Value::Object(object) = def else { continue };
        let mut inner: Option<Value> = None;
        for keyword in ["oneOf", "anyOf"] {
            let Some(Value::Array(branches)) = object.get(keyword) else {
                continue;
            };
            if branches.len() != 2 || object.contains_key("properties") {
                continue;
            }
            let nulls = branches.iter().filter(|b| is_null_branch(b)).count();
            let Some(Value::Object(named)) = branches.iter().find(|b| !is_null_branch(b)) else {
                continue;
            };
            if nulls != 1 || named.contains_key("$ref") || !is_named_kind(named) {
                continue;
            }
            inner = Some(Value::Object(named.clone()));
            let mut branches = branches.clone();
            for branch in branches.iter_mut() {
                if !is_null_branch(branch) {
                    *branch = Value::Null; // placeholder, replaced below
                }
            }
            object.insert(keyword.to_owned(), Value::Array(branches));
            break;
        }
        if inner.is_none() {
            let types = object
                .get("type")
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_default();
            if types.len() == 2
                && types.contains(&json!("null"))
                && is_named_kind(object)
                && !object.contains_key("$ref")
            {
                let other = types
                    .iter()
                    .find(|t| **t != json!("null"))
                    .cloned()
                    .unwrap_or(Value::Null);
                let mut moved = Map::new();
                for (k, v) in std::mem::take(object) {
                    if matches!(
                        k.as_str(),
                        "description" | "title" | "$comment" | "$id" | "$schema" | "$anchor" | "examples"
                    ) {
                        object.insert(k, v);
                    } else {
                        moved.insert(k, v);
                    }
                }
                moved.insert("type".into(), other);
                // `null` is the outer branch's now: an `enum` listing it (`["http", null]`)
                // would leave the inner type nullable, and typify would name both `..Value`.
                if let Some(Value::Array(values)) = moved.get_mut("enum") {
                    values.retain(|value| !value.is_null());
                }
                inner = Some(Value::Object(moved));
                object.insert("oneOf".into(), json!([Value::Null, {"type": "null"}]));
            }
        }
        let Some(inner) = inner else { continue };
        let name = unique_name(&mut taken, &format!("{key}Value"), "");
        let reference = json!({"$ref": format!("#/$defs/{}", crate::error::escape_pointer_token(&name))});
        for keyword in ["oneOf", "anyOf"] {
            if let Some(Value::Array(branches)) = object.get_mut(keyword) {
                for branch in branches.iter_mut().filter(|b| b.is_null()) {
                    *branch = reference.clone();
                }
            }
        }
        changed.push(format!("/$defs/{}", crate::error::escape_pointer_token(key)));
        added.push((name, inner));
    }
    for (name, inner) in added {
        defs.insert(name, inner);
    }
    changed
}

/// **A `title` below a definition is removed when its type name is the name of a definition
/// (the root's included), or the name of an earlier titled subschema of another shape**:
/// typify names the type of a titled subschema after its title, so a nested `{"title":
/// "Alias"}` in a schema whose root is `Alias` defines one Rust name twice, and a second
/// nested schema titled `Rule` silently gets the first one's type (typify reuses a name it
/// has seen). Subschemas of one title and one shape (annotations aside) keep sharing a type. The subschema then gets the name typify makes from where it is (`AliasValue`,
/// `ConfigRulesItem`). Titles of definitions themselves are not used for names and are kept;
/// the title text is kept in the description.
///
/// Why: typify 0.8 does not make the names it takes from titles unique: generated code with
/// a type defined twice does not compile, and a reused name gives a member the wrong type.
/// Enforced instead by: nothing is constrained by a title; only a Rust name changes.
pub fn drop_colliding_titles(schema: &mut Value) -> Vec<String> {
    use std::collections::{BTreeMap, BTreeSet};
    /// Keywords that do not change a subschema's type.
    const ANNOTATIONS: &[&str] = &[
        "title",
        "description",
        "$comment",
        "examples",
        "default",
        "deprecated",
        "readOnly",
        "writeOnly",
        "markdownDescription",
    ];
    let Some(Value::Object(defs)) = schema.get_mut("$defs") else {
        return Vec::new();
    };
    let def_names: BTreeSet<String> = defs.keys().map(|k| crate::render::rust_type_name(k)).collect();
    // The shape (annotations aside) of the first nested subschema that takes each name from
    // its title: typify gives every later one of that name the first one's type.
    let shape = |object: &Map<String, Value>| -> Value {
        let mut shape = object.clone();
        for key in ANNOTATIONS {
            shape.remove(*key);
        }
        Value::Object(shape)
    };
    // Compared without copying: a large document has many titled subschemas inside others.
    let same_shape = |first: &Value, object: &Map<String, Value>| -> bool {
        let Value::Object(first) = first else { return false };
        let keys = |m: &Map<String, Value>| m.keys().filter(|k| !ANNOTATIONS.contains(&k.as_str())).count();
        keys(first) == keys(object)
            && object
                .iter()
                .filter(|(k, _)| !ANNOTATIONS.contains(&k.as_str()))
                .all(|(k, v)| first.get(k) == Some(v))
    };
    let mut first: BTreeMap<String, Value> = BTreeMap::new();
    for (key, def) in defs.iter_mut() {
        let root = format!("/$defs/{}", crate::error::escape_pointer_token(key));
        walk_mut(def, &root, &mut |object, at| {
            if at == root {
                return;
            }
            if let Some(Value::String(title)) = object.get("title") {
                first
                    .entry(crate::render::rust_type_name(title))
                    .or_insert_with(|| shape(object));
            }
        });
    }
    let mut changed = Vec::new();
    for (key, def) in defs.iter_mut() {
        let root = format!("/$defs/{}", crate::error::escape_pointer_token(key));
        walk_mut(def, &root, &mut |object, at| {
            if at == root {
                return;
            }
            let Some(Value::String(title)) = object.get("title") else {
                return;
            };
            let name = crate::render::rust_type_name(title);
            if def_names.contains(&name) || first.get(&name).is_some_and(|f| !same_shape(f, object)) {
                let title = title.clone();
                object.remove("title");
                if object.get("description").and_then(Value::as_str) != Some(title.as_str()) {
                    let description = match object.get("description").and_then(Value::as_str) {
                        Some(text) => format!("{title}: {text}"),
                        None => title,
                    };
                    object.insert("description".into(), Value::String(description));
                }
                changed.push(format!("{at}/title"));
            }
        });
    }
    changed
}

/// **A member's schema whose type typify would name like a definition gets a `title` naming
/// it `<Name>Value`**: typify names the type of a member's subschema after its place
/// (`operation`'s member `reply`, `{"oneOf": [{"$ref": "#/$defs/Reference"}, {"$ref":
/// "#/$defs/operationReply"}]}`, is `OperationReply`), which is also the name of the
/// definition `operationReply` (AsyncAPI 3.0). Followed through nested members
/// (`properties`), whose types are named after their parent's in turn.
///
/// Why: typify 0.8 does not make the names it makes from places unique against the
/// definitions' names: the generated code defines the name twice and does not compile.
/// Enforced instead by: nothing is constrained by a title; only a Rust name changes.
pub fn members_named_like_definitions(schema: &mut Value) -> Vec<String> {
    use heck::ToSnakeCase;
    use std::collections::BTreeSet;
    /// Whether typify gives the member's schema a type of its own, named after its place: not
    /// a reference, even one wrapped in an `anyOf` / `oneOf` / `allOf` of it alone (an
    /// annotated reference, [`annotated_references_as_alternatives`]) or of it and `null`
    /// (apollo-router's `{"anyOf": [{"$ref": "#/definitions/TlsSupergraph"}, {"type":
    /// "null"}]}`), which is the referenced type or an `Option` of it.
    fn named_here(object: &Map<String, Value>) -> bool {
        let wrapped_reference = ["anyOf", "oneOf", "allOf"].iter().any(|key| {
            object.get(*key).and_then(Value::as_array).is_some_and(|members| {
                members.iter().filter(|m| m.get("$ref").is_some()).count() == 1
                    && members.iter().all(|m| m.get("$ref").is_some() || is_null_branch(m))
            })
        });
        !object.contains_key("title") && !object.contains_key("$ref") && !wrapped_reference && is_named_kind(object)
    }
    fn visit(
        object: &mut Map<String, Value>,
        type_name: &str,
        at: &str,
        defs: &BTreeSet<String>,
        taken: &mut BTreeSet<String>,
        changed: &mut Vec<String>,
    ) {
        let Some(Value::Object(members)) = object.get_mut("properties") else {
            return;
        };
        for (member, schema) in members.iter_mut() {
            let Value::Object(schema) = schema else { continue };
            if !named_here(schema) {
                continue;
            }
            let pointer = format!("{at}/properties/{}", crate::error::escape_pointer_token(member));
            let mut name = crate::render::rust_type_name(&format!("{type_name}_{}", member.to_snake_case()));
            if defs.contains(&name) {
                name = unique_name(taken, &format!("{name}Value"), "");
                schema.insert("title".into(), Value::String(name.clone()));
                changed.push(pointer.clone());
            }
            visit(schema, &name, &pointer, defs, taken, changed);
        }
    }
    let Some(Value::Object(defs)) = schema.get("$defs") else {
        return Vec::new();
    };
    let names: BTreeSet<String> = defs.keys().map(|k| crate::render::rust_type_name(k)).collect();
    let mut taken = names.clone();
    crate::walk::walk(&schema["$defs"], "", &mut |object, _| {
        if let Some(Value::String(title)) = object.get("title") {
            taken.insert(crate::render::rust_type_name(title));
        }
    });
    let Some(Value::Object(defs)) = schema.get_mut("$defs") else {
        return Vec::new();
    };
    let mut changed = Vec::new();
    for (key, def) in defs.iter_mut() {
        let Value::Object(def) = def else { continue };
        let at = format!("/$defs/{}", crate::error::escape_pointer_token(key));
        visit(
            def,
            &crate::render::rust_type_name(key),
            &at,
            &names,
            &mut taken,
            &mut changed,
        );
    }
    changed
}

/// **A `$ref` that names a location of the same document other than by a plain JSON Pointer
/// fragment is rewritten as one** (`"#/definitions/b"`): a plain-name fragment naming an
/// `$anchor` (or a draft-07 `$id: "#foo"`), a reference to a subschema with its own `$id`
/// (`"other.json"` where a subschema has `"$id": "https://example.com/other.json"`), a
/// reference relative to such a nested `$id` (`"#/definitions/x"` inside it, which names the
/// nested resource's member, not the document's), and an absolute URI of the document's own
/// `$id`. References resolve as the validators resolve them
/// ([`crate::validators::resources`]); one to another document is left as it is (and becomes
/// `serde_json::Value` by [`external_references_as_any`]), one that resolves to nothing is
/// left for the `$ref` check to report. Applied to typify's copy of the whole document
/// before the definitions are taken from it; returns the pointers of the rewritten `$ref`s.
///
/// Why: typify 0.8 (and this crate's `$ref` check) reads a `$ref` as a JSON Pointer into the
/// document root, by its last segment; any other spelling it cannot follow.
/// Enforced instead by: nothing is lost; the reference names the same schema.
pub fn local_references_as_pointers(schema: &mut Value) -> Vec<String> {
    use crate::validators::resources::{join, Document, Draft, Index, Location};
    /// The URI the document is known by when its root has no `$id`.
    const RETRIEVAL: &str = "https://pilotage.invalid/schema.json";
    let docs = [Document {
        uri: RETRIEVAL.to_owned(),
        file: String::new(),
        value: schema.clone(),
    }];
    // A document the index cannot read (an `$id` that is no URI) keeps its references: the
    // `$ref` check and the validators report what is wrong with it.
    let Ok(index) = Index::build(&docs, Draft::default()) else {
        return Vec::new();
    };
    let mut rewrites: Vec<(String, String, String)> = Vec::new();
    crate::walk::walk(schema, "", &mut |object, at| {
        let Some(Value::String(reference)) = object.get("$ref") else {
            return;
        };
        let here = Location {
            doc: 0,
            pointer: at.to_owned(),
        };
        let (_, base) = index.scope(&here);
        let base = if base.is_empty() { RETRIEVAL.to_owned() } else { base };
        let Some(uri) = join(&base, reference) else {
            return;
        };
        let Ok(Some(location)) = index.locate(&docs, &uri) else {
            return;
        };
        let rewritten = format!("#{}", location.pointer);
        if rewritten != *reference {
            rewrites.push((at.to_owned(), reference.clone(), rewritten));
        }
    });
    let mut changed = Vec::new();
    for (at, reference, rewritten) in rewrites {
        let target = if at.is_empty() {
            Some(&mut *schema)
        } else {
            schema.pointer_mut(&at)
        };
        if let Some(Value::Object(object)) = target {
            object.insert("$ref".into(), Value::String(rewritten));
            changed.push(format!("{at} ({reference})"));
        }
    }
    changed
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

/// True when `schema` only asserts presence (or absence): it has no keywords but `required`,
/// `properties`/`items` whose subschemas again only assert presence, an `allOf` of such
/// schemas, a `not` of one, and annotations (`description`, `title`, `$comment`). OpenAPI
/// 3.0's `SchemaXORContent`: `{"oneOf": [{"required": ["schema"]}, {"required": ["content"],
/// "description": "..", "allOf": [{"not": {"required": ["style"]}}, ..]}]}`.
fn asserts_presence_only(schema: &Value) -> bool {
    let Value::Object(object) = schema else {
        return false;
    };
    let mut asserts = false;
    let each = object.iter().all(|(key, value)| match key.as_str() {
        "description" | "title" | "$comment" => true,
        "required" => {
            asserts = true;
            value.is_array()
        }
        "items" | "not" => {
            asserts = true;
            asserts_presence_only(value)
        }
        "properties" => {
            asserts = true;
            value
                .as_object()
                .is_some_and(|props| props.values().all(asserts_presence_only))
        }
        "allOf" => {
            asserts = true;
            value
                .as_array()
                .is_some_and(|members| !members.is_empty() && members.iter().all(asserts_presence_only))
        }
        _ => false,
    });
    each && asserts
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
/// `extra: serde_json::Map<String, Value>` member, unless it merges (`allOf`) a member that
/// carries such a map itself.
///
/// Why: the schema never closes objects (receivers ignore unknown members, Part II 1.2), and
/// the typed round trip must be lossless: without this, typify's structs silently drop every
/// member they do not declare, so `from_value` then `to_value` loses data.
/// The exception is typify's merge: when it merges two objects, each member that only one of
/// them declares is wrapped as `{"allOf": [<the other's additionalProperties>, member]}`
/// unless that `additionalProperties` is `true` or absent (typify-impl merge.rs,
/// `merge_additional`), and each wrapper is merged again when converted. With a map on both
/// sides of `{"allOf": [{"$ref": "#/$defs/Chain-1"}], "properties": {"type": ...}}`, and
/// `Chain-1` reaching `Chain-2` again through its members, the merges multiply past any time
/// budget (SchemaStore's accelerator.json: over 60 s, against 47 ms). The merged type keeps
/// its map all the same: typify gives a merge the map of the member that has one.
/// Enforced instead by: nothing is dropped; an absent `additionalProperties` already means
/// `{}` in JSON Schema. Schemas that do close objects (`additionalProperties: false`) are left
/// alone and become `#[serde(deny_unknown_fields)]` structs.
pub fn keep_unknown_members(schema: &mut Value) -> Vec<String> {
    let mut merges_a_map = std::collections::BTreeSet::new();
    crate::walk::walk(schema, "", &mut |object, at| {
        if gets_unknown_members(object) && merges_unknown_members(schema, object) {
            merges_a_map.insert(at.to_owned());
        }
    });
    let mut changed = Vec::new();
    walk_mut(schema, "", &mut |object, at| {
        if gets_unknown_members(object) && !merges_a_map.contains(at) {
            object.insert("additionalProperties".into(), json!({}));
            changed.push(at.to_owned());
        }
    });
    changed
}

/// True when [`keep_unknown_members`] would give `object` a map of unknown members.
fn gets_unknown_members(object: &Map<String, Value>) -> bool {
    declares_object_members(object) && !object.contains_key("additionalProperties")
}

/// True when a member of `object`'s `allOf` (itself, or the definition its `$ref` names,
/// resolved by last segment as typify does) has, or will get, an `additionalProperties`
/// schema that is no boolean.
fn merges_unknown_members(root: &Value, object: &Map<String, Value>) -> bool {
    let Some(Value::Array(members)) = object.get("allOf") else {
        return false;
    };
    members.iter().any(|member| {
        let resolved = match member.get("$ref").and_then(Value::as_str) {
            Some(reference) => definition_by_last_segment(reference).and_then(|name| root.get("$defs")?.get(name)),
            None => Some(member),
        };
        resolved.and_then(Value::as_object).is_some_and(|target| {
            gets_unknown_members(target) || target.get("additionalProperties").is_some_and(Value::is_object)
        })
    })
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

/// How many deep references [`inline_deep_references`] copies at most; the rest are left as
/// they are (and [`MAX_SCHEMA_LOCATIONS`] bounds what the copies add up to).
pub const MAX_INLINED_REFERENCES: usize = 2_000;

/// The most subschemas typify's copy may have after the normalisations: a bound on what
/// copying references can expand a schema to, checked by [`check_size`].
pub const MAX_SCHEMA_LOCATIONS: usize = 200_000;

/// `Err(message)` when `schema` has more than [`MAX_SCHEMA_LOCATIONS`] subschemas.
pub fn check_size(schema: &Value) -> Result<(), String> {
    fn count(value: &Value, total: &mut usize) {
        match value {
            Value::Object(members) => {
                *total += 1;
                members.values().for_each(|v| count(v, total));
            }
            Value::Array(items) => items.iter().for_each(|v| count(v, total)),
            _ => {}
        }
    }
    let mut total = 0;
    count(schema, &mut total);
    if total > MAX_SCHEMA_LOCATIONS {
        return Err(format!(
            "the normalised schema has {total} objects, more than the limit of {MAX_SCHEMA_LOCATIONS} \
             (pilotage_codegen::normalise::MAX_SCHEMA_LOCATIONS): references expand it too far"
        ));
    }
    Ok(())
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
            if changed.len() >= MAX_INLINED_REFERENCES {
                return;
            }
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
            // A reference inside its own target (or an ancestor of it) would be copied into
            // itself without end: left as it is.
            if is_within(at, fragment) {
                return;
            }
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

/// **An annotation whose value is not of the type JSON Schema gives it is removed from
/// typify's copy**: `title`, `description` and `$comment` that are no string, `deprecated`,
/// `readOnly` and `writeOnly` that are no boolean, `examples` that is no array
/// (`"deprecated": "Emojis are now supported natively"`, `"examples": "Yes"`).
///
/// Why: typify 0.8 reads schemas with schemars 0.8, which refuses the whole schema ("data did
/// not match any variant of untagged enum Schema").
/// Enforced instead by: nothing: annotations assert nothing, and the validator reads the
/// original.
pub fn drop_ill_typed_annotations(schema: &mut Value) -> Vec<String> {
    let mut changed = Vec::new();
    walk_mut(schema, "", &mut |object, at| {
        let ill_typed: Vec<String> = object
            .iter()
            .filter(|(key, value)| match key.as_str() {
                "title" | "description" | "$comment" => !value.is_string(),
                "deprecated" | "readOnly" | "writeOnly" => !value.is_boolean(),
                "examples" => !value.is_array(),
                _ => false,
            })
            .map(|(key, _)| key.clone())
            .collect();
        for key in ill_typed {
            object.remove(&key);
            changed.push(format!("{at}/{}", crate::error::escape_pointer_token(&key)));
        }
    });
    changed
}

/// **Draft-04's boolean `exclusiveMinimum` / `exclusiveMaximum` take the later drafts' form**:
/// `{"minimum": 0, "exclusiveMinimum": true}` becomes `{"exclusiveMinimum": 0}`; `false`, or
/// `true` without its bound, is removed.
///
/// Why: typify 0.8 reads schemas with schemars 0.8, which wants a number there and refuses
/// the whole schema.
/// Enforced instead by: nothing changes in meaning; the validator reads the original in its draft.
pub fn boolean_exclusive_bounds_as_numbers(schema: &mut Value) -> Vec<String> {
    let mut changed = Vec::new();
    walk_mut(schema, "", &mut |object, at| {
        for (exclusive, bound) in [("exclusiveMinimum", "minimum"), ("exclusiveMaximum", "maximum")] {
            let Some(Value::Bool(on)) = object.get(exclusive).cloned() else {
                continue;
            };
            object.remove(exclusive);
            if on {
                if let Some(limit) = object.remove(bound) {
                    object.insert(exclusive.to_owned(), limit);
                }
            }
            changed.push(format!("{at}/{exclusive}"));
        }
    });
    changed
}

/// **A `$ref` deeper than a definition whose target is recursive (contains a `$ref` to itself
/// or to an enclosing schema, directly or through other deep targets), or lies where typify
/// does not look (under an unknown keyword: `{"$ref": "#/definitions/1edb/full"}`), makes its
/// target a definition of its own**: the subschema at `/$defs/config/properties/overrides`
/// moves to `$defs/config_properties_overrides`, and its old place and every `$ref` to it
/// become `{"$ref": "#/$defs/config_properties_overrides"}` (a `$ref` into the moved subschema
/// follows it). Repeated while a moved subschema brings such references into view (at most
/// [`MAX_HOIST_ROUNDS`] times). Runs before [`inline_deep_references`], which copies the other
/// deep targets.
///
/// Why: typify 0.8 resolves a `$ref` by its last path segment, and fails ("$ref ... is
/// missing") or names the wrong type; a recursive target cannot be copied (each copy holds
/// the reference again), and a copy of a subschema under an unknown keyword would not be read.
/// Enforced instead by: nothing is dropped; the schema is the same, with one more name.
pub fn hoist_deep_references(schema: &mut Value) -> Vec<String> {
    let mut report = Vec::new();
    for _ in 0..MAX_HOIST_ROUNDS {
        let moved = hoist_deep_references_once(schema);
        if moved.is_empty() {
            break;
        }
        report.extend(moved);
    }
    report.sort();
    report
}

/// How many rounds [`hoist_deep_references`] makes at most.
pub const MAX_HOIST_ROUNDS: usize = 16;

fn hoist_deep_references_once(schema: &mut Value) -> Vec<String> {
    fn is_deep(fragment: &str) -> bool {
        fragment.starts_with("/$defs/") && fragment.split('/').filter(|t| !t.is_empty()).count() > 2
    }
    // Every same-document `$ref` typify reads: (where it is, the pointer it names); and every
    // subschema typify reads.
    let mut references: Vec<(String, String)> = Vec::new();
    let mut read: std::collections::HashSet<String> = std::collections::HashSet::new();
    crate::walk::walk(schema, "", &mut |object, at| {
        read.insert(at.to_owned());
        if let Some(Value::String(reference)) = object.get("$ref") {
            if let Some(fragment) = reference.strip_prefix('#') {
                references.push((at.to_owned(), fragment.to_owned()));
            }
        }
    });
    let mut targets: Vec<&str> = references
        .iter()
        .map(|(_, fragment)| fragment.as_str())
        .filter(|fragment| {
            is_deep(fragment)
                && schema
                    .pointer(fragment)
                    .is_some_and(|t| t.is_object() || t.is_boolean())
        })
        .collect();
    targets.sort_unstable();
    targets.dedup();
    // The deep targets each target's subtree refers to; a target is recursive when it can
    // reach itself.
    let edges: Vec<Vec<usize>> = targets
        .iter()
        .map(|target| {
            references
                .iter()
                .filter(|(at, _)| is_within(at, target))
                .filter_map(|(_, fragment)| targets.binary_search(&fragment.as_str()).ok())
                .collect()
        })
        .collect();
    let chosen: Vec<&str> = (0..targets.len())
        .filter(|&start| {
            if !read.contains(targets[start]) {
                return true;
            }
            let mut seen = vec![false; targets.len()];
            let mut stack = edges[start].clone();
            while let Some(node) = stack.pop() {
                if node == start {
                    return true;
                }
                if !std::mem::replace(&mut seen[node], true) {
                    stack.extend(&edges[node]);
                }
            }
            false
        })
        .map(|i| targets[i])
        .collect();
    if chosen.is_empty() {
        return Vec::new();
    }
    // Names: the target's tokens after `$defs`, joined by `_`, unique among the definitions'
    // Rust names.
    let mut taken: std::collections::BTreeSet<String> = schema
        .get("$defs")
        .and_then(Value::as_object)
        .map(|defs| defs.keys().map(|k| crate::render::rust_type_name(k)).collect())
        .unwrap_or_default();
    let mut moves: Vec<(String, String)> = Vec::new();
    for fragment in &chosen {
        let stem = fragment
            .split('/')
            .skip(2)
            .map(crate::error::unescape_pointer_token)
            .collect::<Vec<_>>()
            .join("_");
        let name = unique_name(&mut taken, &stem, "_");
        moves.push((
            fragment.to_string(),
            format!("/$defs/{}", crate::error::escape_pointer_token(&name)),
        ));
    }
    // Deepest first: a target inside another is replaced by its `$ref` before the outer moves.
    moves.sort_by_key(|(fragment, _)| std::cmp::Reverse(fragment.matches('/').count()));
    let mut hoisted: Vec<(String, Value)> = Vec::new();
    for (fragment, to) in &moves {
        let Some(place) = schema.pointer_mut(fragment) else {
            continue;
        };
        let name = crate::error::unescape_pointer_token(&to["/$defs/".len()..]);
        hoisted.push((name, std::mem::replace(place, json!({ "$ref": format!("#{to}") }))));
    }
    if let Some(Value::Object(defs)) = schema.get_mut("$defs") {
        defs.extend(hoisted);
    }
    // Every `$ref` to a moved target, or into one (the deepest that holds it), follows it;
    // those not yet in typify's view too, for a later round.
    crate::walk::walk_objects_mut(schema, "", &mut |object, _| {
        let Some(Value::String(reference)) = object.get_mut("$ref") else {
            return;
        };
        let Some(fragment) = reference.strip_prefix('#') else {
            return;
        };
        if let Some((from, to)) = moves.iter().find(|(from, _)| is_within(fragment, from)) {
            *reference = format!("#{to}{}", &fragment[from.len()..]);
        }
    });
    moves
        .into_iter()
        .map(|(from, to)| format!("{from} (to {to})"))
        .collect()
}

/// **A `$ref` beside annotations only becomes a one-branch `anyOf`**:
/// `{"$ref": "#/$defs/expression", "description": "When to run."}` becomes
/// `{"anyOf": [{"$ref": "#/$defs/expression"}], "description": "When to run."}`. Applied last.
/// A keyword no draft defines (an extension: vector's `_metadata`, `x-order`) counts as an
/// annotation (`asserts_or_applies`).
///
/// Why: typify 0.8 asserts (`merged_schema.metadata.is_none()`, convert.rs:1448) when it
/// merges an object (`allOf`, or `anyOf`/`oneOf` beside `properties`) one of whose members is
/// a `$ref` with a description or title. A one-branch `anyOf` is the same type to it: the
/// generated types do not change (a unit test compares them), and the merge no longer asserts.
/// Enforced instead by: nothing is dropped; the schema means the same.
pub fn annotated_references_as_alternatives(schema: &mut Value) -> Vec<String> {
    let mut changed = Vec::new();
    walk_mut(schema, "", &mut |object, at| {
        if !matches!(object.get("$ref"), Some(Value::String(_)))
            || object.len() < 2
            || !object.keys().all(|k| k == "$ref" || !asserts_or_applies(k))
        {
            return;
        }
        if let Some(reference) = object.remove("$ref") {
            object.insert("anyOf".into(), json!([{ "$ref": reference }]));
            changed.push(at.to_owned());
        }
    });
    changed
}

/// The keywords of drafts 4 to 2020-12 that assert, apply subschemas, identify or define, beside
/// 2020-12's validation and applicator vocabularies (`crate::validators::VALIDATION`,
/// `crate::validators::APPLICATOR`).
const OTHER_SCHEMA_KEYWORDS: &[&str] = &[
    "$ref",
    "$dynamicRef",
    "$recursiveRef",
    "$anchor",
    "$dynamicAnchor",
    "$recursiveAnchor",
    "$defs",
    "definitions",
    "$vocabulary",
    "format",
    "additionalItems",
    "dependencies",
    "unevaluatedItems",
    "unevaluatedProperties",
    "contentEncoding",
    "contentMediaType",
    "contentSchema",
];

/// Whether the keyword `key` asserts, applies subschemas, identifies or defines in some draft,
/// where an annotation (`description`) or an extension (`_metadata`, `x-order`) does none of
/// these.
fn asserts_or_applies(key: &str) -> bool {
    crate::validators::VALIDATION.contains(&key)
        || crate::validators::APPLICATOR.contains(&key)
        || OTHER_SCHEMA_KEYWORDS.contains(&key)
}

/// **A `$ref` to another document is replaced by `{}`: any JSON value**, and its description
/// says so (`memory.page.schema.json#/$defs/path`, `profile.core.schema.json`, ...).
///
/// Why: typify 0.8 reads one document and panics on a reference it cannot resolve. The
/// explicit fallback is `serde_json::Value`, so no member is dropped: whatever the other
/// document allows is kept as JSON. The codegen warns about each one the validators could not
/// resolve either.
/// Enforced instead by: the validator, which follows the reference into the other document
/// when it is in the schema set (`pilotage codegen A.json B.json`, `--map URI=FILE`,
/// `Builder::document`), and otherwise accepts any value there and lists the reference in
/// `Validators::unresolved_references`.
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
            "Reference to another document `{reference}`: typed as any JSON value (serde_json::Value); the validator checks it against that document when it is in the schema set, and accepts any value when it is not."
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

/// Annotation keywords: they describe, and typify reads them as docs only.
const ANNOTATIONS: &[&str] = &[
    "title",
    "description",
    "$comment",
    "examples",
    "default",
    "deprecated",
    "readOnly",
    "writeOnly",
    "markdownDescription",
    "$schema",
    "$id",
    "id",
];

/// **In draft-04, -06 and -07, the siblings of a `$ref` are removed from typify's copy**, as
/// those drafts ignore them: `{"$ref": "#/definitions/permission", "items": {}}` becomes
/// `{"$ref": "#/definitions/permission"}`. Annotations (for the docs), `definitions` / `$defs`
/// and any sibling another `$ref` points into stay. Run by [`crate::generate_types`] after
/// [`rebase_references`], only for a document whose `$schema` (or the settings' default
/// draft) is one of those drafts.
///
/// Why: typify 0.8 reads a `$ref`'s siblings as a merge with its target, which is not what
/// the draft says, and stops on some (`not yet implemented: invalid (or unexpected) schema`).
/// Enforced instead by: nothing is dropped the draft does not drop; the validator follows the
/// draft too.
pub fn drop_reference_siblings(schema: &mut Value) -> Vec<String> {
    let mut targets: Vec<String> = Vec::new();
    crate::walk::walk(schema, "", &mut |object, _| {
        if let Some(Value::String(reference)) = object.get("$ref") {
            if let Some(fragment) = reference.strip_prefix('#') {
                targets.push(fragment.to_owned());
            }
        }
    });
    let mut changed = Vec::new();
    walk_mut(schema, "", &mut |object, at| {
        if !matches!(object.get("$ref"), Some(Value::String(_))) {
            return;
        }
        let dropped: Vec<String> = object
            .keys()
            .filter(|key| {
                !matches!(key.as_str(), "$ref" | "$defs" | "definitions") && !ANNOTATIONS.contains(&key.as_str())
            })
            .filter(|key| {
                let place = format!("{at}/{}", crate::error::escape_pointer_token(key));
                !targets.iter().any(|t| is_within(t, &place))
            })
            .cloned()
            .collect();
        for key in dropped {
            object.remove(&key);
            changed.push(format!("{at}/{}", crate::error::escape_pointer_token(&key)));
        }
    });
    changed
}

/// **Local references the copy no longer resolves are rebased onto it**: in typify's copy the
/// definitions of `definitions` (draft-07) are entries of `$defs`, and the document root is the
/// definition `root` (its title, [`crate::render::root_type`]). So `#` becomes
/// `#/$defs/<root>`, a pointer into the root (`#/properties/a`) becomes
/// `#/$defs/<root>/properties/a`, and a deep pointer into `definitions`
/// (`#/definitions/a/properties/b`) becomes `#/$defs/a/properties/b` (then inlined by
/// [`inline_deep_references`]). Shallow `#/definitions/<name>` references are left as they
/// are: typify resolves them by their last segment.
///
/// Why: typify 0.8 panics (`$ref # is missing`, `unresolved reference`) on a reference whose
/// target is not a definition of its input.
/// Enforced instead by: nothing is dropped; each reference names the same schema as before.
pub fn rebase_references(schema: &mut Value, root: Option<&str>) -> Vec<String> {
    let mut changed = Vec::new();
    // Every object, not only the subschemas typify reads: a subschema kept under an unknown
    // keyword (`{"full": {..}}`) may be the target of a `$ref`, and becomes a definition of
    // its own ([`hoist_deep_references`]) with its references already rebased.
    crate::walk::walk_objects_mut(schema, "", &mut |object, at| {
        let Some(Value::String(reference)) = object.get("$ref") else {
            return;
        };
        let Some(fragment) = reference.strip_prefix('#') else {
            return;
        };
        let tokens: Vec<&str> = fragment.split('/').skip(1).collect();
        let rebased = match (tokens.first().copied(), root) {
            (None, Some(root)) => format!("#/$defs/{}", crate::error::escape_pointer_token(root)),
            (Some("definitions"), _) if tokens.len() > 2 => format!("#/$defs{}", &fragment["/definitions".len()..]),
            (Some("$defs" | "definitions"), _) | (None, None) => return,
            (Some(_), Some(root)) => format!("#/$defs/{}{fragment}", crate::error::escape_pointer_token(root)),
            (Some(_), None) => return,
        };
        changed.push(format!("{at} ({reference})"));
        object.insert("$ref".into(), Value::String(rebased));
    });
    changed
}

/// **`not` is removed** (`{"type": "string", "not": {"enum": [..]}}`, `{"not": {"required": [..]}}`);
/// a schema left empty by that accepts any value.
///
/// Why: typify 0.8 panics on most negations (`unhandled not schema`), and merging a `not`
/// into `allOf`/`oneOf` branches is exponential there (Azure Functions' `function.json`
/// grows past gigabytes of memory). A negation only excludes values: the type without it
/// holds every instance the schema allows.
/// Enforced instead by: the validator, which reads the original `not`.
pub fn drop_negations(schema: &mut Value) -> Vec<String> {
    let mut changed = Vec::new();
    walk_mut(schema, "", &mut |object, at| {
        if object.remove("not").is_some() {
            changed.push(format!("{at}/not"));
        }
    });
    changed
}

/// The string formats typify 0.8 gives a type other than `String`.
pub const TYPED_FORMATS: &[&str] = &["date", "date-time", "uuid", "ip", "ipv4", "ipv6"];

/// **A string `format` that typify would type (`date-time`, `date`, `uuid`, `ip`, `ipv4`,
/// `ipv6`: [`TYPED_FORMATS`]) is removed from typify's copy**; the format is stated in the
/// description instead. Other formats are left: typify ignores them on strings (`uri`,
/// `email`) and reads the integer ones (`uint32`, `int64`) as the width of the integer.
///
/// Why: typify 0.8 types `date`/`date-time` as `chrono` types and `uuid` as `uuid::Uuid`, so
/// generated code would need crates the user never asked for, and its `IpAddr` types reject
/// at deserialisation strings the validator accepts where `format` is an annotation. The
/// member is a `String`, which round-trips every instance losslessly.
/// Enforced instead by: the validator, which reads the original `format` (asserting it where
/// the schema's draft does).
///
/// A `format` on a schema typed neither string, number nor integer (`{"type": "object",
/// "format": "identifier-properties"}`) is removed too: typify 0.8 stops on it (`not yet
/// implemented: invalid (or unexpected) schema`), and no standard format applies there.
pub fn formats_left_to_validator(schema: &mut Value) -> Vec<String> {
    let mut changed = Vec::new();
    walk_mut(schema, "", &mut |object, at| {
        let Some(Value::String(format)) = object.get("format").cloned() else {
            return;
        };
        let scalar = |t: &Value| matches!(t.as_str(), Some("string" | "number" | "integer"));
        let off_scalars = match object.get("type") {
            Some(Value::String(_)) => !object.get("type").is_some_and(scalar),
            Some(Value::Array(types)) => !types.iter().any(scalar),
            _ => false,
        };
        if !TYPED_FORMATS.contains(&format.as_str()) && !off_scalars {
            return;
        }
        object.remove("format");
        append_to_description(object, &format!("Format (checked by the validator): `{format}`."));
        changed.push(at.to_owned());
    });
    changed
}

/// **`contains` (with `minContains` / `maxContains`) is removed from typify's copy**: the
/// array's items keep their type from `items`.
///
/// Why: typify 0.8 stops on an array schema with `contains` (`unhandled array validation`).
/// `contains` only says which items must be present: the type of every item is `items`' either way.
/// Enforced instead by: the validator, which reads the original `contains`.
pub fn drop_contains(schema: &mut Value) -> Vec<String> {
    let mut changed = Vec::new();
    walk_mut(schema, "", &mut |object, at| {
        if object.remove("contains").is_some() {
            object.remove("minContains");
            object.remove("maxContains");
            changed.push(format!("{at}/contains"));
        }
    });
    changed
}

/// The keywords that constrain a string or a number without changing its type, for
/// [`scalar_alternatives_as_their_type`].
const SCALAR_CONSTRAINTS: &[&str] = &[
    "const",
    "enum",
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "multipleOf",
    "minLength",
    "maxLength",
    "pattern",
    "format",
];

/// **A `oneOf` / `anyOf` under one scalar `type` whose branches only bound that scalar is
/// removed**: `{"type": "number", "oneOf": [{"const": -1}, {"minimum": 0, "maximum": 1}]}`
/// becomes `{"type": "number"}` (`f64`).
///
/// Why: typify 0.8 converts each branch on its own, and stops on a branch with bounds but no
/// `type` (`not yet implemented: invalid (or unexpected) schema`).
/// Enforced instead by: the validator, which reads the original alternatives.
pub fn scalar_alternatives_as_their_type(schema: &mut Value) -> Vec<String> {
    let mut changed = Vec::new();
    walk_mut(schema, "", &mut |object, at| {
        if !matches!(
            object.get("type").and_then(Value::as_str),
            Some("string" | "number" | "integer")
        ) {
            return;
        }
        for keyword in ["oneOf", "anyOf"] {
            let Some(Value::Array(branches)) = object.get(keyword) else {
                continue;
            };
            let bounds_only = !branches.is_empty()
                && branches.iter().all(|branch| {
                    branch.as_object().is_some_and(|branch| {
                        !branch.contains_key("type")
                            && branch
                                .keys()
                                .all(|k| SCALAR_CONSTRAINTS.contains(&k.as_str()) || ANNOTATIONS.contains(&k.as_str()))
                    })
                });
            if bounds_only {
                object.remove(keyword);
                changed.push(format!("{at}/{keyword}"));
            }
        }
    });
    changed
}

/// **Draft 2020-12's `prefixItems` take draft-07's form**: `{"prefixItems": [A, B], "items": C}`
/// becomes `{"items": [A, B], "additionalItems": C}` (no `additionalItems` when `items` was
/// absent, since 2020-12 ignores that keyword). Run by [`crate::generate_types`] only for a
/// 2020-12 document, before [`ALL`], so that [`loose_tuples_as_lists`] then sees the tuple.
///
/// Why: typify 0.8 reads schemas as draft-07 does: it ignores `prefixItems` and applies
/// `items` to every item, so `{"prefixItems": [..], "items": false}` became a type no array
/// of one item or more deserializes into (an empty enum), and `"items": C` typed the first
/// items as `C`. A valid instance was refused by `parse`.
/// Enforced instead by: nothing is dropped; the validator reads the original `prefixItems`
/// and `items`.
pub fn prefix_items_as_tuples(schema: &mut Value) -> Vec<String> {
    let mut changed = Vec::new();
    walk_mut(schema, "", &mut |object, at| {
        if !matches!(object.get("prefixItems"), Some(Value::Array(_))) {
            return;
        }
        let prefix = object.remove("prefixItems").unwrap_or_default();
        match object.remove("items") {
            Some(rest) => {
                object.insert("additionalItems".into(), rest);
            }
            None => {
                object.remove("additionalItems");
            }
        }
        object.insert("items".into(), prefix);
        changed.push(format!("{at}/prefixItems"));
    });
    changed
}

/// **A tuple-form `items` (an array of schemas) that typify cannot make a fixed tuple of is
/// removed**, so the array is a list of any JSON values (`Vec<serde_json::Value>`); so is
/// `additionalItems` then.
///
/// Why: typify 0.8 converts array-form `items` only when `minItems` and `maxItems` both equal
/// its length (a Rust tuple); any other (`["string", "integer"]` with optional trailing
/// items, or further items allowed) is an `unhandled array validation` error. So is a fixed
/// tuple with `uniqueItems`, which loses that keyword instead.
/// Enforced instead by: the validator, which reads the original `items` and `additionalItems`.
pub fn loose_tuples_as_lists(schema: &mut Value) -> Vec<String> {
    let mut changed = Vec::new();
    walk_mut(schema, "", &mut |object, at| {
        let Some(Value::Array(items)) = object.get("items") else {
            return;
        };
        let length = items.len() as u64;
        let fixed = object.get("minItems").and_then(Value::as_u64) == Some(length)
            && object.get("maxItems").and_then(Value::as_u64) == Some(length)
            && length > 0;
        if !fixed {
            object.remove("items");
            object.remove("additionalItems");
            changed.push(format!("{at}/items"));
        } else if object.remove("uniqueItems").is_some() {
            // A fixed tuple with `uniqueItems` is `unhandled` too; the validator checks it.
            changed.push(format!("{at}/uniqueItems"));
        }
    });
    changed
}

/// The JSON type of a value, as JSON Schema names it (integers are numbers here).
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

/// **An `enum` without `type`, or with a `type` list, whose values are of several JSON types
/// (besides `null`) is removed**, so the schema accepts any value (`serde_json::Value`), or
/// any value of its types: `[true, false, "auto"]`, `[1, "1"]`, `{"type": ["string",
/// "boolean"], "enum": [true, false, "op"]}`. A `type` list beside an `enum` of one JSON
/// type is removed instead, so the enum alone gives the type.
///
/// Why: typify 0.8 panics on such an enum (`multiple implied types for an un-typed enum`,
/// `not yet implemented: invalid (or unexpected) schema`).
/// Enforced instead by: the validator, which reads the original `enum`.
pub fn mixed_enums_as_any(schema: &mut Value) -> Vec<String> {
    let mut changed = Vec::new();
    walk_mut(schema, "", &mut |object, at| {
        if matches!(object.get("type"), Some(Value::String(_))) {
            return;
        }
        let Some(Value::Array(values)) = object.get("enum") else {
            return;
        };
        let types: std::collections::BTreeSet<&str> = values.iter().map(json_type).filter(|t| *t != "null").collect();
        let listed: std::collections::BTreeSet<&str> = object
            .get("type")
            .and_then(Value::as_array)
            .map(|list| list.iter().filter_map(Value::as_str).filter(|t| *t != "null").collect())
            .unwrap_or_default();
        // `["string", "null"]` beside string values is left (`nullable_definitions_split`
        // reads it); a list of other types too is what typify cannot read.
        if types.len() == 1 && !listed.is_empty() && listed != types {
            // `{"type": [every type], "enum": ["cover", "contain"]}` (expo): the values say
            // the type; typify reads the enum alone.
            object.remove("type");
            changed.push(format!("{at}/type"));
        } else if types.len() > 1 {
            let shown = Value::Array(values.clone()).to_string();
            object.remove("enum");
            append_to_description(object, &format!("One of (checked by the validator): `{shown}`."));
            changed.push(format!("{at}/enum"));
        }
    });
    changed
}

/// **A string `enum` with two values that spell the same Rust variant becomes a plain
/// string** (`["GET", "get"]`, `["==", "!="]`, `["Etc/GMT+1", "Etc/GMT-1"]`): its values are
/// kept in the description. So does a `oneOf` or `anyOf` whose branches are each one string
/// constant (`{"const": "~="}`, `{"type": "string", "enum": ["|="]}`, with a description but no
/// `title`), beside annotations only, as in biome's `AttributeMatcherOperator`.
///
/// Why: typify 0.8 names a variant after its value without the characters an identifier
/// cannot hold, ignoring case, and panics (`Failed to make unique variant names`) when two
/// values give the same name. Values are compared here with only their letters and digits,
/// lowercased: a little stricter than typify, never looser.
/// Enforced instead by: the validator, which reads the original `enum`, `oneOf` or `anyOf`.
pub fn indistinct_enums_as_strings(schema: &mut Value) -> Vec<String> {
    fn indistinct(strings: &[&str]) -> bool {
        let mut seen = std::collections::BTreeSet::new();
        strings.iter().any(|value| {
            let key: String = value
                .chars()
                .filter(|c| c.is_alphanumeric())
                .flat_map(char::to_lowercase)
                .collect();
            !seen.insert(key)
        })
    }
    // The string a branch is the constant of: `const`, or a one-value `enum`, beside
    // `"type": "string"` and annotations other than `title` (which typify may name it by).
    fn constant(branch: &Value) -> Option<&str> {
        let object = branch.as_object()?;
        let only = object.keys().all(|k| {
            matches!(
                k.as_str(),
                "const" | "enum" | "type" | "description" | "$comment" | "examples" | "deprecated"
            )
        });
        if !only || object.get("type").is_some_and(|t| t != "string") {
            return None;
        }
        match (object.get("const"), object.get("enum")) {
            (Some(Value::String(value)), None) => Some(value),
            (None, Some(Value::Array(values))) if values.len() == 1 => values[0].as_str(),
            _ => None,
        }
    }
    let mut changed = Vec::new();
    walk_mut(schema, "", &mut |object, at| {
        for keyword in ["oneOf", "anyOf"] {
            let Some(Value::Array(branches)) = object.get(keyword) else {
                continue;
            };
            let strings: Option<Vec<&str>> = branches.iter().map(constant).collect();
            let Some(strings) = strings else { continue };
            let beside_annotations = object
                .iter()
                .all(|(k, v)| k == keyword || (k == "type" && v == "string") || ANNOTATIONS.contains(&k.as_str()));
            if strings.len() < 2 || !beside_annotations || !indistinct(&strings) {
                continue;
            }
            let shown = Value::Array(strings.iter().map(|s| json!(s)).collect()).to_string();
            object.remove(keyword);
            object.insert("type".into(), json!("string"));
            append_to_description(object, &format!("One of (checked by the validator): `{shown}`."));
            changed.push(format!("{at}/{keyword}"));
        }
        let Some(Value::Array(values)) = object.get("enum").cloned() else {
            return;
        };
        let strings: Vec<&str> = values.iter().filter_map(Value::as_str).collect();
        if strings.is_empty() || strings.len() + values.iter().filter(|v| v.is_null()).count() != values.len() {
            return;
        }
        if indistinct(&strings) {
            let shown = Value::Array(values.clone()).to_string();
            object.remove("enum");
            if !object.contains_key("type") {
                let nullable = values.iter().any(Value::is_null);
                object.insert(
                    "type".into(),
                    if nullable {
                        json!(["string", "null"])
                    } else {
                        json!("string")
                    },
                );
            }
            append_to_description(object, &format!("One of (checked by the validator): `{shown}`."));
            changed.push(format!("{at}/enum"));
        }
    });
    changed
}

/// Whether typify merges `object` with its subschemas (and so inlines the schemas its
/// `$ref`s name): it has `allOf`, or several of `allOf`/`anyOf`/`oneOf`, or one of them
/// beside a keyword other than `type` and annotations.
fn is_merge_site(object: &Map<String, Value>) -> bool {
    let combinators = ["allOf", "anyOf", "oneOf"]
        .iter()
        .filter(|k| object.contains_key(**k))
        .count();
    if combinators == 0 {
        return false;
    }
    object.contains_key("allOf")
        || combinators > 1
        || object
            .keys()
            .any(|k| !matches!(k.as_str(), "allOf" | "anyOf" | "oneOf" | "type") && !ANNOTATIONS.contains(&k.as_str()))
}

/// The definition a same-document `$ref` names as typify resolves it, by the last segment of
/// its fragment (`#/$defs/a/properties/b` names `b`); `None` for another document's.
fn definition_by_last_segment(reference: &str) -> Option<String> {
    let last = reference
        .strip_prefix('#')?
        .rsplit('/')
        .next()
        .filter(|l| !l.is_empty())?;
    Some(crate::error::unescape_pointer_token(last))
}

/// The definitions a merge of `schema` inlines: its own `$ref`, and those of its `allOf`,
/// `anyOf` and `oneOf` members, recursively (resolved by last segment, as typify does). A
/// `$ref` below a member's `properties` or `items` stays a reference to a named type.
fn inlined_definitions(schema: &Value, found: &mut std::collections::BTreeSet<String>) {
    let Value::Object(object) = schema else { return };
    if let Some(name) = object
        .get("$ref")
        .and_then(Value::as_str)
        .and_then(definition_by_last_segment)
    {
        found.insert(name);
    }
    for key in ["allOf", "anyOf", "oneOf"] {
        if let Some(Value::Array(members)) = object.get(key) {
            for member in members {
                inlined_definitions(member, found);
            }
        }
    }
}

/// The definitions a merge of `object` inlines by merging two schemas of one member name:
/// where two of its operands that typify merges together both define a property, typify
/// merges the two property schemas, inlining their `$ref`s (AsyncAPI 2.x's `schema.json`:
/// `allOf: [draft-07's metaschema, {"properties": {"items": {"anyOf": [{"$ref":
/// "schema.json"}, ..]}}}]`, where the metaschema's `items` is a reference too). The operands
/// merged together are the object's own members and those of its `allOf` (a member's `$ref`
/// resolved to its definition, recursively); each `anyOf` / `oneOf` branch is merged with
/// them, not with the other branches.
fn inlined_through_members(
    object: &Map<String, Value>,
    defs: &Map<String, Value>,
) -> std::collections::BTreeSet<String> {
    use std::collections::{BTreeMap, BTreeSet};
    /// The `properties` tables of `schema` and of what it merges with (its `$ref`'s
    /// definition, its `allOf` members), each definition once.
    fn together<'a>(
        schema: &'a Map<String, Value>,
        defs: &'a Map<String, Value>,
        seen: &mut BTreeSet<String>,
        out: &mut Vec<&'a Map<String, Value>>,
    ) {
        if let Some(Value::Object(properties)) = schema.get("properties") {
            out.push(properties);
        }
        if let Some(name) = schema
            .get("$ref")
            .and_then(Value::as_str)
            .and_then(definition_by_last_segment)
        {
            if seen.insert(name.clone()) {
                if let Some(Value::Object(target)) = defs.get(&name) {
                    together(target, defs, seen, out);
                }
            }
        }
        if let Some(Value::Array(members)) = schema.get("allOf") {
            for member in members {
                if let Value::Object(member) = member {
                    together(member, defs, seen, out);
                }
            }
        }
    }
    let mut found = BTreeSet::new();
    let mut shared = |tables: &[&Map<String, Value>]| {
        let mut by_name: BTreeMap<&str, Vec<&Value>> = BTreeMap::new();
        for table in tables {
            for (name, schema) in table.iter() {
                by_name.entry(name).or_default().push(schema);
            }
        }
        for schemas in by_name.values().filter(|schemas| schemas.len() > 1) {
            for schema in schemas {
                inlined_definitions(schema, &mut found);
            }
        }
    };
    let mut common = Vec::new();
    together(object, defs, &mut BTreeSet::new(), &mut common);
    shared(&common);
    for keyword in ["anyOf", "oneOf"] {
        if let Some(Value::Array(branches)) = object.get(keyword) {
            for branch in branches {
                if let Value::Object(branch) = branch {
                    let mut tables = common.clone();
                    together(branch, defs, &mut BTreeSet::new(), &mut tables);
                    shared(&tables);
                }
            }
        }
    }
    found
}

fn inlined_by(object: &Map<String, Value>) -> std::collections::BTreeSet<String> {
    let mut found = std::collections::BTreeSet::new();
    inlined_definitions(&Value::Object(object.clone()), &mut found);
    found
}

/// **`type` beside a `$ref` is removed** (`{"$ref": "#/definitions/port", "type": "integer"}`).
///
/// Why: typify 0.8 asserts that the referenced schema's `type` is spelled exactly the same
/// (`assertion failed: matches!(ref_schema, ..)`), which fails for a target without `type`
/// (an `anyOf`, an `enum`) or with it spelled as an array. The type is the target's.
/// Enforced instead by: the validator, which checks both the `type` and the reference.
pub fn drop_types_beside_references(schema: &mut Value) -> Vec<String> {
    let mut changed = Vec::new();
    walk_mut(schema, "", &mut |object, at| {
        if object.contains_key("$ref") && object.remove("type").is_some() {
            changed.push(format!("{at}/type"));
        }
    });
    changed
}

/// **The members of an `allOf` lose their annotations (`title`, `description`, ...), and
/// `propertyNames` is removed everywhere.**
///
/// Why: typify 0.8 asserts that a merged `allOf` carries no metadata of its own
/// (`merged_schema.metadata.is_none()`), which a member's `title` or `description` breaks,
/// and that objects it merges have no `propertyNames` (`filter_prop`); it types map keys as
/// `String` whatever `propertyNames` says. The annotations of the `allOf` itself are kept, so
/// the type's doc comment stays.
/// Enforced instead by: nothing is lost but member docs; the validator checks `propertyNames`.
pub fn plain_merge_members(schema: &mut Value) -> Vec<String> {
    let mut changed = Vec::new();
    walk_mut(schema, "", &mut |object, at| {
        if object.remove("propertyNames").is_some() {
            changed.push(format!("{at}/propertyNames"));
        }
        let Some(Value::Array(members)) = object.get_mut("allOf") else {
            return;
        };
        for (index, member) in members.iter_mut().enumerate() {
            let Value::Object(member) = member else { continue };
            let before = member.len();
            member.retain(|key, _| !ANNOTATIONS.contains(&key.as_str()));
            if member.len() != before {
                changed.push(format!("{at}/allOf/{index}"));
            }
        }
    });
    changed
}

/// The most `anyOf`/`oneOf` alternatives a subschema typify merges may have
/// ([`large_merges_as_any`]).
pub const MAX_MERGED_ALTERNATIVES: usize = 8;

/// The alternatives of `schema`'s `anyOf`/`oneOf`, counted through nested combinators of its
/// members (not through `properties` or `items`).
fn merged_alternatives(schema: &Value) -> usize {
    let Value::Object(object) = schema else { return 0 };
    let mut total = 0;
    for key in ["anyOf", "oneOf"] {
        if let Some(Value::Array(members)) = object.get(key) {
            total += members.iter().map(|m| merged_alternatives(m).max(1)).sum::<usize>();
        }
    }
    if let Some(Value::Array(members)) = object.get("allOf") {
        total += members.iter().map(merged_alternatives).sum::<usize>();
    }
    total
}

/// **A merge of more than [`MAX_MERGED_ALTERNATIVES`] alternatives becomes any JSON value**:
/// a subschema typify merges (see [`recursive_merges_as_any`]) whose `anyOf`/`oneOf` hold more
/// alternatives than that, as Azure Functions' `bindings` items (a `oneOf` of twenty binding
/// kinds beside `allOf: [bindingBase]`).
///
/// Why: typify 0.8 merges a `oneOf` into its siblings by adding to each alternative the
/// negation of every other, which is exponential in the alternatives (`function.json` grows
/// past gigabytes of memory).
/// Enforced instead by: the validator, which reads the original subschema. The Rust type is
/// `serde_json::Value` there.
pub fn large_merges_as_any(schema: &mut Value) -> Vec<String> {
    let mut changed = Vec::new();
    walk_mut(schema, "", &mut |object, at| {
        if !is_merge_site(object) || merged_alternatives(&Value::Object(object.clone())) <= MAX_MERGED_ALTERNATIVES {
            return;
        }
        let description = object.get("description").cloned();
        object.clear();
        if let Some(description) = description {
            object.insert("description".into(), description);
        }
        append_to_description(
            object,
            "Any JSON value here (a merge of more alternatives than typify can convert); checked by the validator.",
        );
        changed.push(at.to_owned());
    });
    changed
}

/// **A merge through a recursive reference becomes any JSON value**: a subschema that typify
/// would merge (an `allOf`, or an `anyOf`/`oneOf` beside other assertions, as Windows'
/// `resjson`: `{"minProperties": 1, "anyOf": [{"type": "string"}, {"$ref": "#/definitions/resource"}]}`
/// inside `resource` itself) and that references a definition whose own merges lead back to
/// the definition holding it. A merge references what it inlines: the `$ref`s of its members,
/// and those of a member name two of its merged operands both define, whose schemas typify
/// merges in turn (`inlined_through_members`; AsyncAPI 2.x and 3.x, whose `schema.json`
/// merges draft-07's metaschema with its own `items`, `allOf`, ... naming `schema.json`).
///
/// Why: typify 0.8 merges by inlining the referenced schema, with no guard against cycles
/// (its own `TODO`), so such a merge recurses until the stack overflows and the process
/// aborts; no `catch_unwind` can stop that. Cutting every merge that lies on a cycle of
/// "merges the definition" edges leaves only finite merges.
/// Enforced instead by: the validator, which reads the original subschema. The Rust type is
/// `serde_json::Value` there.
pub fn recursive_merges_as_any(schema: &mut Value) -> Vec<String> {
    // Cycles through the definition holding the merge first, then merges of a definition on
    // a cycle elsewhere; each round cuts at least one merge, and the graph is rebuilt after it.
    let mut changed = Vec::new();
    for _ in 0..256 {
        let mut cut = cut_recursive_merges(schema, false);
        if cut.is_empty() {
            cut = cut_recursive_merges(schema, true);
        }
        if cut.is_empty() {
            break;
        }
        changed.extend(cut);
    }
    changed
}

/// One round of [`recursive_merges_as_any`]: cuts the merges that inline a definition leading
/// back to their own (and with `elsewhere`, one lying on any cycle).
fn cut_recursive_merges(schema: &mut Value, elsewhere: bool) -> Vec<String> {
    use std::collections::{BTreeMap, BTreeSet};
    let Some(Value::Object(defs)) = schema.get("$defs") else {
        return Vec::new();
    };
    // definition -> the definitions a merge inside it (or of it: its top level) inlines; and
    // each merge site (by pointer) -> what it inlines, read once here for the cutting below.
    let mut edges: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    let mut sites: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (name, def) in defs {
        let mut targets = BTreeSet::new();
        if let Value::Object(top) = def {
            targets.extend(inlined_by(top));
        }
        let base = format!("/$defs/{}", crate::error::escape_pointer_token(name));
        crate::walk::walk(def, &base, &mut |object, at| {
            if is_merge_site(object) {
                let mut inlined = inlined_by(object);
                inlined.extend(inlined_through_members(object, defs));
                targets.extend(inlined.iter().cloned());
                sites.insert(at.to_owned(), inlined);
            }
        });
        edges.insert(name.clone(), targets);
    }
    let reaches = |from: &str, to: &str| {
        let mut stack: Vec<String> = edges.get(from).into_iter().flatten().cloned().collect();
        let mut seen = BTreeSet::new();
        while let Some(at) = stack.pop() {
            if at == to {
                return true;
            }
            if seen.insert(at.clone()) {
                stack.extend(edges.get(&at).into_iter().flatten().cloned());
            }
        }
        false
    };
    // A merge in `name` is cut when something it inlines leads back to `name` or lies on a
    // cycle of its own.
    let dangerous: BTreeMap<String, BTreeSet<String>> = edges
        .iter()
        .map(|(name, targets)| {
            let bad = targets
                .iter()
                .filter(|t| t.as_str() == name.as_str() || reaches(t, name) || (elsewhere && reaches(t, t)))
                .cloned()
                .collect();
            (name.clone(), bad)
        })
        .filter(|(_, bad): &(String, BTreeSet<String>)| !bad.is_empty())
        .collect();
    let mut changed = Vec::new();
    let Some(Value::Object(defs)) = schema.get_mut("$defs") else {
        return changed;
    };
    for (name, bad) in dangerous {
        let Some(def) = defs.get_mut(&name) else { continue };
        let base = format!("/$defs/{}", crate::error::escape_pointer_token(&name));
        walk_mut(def, &base, &mut |object, at| {
            // A site not cut is unchanged since it was read; one inside a cut site is gone.
            if sites
                .get(at)
                .is_some_and(|inlined| inlined.iter().any(|t| bad.contains(t)))
            {
                let description = object.get("description").cloned();
                object.clear();
                if let Some(description) = description {
                    object.insert("description".into(), description);
                }
                append_to_description(
                    object,
                    "Any JSON value here (a recursive merge typify cannot convert); checked by the validator.",
                );
                changed.push(at.to_owned());
            }
        });
    }
    changed
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prefix_items_take_the_array_form_of_items() {
        let mut schema = json!({"$defs": {
            "closed": {"type": "array", "prefixItems": [{"type": "number"}, {"type": "string"}], "items": false},
            "open": {"type": "array", "prefixItems": [{"type": "number"}], "additionalItems": false},
            "rest": {"type": "array", "prefixItems": [{"type": "number"}], "items": {"type": "string"}},
            "plain": {"type": "array", "items": {"type": "string"}}
        }});
        let changed = prefix_items_as_tuples(&mut schema);
        assert_eq!(
            changed,
            [
                "/$defs/closed/prefixItems",
                "/$defs/open/prefixItems",
                "/$defs/rest/prefixItems"
            ]
        );
        assert_eq!(
            schema["$defs"]["closed"],
            json!({"type": "array", "items": [{"type": "number"}, {"type": "string"}], "additionalItems": false})
        );
        assert_eq!(
            schema["$defs"]["open"],
            json!({"type": "array", "items": [{"type": "number"}]})
        );
        assert_eq!(schema["$defs"]["rest"]["additionalItems"], json!({"type": "string"}));
        assert_eq!(
            schema["$defs"]["plain"],
            json!({"type": "array", "items": {"type": "string"}})
        );
    }

    #[test]
    fn nullable_definitions_get_their_named_schema_split_off() {
        let mut schema = json!({"$defs": {
            "pathConfig": {"description": "D.", "oneOf": [{"type": "object", "properties": {"a": {}}}, {"type": "null"}]},
            "both": {"type": ["object", "null"], "description": "B.", "properties": {"b": {}}},
            "plain": {"anyOf": [{"type": "string"}, {"type": "null"}]},
            "referred": {"anyOf": [{"$ref": "#/$defs/plain"}, {"type": "null"}]}}});
        let changed = nullable_definitions_split(&mut schema);
        assert_eq!(changed, ["/$defs/both", "/$defs/pathConfig"]);
        let d = &schema["$defs"];
        assert_eq!(
            d["pathConfig"],
            json!({"description": "D.", "oneOf": [{"$ref": "#/$defs/pathConfigValue"}, {"type": "null"}]})
        );
        assert_eq!(d["pathConfigValue"], json!({"type": "object", "properties": {"a": {}}}));
        assert_eq!(
            d["both"],
            json!({"description": "B.", "oneOf": [{"$ref": "#/$defs/bothValue"}, {"type": "null"}]})
        );
        assert_eq!(d["bothValue"], json!({"type": "object", "properties": {"b": {}}}));
        assert_eq!(d["plain"]["anyOf"][0], json!({"type": "string"}));
        // prometheus' `scheme`: the null leaves the enum with the type, else the inner type is
        // nullable again and typify names two types `SchemeValue`.
        let mut schema = json!({"$defs": {"scheme": {"type": ["string", "null"], "enum": ["http", "https", null]}}});
        nullable_definitions_split(&mut schema);
        assert_eq!(
            schema["$defs"]["schemeValue"],
            json!({"type": "string", "enum": ["http", "https"]})
        );
        // warp-workflows' `nullable-string`: a constrained string is a newtype of its own.
        let mut schema =
            json!({"$defs": {"nullable-string": {"oneOf": [{"type": "string", "minLength": 1}, {"type": "null"}]}}});
        assert_eq!(nullable_definitions_split(&mut schema), ["/$defs/nullable-string"]);
        assert_eq!(
            schema["$defs"]["nullable-stringValue"],
            json!({"type": "string", "minLength": 1})
        );
        // webpack's `Layer`: the null branch written as an `enum` (and as a `const`).
        let mut schema = json!({"$defs": {
            "Layer": {"anyOf": [{"enum": [null]}, {"type": "string", "minLength": 1}]},
            "Other": {"oneOf": [{"const": null}, {"type": "string", "pattern": "^x"}]},
            "Both": {"anyOf": [{"enum": [null, "a"]}, {"type": "string", "minLength": 1}]}}});
        assert_eq!(
            nullable_definitions_split(&mut schema),
            ["/$defs/Layer", "/$defs/Other"]
        );
        assert_eq!(
            schema["$defs"]["Layer"]["anyOf"],
            json!([{"enum": [null]}, {"$ref": "#/$defs/LayerValue"}])
        );
        assert_eq!(schema["$defs"]["LayerValue"], json!({"type": "string", "minLength": 1}));
    }

    #[test]
    fn pattern_members_become_one_map() {
        let mut schema = json!({"$defs": {
            "closed": {"patternProperties": {"^x-": {"type": "string"}}, "additionalProperties": false},
            "all": {"patternProperties": {".*": {"type": "integer"}}, "additionalProperties": {"type": "string"}},
            "open": {"properties": {"a": {}}, "patternProperties": {"^x-": {"type": "string"}}},
            "two": {"patternProperties": {"^a": {"type": "string"}, "^b": {"type": "integer"}}, "additionalProperties": false},
            "same": {"patternProperties": {"^a": {"type": "string"}, "^b": {"type": "string"}}, "additionalProperties": {"type": "string"}},
            "newline": {"patternProperties": {"^.*$": {"type": "string"}}, "additionalProperties": false},
            "empty": {"patternProperties": {}}}});
        let changed = pattern_members_as_maps(&mut schema);
        assert_eq!(changed.len(), 7);
        let d = &schema["$defs"];
        assert_eq!(d["closed"], json!({"additionalProperties": {"type": "string"}}));
        assert_eq!(d["all"], json!({"additionalProperties": {"type": "integer"}}));
        assert_eq!(d["open"], json!({"properties": {"a": {}}, "additionalProperties": {}}));
        assert_eq!(d["two"], json!({"additionalProperties": {}}));
        assert_eq!(d["same"], json!({"additionalProperties": {"type": "string"}}));
        assert_eq!(d["newline"], json!({"additionalProperties": {"type": "string"}}));
        assert_eq!(d["empty"], json!({}));
        assert!(!schema.to_string().contains("patternProperties"));
    }

    #[test]
    fn nested_titles_that_repeat_a_name_are_dropped() {
        let mut schema = json!({"$defs": {
            "Alias": {"title": "alias", "additionalProperties": {"title": "Alias", "type": "object"}},
            "Other": {"properties": {
                "a": {"title": "Rule", "type": "string"},
                "b": {"title": "rule", "type": "integer", "description": "B."},
                "c": {"title": "Unique", "type": "integer"},
                "d": {"title": "Rule", "type": "string", "description": "Shared."}}}}});
        let changed = drop_colliding_titles(&mut schema);
        assert_eq!(
            changed,
            [
                "/$defs/Alias/additionalProperties/title",
                "/$defs/Other/properties/b/title"
            ]
        );
        let d = &schema["$defs"];
        assert_eq!(d["Alias"]["title"], "alias");
        assert_eq!(
            d["Alias"]["additionalProperties"],
            json!({"type": "object", "description": "Alias"})
        );
        assert_eq!(d["Other"]["properties"]["b"]["description"], "rule: B.");
        assert_eq!(d["Other"]["properties"]["c"]["title"], "Unique");
        assert_eq!(d["Other"]["properties"]["a"]["title"], "Rule");
        assert_eq!(
            d["Other"]["properties"]["d"]["title"], "Rule",
            "the same shape keeps sharing its type"
        );
    }

    #[test]
    fn same_document_references_become_pointers() {
        let mut schema = json!({
            "$id": "https://example.com/root.json",
            "definitions": {
                "anchored": {"$anchor": "anch", "type": "integer"},
                "draft7": {"$id": "#old", "type": "string"},
                "nested": {"$id": "https://example.com/nested/other.json", "type": "object",
                    "definitions": {"inner": {"type": "boolean"}},
                    "properties": {
                        "relative": {"$ref": "#/definitions/inner"},
                        "whole": {"$ref": "#"},
                        "up": {"$ref": "../root.json#/definitions/anchored"}}}},
            "properties": {
                "a": {"$ref": "#anch"},
                "b": {"$ref": "#old"},
                "c": {"$ref": "nested/other.json"},
                "d": {"$ref": "https://example.com/root.json#/definitions/anchored"},
                "e": {"$ref": "#/definitions/anchored"},
                "f": {"$ref": "elsewhere.json#/x"},
                "g": {"$ref": "#missing"}}});
        let changed = local_references_as_pointers(&mut schema);
        let p = &schema["properties"];
        assert_eq!(p["a"]["$ref"], "#/definitions/anchored");
        assert_eq!(p["b"]["$ref"], "#/definitions/draft7");
        assert_eq!(p["c"]["$ref"], "#/definitions/nested");
        assert_eq!(p["d"]["$ref"], "#/definitions/anchored");
        assert_eq!(p["e"]["$ref"], "#/definitions/anchored");
        assert_eq!(p["f"]["$ref"], "elsewhere.json#/x", "another document is left");
        assert_eq!(p["g"]["$ref"], "#missing", "left for the $ref check to report");
        let n = &schema["definitions"]["nested"]["properties"];
        assert_eq!(n["relative"]["$ref"], "#/definitions/nested/definitions/inner");
        assert_eq!(n["whole"]["$ref"], "#/definitions/nested");
        assert_eq!(n["up"]["$ref"], "#/definitions/anchored");
        assert_eq!(changed.len(), 7, "{changed:?}");
        let mut bad_id = json!({"$id": 7, "properties": {"a": {"$ref": "#x"}}});
        assert!(local_references_as_pointers(&mut bad_id).is_empty());
    }

    #[test]
    fn references_are_rebased_onto_the_copy() {
        let mut schema = json!({"$defs": {"Root": {"properties": {
            "self": {"$ref": "#"}, "sibling": {"$ref": "#/properties/x"},
            "deep": {"$ref": "#/definitions/a/properties/b"}, "shallow": {"$ref": "#/definitions/a"},
            "defs": {"$ref": "#/$defs/a"}}}}});
        let changed = rebase_references(&mut schema, Some("Root"));
        let p = &schema["$defs"]["Root"]["properties"];
        assert_eq!(p["self"]["$ref"], "#/$defs/Root");
        assert_eq!(p["sibling"]["$ref"], "#/$defs/Root/properties/x");
        assert_eq!(p["deep"]["$ref"], "#/$defs/a/properties/b");
        assert_eq!(p["shallow"]["$ref"], "#/definitions/a");
        assert_eq!(p["defs"]["$ref"], "#/$defs/a");
        assert_eq!(changed.len(), 3);
        let mut rootless = json!({"$ref": "#"});
        assert!(rebase_references(&mut rootless, None).is_empty());
    }

    #[test]
    fn deep_references_into_themselves_are_not_copied_without_end() {
        let mut schema = json!({"$defs": {"a": {"properties": {"b": {"properties": {
            "again": {"$ref": "#/$defs/a/properties/b"}}}}}}});
        assert!(inline_deep_references(&mut schema).is_empty());
        assert!(check_size(&schema).is_ok());
        let wide: Value = (0..MAX_SCHEMA_LOCATIONS + 1).map(|_| json!({})).collect();
        assert!(check_size(&wide).unwrap_err().contains("MAX_SCHEMA_LOCATIONS"));
    }

    #[test]
    fn negations_are_dropped() {
        let (out, changed) = run(
            drop_negations,
            json!({"properties": {"t": {"type": "string", "not": {"enum": ["a"]}}, "u": {"not": {}}}}),
        );
        assert_eq!(out, json!({"properties": {"t": {"type": "string"}, "u": {}}}));
        assert_eq!(changed, ["/properties/t/not", "/properties/u/not"]);
    }

    #[test]
    fn formats_move_to_the_description() {
        let (out, changed) = run(
            formats_left_to_validator,
            json!({"properties": {"at": {"type": "string", "format": "date-time"}, "n": {"type": "string"},
                "u": {"type": "string", "format": "uri"}, "w": {"type": "integer", "format": "uint32"},
                "o": {"type": "object", "format": "identifier-properties"},
                "l": {"type": ["string", "null"], "format": "uri"}}}),
        );
        assert_eq!(
            out["properties"]["at"],
            json!({"type": "string", "description": "Format (checked by the validator): `date-time`."})
        );
        assert_eq!(out["properties"]["o"]["type"], "object");
        assert!(out["properties"]["o"].get("format").is_none());
        assert_eq!(out["properties"]["l"]["format"], "uri");
        assert_eq!(changed, ["/properties/at", "/properties/o"]);
    }

    #[test]
    fn contains_is_left_to_the_validator() {
        let (out, changed) = run(
            drop_contains,
            json!({"type": "array", "items": {"type": "string"}, "contains": {"const": "a"}, "minContains": 2}),
        );
        assert_eq!(out, json!({"type": "array", "items": {"type": "string"}}));
        assert_eq!(changed, ["/contains"]);
    }

    #[test]
    fn bounds_as_alternatives_leave_the_scalar() {
        let (out, changed) = run(
            scalar_alternatives_as_their_type,
            json!({"type": "number", "oneOf": [{"const": -1}, {"minimum": 0, "maximum": 1, "description": "p"}]}),
        );
        assert_eq!(out, json!({"type": "number"}));
        assert_eq!(changed, ["/oneOf"]);
        for kept in [
            json!({"type": "string", "anyOf": [{"type": "string", "minLength": 1}]}),
            json!({"oneOf": [{"minimum": 0}]}),
            json!({"type": "object", "oneOf": [{"required": ["a"]}]}),
        ] {
            assert_eq!(run(scalar_alternatives_as_their_type, kept.clone()).0, kept);
        }
    }

    #[test]
    fn loose_tuples_become_lists_and_fixed_ones_stay() {
        let loose =
            json!({"type": "array", "items": [{"type": "string"}, {"type": "integer"}], "additionalItems": false});
        let (out, changed) = run(loose_tuples_as_lists, loose);
        assert_eq!(out, json!({"type": "array"}));
        assert_eq!(changed, ["/items"]);
        let fixed = json!({"type": "array", "items": [{"type": "string"}], "minItems": 1, "maxItems": 1});
        assert_eq!(run(loose_tuples_as_lists, fixed.clone()).0, fixed);
        let mut unique = fixed.clone();
        unique["uniqueItems"] = json!(true);
        let (out, changed) = run(loose_tuples_as_lists, unique);
        assert_eq!((out, changed), (fixed.clone(), vec!["/uniqueItems".to_owned()]));
        let list = json!({"type": "array", "items": {"type": "string"}});
        assert_eq!(run(loose_tuples_as_lists, list.clone()).0, list);
    }

    #[test]
    fn mixed_enums_become_any_and_typed_ones_stay() {
        let (out, changed) = run(mixed_enums_as_any, json!({"enum": [true, "auto", null]}));
        assert_eq!(
            out,
            json!({"description": "One of (checked by the validator): `[true,\"auto\",null]`."})
        );
        assert_eq!(changed, ["/enum"]);
        // bukkit-plugin's `default-permission`: a `type` list does not save typify.
        let (out, changed) = run(
            mixed_enums_as_any,
            json!({"type": ["string", "boolean"], "enum": [true, "op"]}),
        );
        assert_eq!(out["type"], json!(["string", "boolean"]));
        assert!(out.get("enum").is_none());
        assert_eq!(changed, ["/enum"]);
        // expo's `resizeMode`: every type listed, the values strings.
        let (out, changed) = run(
            mixed_enums_as_any,
            json!({"type": ["array", "string", "null"], "enum": ["cover", "contain"]}),
        );
        assert_eq!(out, json!({"enum": ["cover", "contain"]}));
        assert_eq!(changed, ["/type"]);
        for kept in [
            json!({"type": ["string", "null"], "enum": ["http", null]}),
            json!({"enum": ["a", null]}),
            json!({"type": "string", "enum": ["a", 1]}),
        ] {
            assert_eq!(run(mixed_enums_as_any, kept.clone()).0, kept);
        }
    }

    #[test]
    fn indistinct_enums_become_strings() {
        let (out, changed) = run(indistinct_enums_as_strings, json!({"enum": ["GET", "get", "post"]}));
        assert_eq!(out["type"], "string");
        assert!(out.get("enum").is_none());
        assert_eq!(changed, ["/enum"]);
        let (out, _) = run(
            indistinct_enums_as_strings,
            json!({"type": "string", "enum": ["==", "!="]}),
        );
        assert!(out.get("enum").is_none());
        let distinct = json!({"type": "string", "enum": ["not_found", "internal", "a-b"]});
        assert_eq!(run(indistinct_enums_as_strings, distinct.clone()).0, distinct);
        // biome's `AttributeMatcherOperator`: described constants, punctuation only.
        let (out, changed) = run(
            indistinct_enums_as_strings,
            json!({"description": "An operator.", "oneOf": [
                {"description": "`=`", "type": "string", "const": "="},
                {"description": "`~=`", "type": "string", "const": "~="},
                {"enum": ["|="]}]}),
        );
        assert_eq!(changed, ["/oneOf"]);
        assert_eq!(out["type"], "string");
        assert!(out.get("oneOf").is_none());
        assert!(
            out["description"].as_str().unwrap().contains(r#"["=","~=","|="]"#),
            "{out}"
        );
        // Distinct constants, titled branches, and other keywords beside are left alone.
        for kept in [
            json!({"oneOf": [{"const": "a"}, {"const": "b"}]}),
            json!({"oneOf": [{"title": "Eq", "const": "="}, {"title": "Tilde", "const": "~="}]}),
            json!({"minLength": 1, "anyOf": [{"const": "="}, {"const": "~="}]}),
            json!({"anyOf": [{"const": "="}, {"type": "integer"}]}),
        ] {
            assert_eq!(run(indistinct_enums_as_strings, kept.clone()).0, kept);
        }
    }

    #[test]
    fn types_beside_references_are_dropped() {
        let (out, changed) = run(
            drop_types_beside_references,
            json!({"properties": {"p": {"$ref": "#/$defs/Port", "type": "integer"}, "q": {"type": "integer"}}}),
        );
        assert_eq!(
            out,
            json!({"properties": {"p": {"$ref": "#/$defs/Port"}, "q": {"type": "integer"}}})
        );
        assert_eq!(changed, ["/properties/p/type"]);
    }

    #[test]
    fn merge_members_are_plain() {
        let (out, changed) = run(
            plain_merge_members,
            json!({"description": "kept", "allOf": [{"title": "T", "description": "d", "$ref": "#/$defs/A"}, {"required": ["a"]}],
                "propertyNames": {"maxLength": 3}}),
        );
        assert_eq!(
            out,
            json!({"description": "kept", "allOf": [{"$ref": "#/$defs/A"}, {"required": ["a"]}]})
        );
        assert_eq!(changed, ["/propertyNames", "/allOf/0"]);
    }

    #[test]
    fn large_merges_become_any() {
        let refs: Vec<Value> = (0..9).map(|i| json!({"$ref": format!("#/$defs/B{i}")})).collect();
        let (out, changed) = run(
            large_merges_as_any,
            json!({"properties": {
                "big": {"oneOf": [{"$ref": "#/$defs/D"}, {"oneOf": refs}], "allOf": [{"$ref": "#/$defs/Base"}]},
                "small": {"oneOf": [{"$ref": "#/$defs/D"}], "allOf": [{"$ref": "#/$defs/Base"}]},
                "plain": {"oneOf": (0..20).map(|_| json!({"type": "string"})).collect::<Vec<_>>()}}}),
        );
        assert_eq!(changed, ["/properties/big"]);
        assert!(out["properties"]["big"].get("oneOf").is_none());
        assert!(out["properties"]["small"].get("oneOf").is_some());
        assert!(out["properties"]["plain"].get("oneOf").is_some(), "no merge, no limit");
    }

    #[test]
    fn recursive_merges_become_any_and_finite_ones_stay() {
        let merge = json!({"minProperties": 1, "anyOf": [{"type": "string"}, {"$ref": "#/definitions/resource"}]});
        let (out, changed) = run(
            recursive_merges_as_any,
            json!({"$defs": {
                "Root": {"type": "object", "additionalProperties": merge.clone()},
                "resource": {"type": "object", "additionalProperties": merge.clone()},
                "Plain": {"allOf": [{"$ref": "#/$defs/Base"}, {"properties": {"x": {}}}]},
                "Base": {"properties": {"child": {"$ref": "#/$defs/Plain"}}}
            }}),
        );
        assert_eq!(changed, ["/$defs/resource/additionalProperties"]);
        assert_eq!(out["$defs"]["Root"]["additionalProperties"], merge);
        assert!(out["$defs"]["resource"]["additionalProperties"].get("anyOf").is_none());
        assert!(
            out["$defs"]["Plain"].get("allOf").is_some(),
            "a reference back through a member is no merge"
        );
    }

    /// AsyncAPI 3.0: `operation`'s member `reply` would be typed `OperationReply`, the name of
    /// the definition `operationReply`; nested members are named after their parent's type.
    #[test]
    fn members_named_like_a_definition_get_a_title() {
        let (out, changed) = run(
            members_named_like_definitions,
            json!({"$defs": {
                "operation": {"properties": {
                    "reply": {"oneOf": [{"$ref": "#/$defs/Reference"}, {"$ref": "#/$defs/operationReply"}]},
                    "plain": {"type": "string"},
                    "referred": {"$ref": "#/$defs/operationReply"},
                    "annotated": {"anyOf": [{"$ref": "#/$defs/operationReply"}], "description": "D."},
                    "optional": {"anyOf": [{"$ref": "#/$defs/operationReply"}, {"type": "null"}]},
                    "nested": {"properties": {"deep": {"enum": ["a", "b"]}}}}},
                "operationReply": {"properties": {"address": {"type": "string"}}},
                "operationAnnotated": {"type": "integer"},
                "operationOptional": {"type": "integer"},
                "operationNestedDeep": {"type": "integer"},
                "OperationReplyValue": {"type": "integer"},
                "Reference": {"properties": {"$ref": {"type": "string"}}}
            }}),
        );
        assert_eq!(
            changed,
            [
                "/$defs/operation/properties/nested/properties/deep",
                "/$defs/operation/properties/reply"
            ]
        );
        let members = &out["$defs"]["operation"]["properties"];
        assert_eq!(members["reply"]["title"], "OperationReplyValue2", "the next free name");
        assert_eq!(
            members["nested"]["properties"]["deep"]["title"],
            "OperationNestedDeepValue"
        );
        for kept in ["plain", "referred", "annotated", "optional", "nested"] {
            assert!(members[kept].get("title").is_none(), "{kept}");
        }
    }

    /// AsyncAPI 2.x's `schema.json`: an `allOf` of draft-07's metaschema and an object whose
    /// `items` names `schema.json`; both define `items`, so typify merges the two (inlining
    /// `schema.json` into itself, until its stack overflows and the process aborts). A member
    /// name only one operand defines is no merge, nor is one two `anyOf` branches define.
    #[test]
    fn a_merge_of_two_schemas_of_one_member_name_is_followed() {
        let (out, changed) = run(
            recursive_merges_as_any,
            json!({"$defs": {
                "meta": {"type": "object", "properties": {
                    "items": {"anyOf": [{"$ref": "#/$defs/meta"}, {"$ref": "#/$defs/metas"}]},
                    "not": {"$ref": "#/$defs/meta"}}},
                "metas": {"type": "array", "items": {"$ref": "#/$defs/meta"}},
                "schema": {"allOf": [{"$ref": "#/$defs/meta"}, {"properties": {
                    "items": {"anyOf": [{"$ref": "#/$defs/schema"}, {"type": "array"}]}}}]},
                "Tree": {"allOf": [{"$ref": "#/$defs/Base"}, {"properties": {
                    "children": {"type": "array", "items": {"$ref": "#/$defs/Tree"}}}}]},
                "Base": {"properties": {"name": {"type": "string"}}},
                "Either": {"required": ["kind"], "anyOf": [
                    {"properties": {"next": {"$ref": "#/$defs/Either"}}},
                    {"properties": {"next": {"$ref": "#/$defs/Either"}}}]}
            }}),
        );
        assert_eq!(changed, ["/$defs/schema"]);
        assert!(out["$defs"]["schema"].get("allOf").is_none());
        assert!(
            out["$defs"]["Tree"].get("allOf").is_some(),
            "`children` is Tree's alone"
        );
        assert!(
            out["$defs"]["Either"].get("anyOf").is_some(),
            "branches are not merged together"
        );
        // And typify converts what is left, where it aborted on the original.
        let mut defs = out["$defs"].as_object().unwrap().clone();
        defs.remove("Either");
        let typified = crate::typify_stage::run(&defs, typify::TypeSpaceSettings::default, "asyncapi-like.json");
        assert!(typified.is_ok(), "{typified:?}");
    }

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
        // OpenAPI 3.0's `SchemaXORContent`: a described branch, absences in an `allOf` (merged
        // beside `ParameterLocation`'s four branches, typify grew past a gigabyte).
        let xor = json!({"oneOf": [{"required": ["schema"]}, {"required": ["content"], "description": "D.",
            "allOf": [{"not": {"required": ["style"]}}, {"not": {"required": ["explode"]}}]}]});
        assert_eq!(
            run(drop_presence_only_alternatives, xor),
            (json!({}), vec!["/oneOf".to_owned()])
        );
        // A branch of annotations alone asserts nothing, and one with a type is a shape.
        for kept in [
            json!({"oneOf": [{"required": ["a"]}, {"description": "D."}]}),
            json!({"oneOf": [{"required": ["a"]}, {"allOf": [{"type": "object"}]}]}),
            json!({"oneOf": [{"required": ["a"]}, {"not": {"type": "string"}}]}),
            json!({"oneOf": [{"required": ["a"]}, {"allOf": []}]}),
        ] {
            assert_eq!(run(drop_presence_only_alternatives, kept.clone()).0, kept);
        }
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
    fn keep_unknown_members_leaves_the_map_of_a_merge_to_its_members() {
        let (out, changed) = run(
            keep_unknown_members,
            json!({"$defs": {
            "Base": {"type": "object", "properties": {"a": {}}},
            "Derived": {"allOf": [{"$ref": "#/definitions/Base"}], "properties": {"b": {}}},
            "Inline": {"allOf": [{"properties": {"c": {}}}], "properties": {"b": {}}},
            "OpenBase": {"type": "object", "properties": {"a": {}}, "additionalProperties": true},
            "OverOpen": {"allOf": [{"$ref": "#/$defs/OpenBase"}], "properties": {"b": {}}},
            "MapBase": {"properties": {"a": {}}, "additionalProperties": {"type": "string"}},
            "OverMap": {"allOf": [{"$ref": "#/$defs/MapBase"}], "properties": {"b": {}}}}}),
        );
        // Derived's and Inline's members carry the map; OverOpen's member has none to give.
        assert!(out["$defs"]["Derived"].get("additionalProperties").is_none());
        assert!(out["$defs"]["Inline"].get("additionalProperties").is_none());
        assert_eq!(out["$defs"]["Inline"]["allOf"][0]["additionalProperties"], json!({}));
        assert_eq!(out["$defs"]["OverOpen"]["additionalProperties"], json!({}));
        assert!(out["$defs"]["OverMap"].get("additionalProperties").is_none());
        assert_eq!(changed, ["/$defs/Base", "/$defs/Inline/allOf/0", "/$defs/OverOpen"]);
    }

    #[test]
    fn deep_references_that_contain_themselves_become_definitions() {
        let mut schema = json!({"$defs": {
            "config": {"properties": {
                "overrides": {"type": "array", "items": {"properties": {
                    "overrides": {"$ref": "#/$defs/config/properties/overrides"},
                    "env": {"$ref": "#/$defs/config/properties/env"},
                    "tag": {"type": "string"}
                }}},
                "env": {"type": "object"}
            }},
            "user": {"properties": {
                "list": {"$ref": "#/$defs/config/properties/overrides"},
                "tag": {"$ref": "#/$defs/config/properties/overrides/items/properties/tag"}
            }}
        }});
        let hoisted = hoist_deep_references(&mut schema);
        // `env` is not recursive: left to `inline_deep_references`.
        assert_eq!(
            hoisted,
            ["/$defs/config/properties/overrides (to /$defs/config_properties_overrides)"]
        );
        let to = json!({"$ref": "#/$defs/config_properties_overrides"});
        assert_eq!(schema["$defs"]["config"]["properties"]["overrides"], to);
        assert_eq!(schema["$defs"]["user"]["properties"]["list"], to);
        let moved = &schema["$defs"]["config_properties_overrides"];
        assert_eq!(moved["type"], "array");
        assert_eq!(moved["items"]["properties"]["overrides"], to);
        // A reference into the moved subschema follows it.
        assert_eq!(
            schema["$defs"]["user"]["properties"]["tag"],
            json!({"$ref": "#/$defs/config_properties_overrides/items/properties/tag"})
        );
        assert!(hoist_deep_references(&mut schema).is_empty());
        // What is left copies in finitely many steps, and nothing deep remains.
        let inlined = inline_deep_references(&mut schema);
        assert_eq!(inlined.len(), 2, "{inlined:?}");
        assert!(!schema.to_string().contains("#/$defs/config/properties"), "{schema}");
    }

    #[test]
    fn deep_references_under_unknown_keywords_become_definitions() {
        let mut schema = json!({"$defs": {
            "root": {"properties": {"a": {"$ref": "#/definitions/1edb/full"}}},
            "1edb": {
                "full": {"properties": {"b": {"$ref": "#/definitions/6c39/local/one"}}},
                "local": {"type": "string"}
            },
            "6c39": {"local": {"one": {"type": "integer"}}}
        }});
        rebase_references(&mut schema, Some("root"));
        assert_eq!(
            schema["$defs"]["1edb"]["full"]["properties"]["b"]["$ref"],
            "#/$defs/6c39/local/one"
        );
        assert_eq!(
            hoist_deep_references(&mut schema),
            [
                "/$defs/1edb/full (to /$defs/1edb_full)",
                "/$defs/6c39/local/one (to /$defs/6c39_local_one)"
            ]
        );
        assert_eq!(schema["$defs"]["root"]["properties"]["a"]["$ref"], "#/$defs/1edb_full");
        assert_eq!(
            schema["$defs"]["1edb_full"]["properties"]["b"]["$ref"],
            "#/$defs/6c39_local_one"
        );
        assert_eq!(schema["$defs"]["6c39_local_one"], json!({"type": "integer"}));
    }

    #[test]
    fn annotated_references_become_one_branch_alternatives() {
        let mut schema = json!({"$defs": {"a": {"properties": {
            "doc": {"$ref": "#/$defs/b", "description": "D.", "title": "T"},
            "extended": {"$ref": "#/$defs/b", "description": "D.", "_metadata": {"docs::human_name": "E"}},
            "bare": {"$ref": "#/$defs/b"},
            "typed": {"$ref": "#/$defs/b", "type": "string"}
        }}, "b": {"type": "string"}}});
        assert_eq!(
            annotated_references_as_alternatives(&mut schema),
            ["/$defs/a/properties/doc", "/$defs/a/properties/extended"]
        );
        let members = &schema["$defs"]["a"]["properties"];
        assert_eq!(
            members["doc"],
            json!({"anyOf": [{"$ref": "#/$defs/b"}], "description": "D.", "title": "T"})
        );
        assert_eq!(members["bare"], json!({"$ref": "#/$defs/b"}));
        assert_eq!(members["typed"], json!({"$ref": "#/$defs/b", "type": "string"}));
    }

    #[test]
    fn ill_typed_annotations_and_boolean_bounds_are_read() {
        let (out, changed) = run(
            drop_ill_typed_annotations,
            json!({"properties": {"a": {"type": "boolean", "deprecated": "use b", "examples": "Yes", "description": "A."}}}),
        );
        assert_eq!(
            out,
            json!({"properties": {"a": {"type": "boolean", "description": "A."}}})
        );
        assert_eq!(changed, ["/properties/a/deprecated", "/properties/a/examples"]);
        let (out, changed) = run(
            boolean_exclusive_bounds_as_numbers,
            json!({"properties": {
                "a": {"type": "number", "minimum": 0, "exclusiveMinimum": true, "maximum": 9, "exclusiveMaximum": false},
                "b": {"exclusiveMinimum": true}}}),
        );
        assert_eq!(
            out,
            json!({"properties": {"a": {"type": "number", "exclusiveMinimum": 0, "maximum": 9}, "b": {}}})
        );
        assert_eq!(changed.len(), 3);
    }

    #[test]
    fn legacy_reference_siblings_are_dropped_but_targets_and_docs() {
        let mut schema = json!({"$defs": {"p": {"properties": {
            "children": {"$ref": "#/$defs/p", "items": {}, "type": "array", "description": "C."},
            "kept": {"$ref": "#/$defs/p", "properties": {"x": {"type": "string"}}},
            "x": {"$ref": "#/$defs/p/properties/kept/properties/x"}
        }}}});
        let changed = drop_reference_siblings(&mut schema);
        assert_eq!(
            changed,
            [
                "/$defs/p/properties/children/items",
                "/$defs/p/properties/children/type"
            ]
        );
        let members = &schema["$defs"]["p"]["properties"];
        assert_eq!(members["children"], json!({"$ref": "#/$defs/p", "description": "C."}));
        assert!(members["kept"].get("properties").is_some());
    }

    // A name already taken (by its Rust spelling) gets a number.
    #[test]
    fn hoisted_definitions_get_unique_names() {
        let mut schema = json!({"$defs": {
            "a": {"properties": {"b": {"items": {"$ref": "#/$defs/a/properties/b"}}}},
            "A_properties_b": {"type": "string"}
        }});
        assert_eq!(
            hoist_deep_references(&mut schema),
            ["/$defs/a/properties/b (to /$defs/a_properties_b_2)"]
        );
        assert_eq!(schema["$defs"]["A_properties_b"], json!({"type": "string"}));
        assert_eq!(
            schema["$defs"]["a_properties_b_2"]["items"]["$ref"],
            "#/$defs/a_properties_b_2"
        );
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
