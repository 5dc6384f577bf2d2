//! Schema-first code generation for the Pilotage MCP extension (and neighbouring MCP schemas).
//!
//! One direction of data flow: **parse → check `$ref`s → normalise a copy → typify → post-pass
//! → open enums → constructors → render**. [`generate_types`] is the single entry point for
//! Rust types; `cargo xtask regen`
//! calls it for every schema it owns and writes (or, with `--check`, compares) the result.
//!
//! - [`normalise`]: the named rewrites that make typify 0.8 read a schema correctly;
//! - [`typify_stage`]: typify itself, with its panics caught and located;
//! - [`names`]: the name table, given to typify as `title`s of the copy;
//! - [`postpass`]: token rewrites that make the generated types round-trip losslessly;
//! - [`enums`]: string enums made open (`#[non_exhaustive]`, `Unknown(String)`);
//! - [`constructors`]: structs made `#[non_exhaustive]`, with `new` and `with_*` setters;
//! - [`api`]: the snapshot of the generated public API, and the classed difference of two;
//! - [`validators`]: a validator per definition, generated from the original schema;
//! - [`render`]: header, constants, trait impls, formatting.

pub mod api;
pub mod builder;
pub mod constructors;
pub mod enums;
pub mod error;
pub mod names;
pub mod normalise;
pub mod postpass;
pub mod refs;
pub mod render;
pub mod typify_stage;
pub mod unions;
pub mod validators;
pub mod walk;

pub use builder::Builder;
pub use error::CodegenError;
pub use names::NameTable;
pub use render::{ConstantSource, ConstantSpec, GeneratedBy, TypesSettings};

use serde_json::Value;

/// The output of [`generate_types`].
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct GeneratedTypes {
    /// The complete Rust source file, header included.
    pub code: String,
    /// Things the maintainer should know that did not stop generation.
    pub warnings: Vec<String>,
    /// The snapshot of the generated public API ([`api::snapshot`]).
    pub api: String,
    /// The validators' own file, when they are not embedded in `code`
    /// ([`TypesSettings::embed_schema`]).
    pub validators: Option<String>,
}

/// Parses `bytes` as a JSON Schema document, naming `file` in the error.
pub fn parse_schema(bytes: &[u8], file: &str) -> Result<Value, CodegenError> {
    let value: Value =
        serde_json::from_slice(bytes).map_err(|e| CodegenError::new(file, "", format!("not valid JSON: {e}")))?;
    if !value.is_object() {
        return Err(CodegenError::new(file, "", "a schema document must be a JSON object"));
    }
    Ok(value)
}

/// Generates the Rust types for every `$defs` (and draft-07 `definitions`) entry of the schema
/// in `bytes`, and for its root when the root describes a value (named after its `title`).
pub fn generate_types(bytes: &[u8], settings: &TypesSettings) -> Result<GeneratedTypes, CodegenError> {
    let file = settings.source_name.as_str();
    let original = parse_schema(bytes, file)?;
    // typify's copy of the whole document, with its same-document references spelled as
    // JSON Pointers; the validators, the enums and the header read the original.
    let mut typed = original.clone();
    let located = normalise::local_references_as_pointers(&mut typed);
    refs::collect_refs(&typed, file)?;
    let mut defs = typed
        .get("$defs")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    if let Some(Value::Object(draft07)) = typed.get("definitions") {
        for (name, schema) in draft07 {
            defs.entry(name.clone()).or_insert_with(|| schema.clone());
        }
    }
    // A definition that is no schema (a string, a number) gets no type, as it gets no check;
    // a `$ref` to it is refused above.
    defs.retain(|_, schema| schema.is_object() || schema.is_boolean());
    if let Some((name, root)) = render::root_type(&typed) {
        if defs.contains_key(&name) {
            return Err(CodegenError::new(
                file,
                "",
                format!("the root type's name `{name}` is also a definition name"),
            ));
        }
        defs.insert(name, root);
    }
    if defs.is_empty() {
        return Err(CodegenError::new(
            file,
            "/$defs",
            "the schema has no `$defs` and no root type to generate types from",
        ));
    }
    refs::check_unguarded_cycles(&defs, file)?;
    let root_name = render::root_type(&typed).map(|(name, _)| name);
    let def_type_names: Vec<String> = defs.keys().map(|d| render::rust_type_name(d)).collect();
    let named = match &settings.names {
        Some(table) => names::apply(table, &original, &mut defs, &def_type_names)?,
        None => Vec::new(),
    };
    let mut wrapped = serde_json::json!({ "$defs": defs });
    let rebased = normalise::rebase_references(&mut wrapped, root_name.as_deref());
    // Draft-04/06/07: a `$ref` hides its siblings (the document's `$schema`, else the default).
    let draft = original
        .get("$schema")
        .and_then(Value::as_str)
        .and_then(validators::Draft::from_schema_uri)
        .unwrap_or(settings.validators.default_draft);
    let unsiblinged = if draft.ref_hides_siblings() {
        normalise::drop_reference_siblings(&mut wrapped)
    } else {
        Vec::new()
    };
    let prefixed = if draft == validators::Draft::Draft2020 {
        normalise::prefix_items_as_tuples(&mut wrapped)
    } else {
        Vec::new()
    };
    let mut report = normalise::apply_all(&mut wrapped);
    if !prefixed.is_empty() {
        report.insert(0, ("prefix_items_as_tuples", prefixed));
    }
    if !unsiblinged.is_empty() {
        report.insert(0, ("drop_reference_siblings", unsiblinged));
    }
    if !rebased.is_empty() {
        report.insert(0, ("rebase_references", rebased));
    }
    if !located.is_empty() {
        report.insert(0, ("local_references_as_pointers", located));
    }
    normalise::check_size(&wrapped).map_err(|message| CodegenError::new(file, "/$defs", message))?;
    let mut normalised_defs = wrapped["$defs"].as_object().cloned().unwrap_or_default();
    let mut warnings: Vec<String> = report
        .iter()
        .filter(|(name, _)| *name == "external_references_as_any")
        .flat_map(|(_, pointers)| pointers.iter())
        .map(|at| {
            format!("{file}: unresolved external reference at {at}: typed as serde_json::Value, validated as any value")
        })
        .collect();

    let nullable_pointers = normalise::nullable_optional_members(&wrapped);
    // A definition typify cannot convert is typed `serde_json::Value`; the rest is generated.
    let (typified, fallbacks) = typify_stage::run_with_fallbacks(&mut normalised_defs, render::typify_settings, file)?;
    for fallback in &fallbacks {
        warnings.push(format!(
            "{file}: {}: typed as serde_json::Value ({}); the validators check it in full",
            fallback.pointer, fallback.reason
        ));
    }
    // The members of a definition typed as a whole as `serde_json::Value` have no place of
    // their own to be made nullable in.
    let nullable_pointers: Vec<String> = nullable_pointers
        .into_iter()
        .filter(|pointer| {
            !fallbacks
                .iter()
                .any(|f| pointer == &f.pointer || pointer.starts_with(&format!("{}/", f.pointer)))
        })
        .collect();
    let mut syntax: syn::File = syn::parse2(typified.tokens)
        .map_err(|e| CodegenError::new(file, "/$defs", format!("typify produced code that does not parse: {e}")))?;
    postpass::unique_member_names(&mut syntax);
    // A nullable optional member the post-pass cannot place (inside an `anyOf` branch, a map's
    // values, a struct typify merged) keeps typify's `Option<T>`: a warning, not a refusal.
    let mut nullable = postpass::NullableMembers::new();
    let mut placed = Vec::new();
    for pointer in &nullable_pointers {
        match postpass::locate_members(&syntax, &typified.def_types, std::slice::from_ref(pointer)) {
            Ok(found) => {
                nullable.extend(found);
                placed.push(pointer.clone());
            }
            Err(message) => warnings.push(format!(
                "{file}: nullable optional member {message}: typed Option<T> there, so a present null reads as absent (the validator checks it as the schema says)"
            )),
        }
    }
    let nullable_pointers = placed;
    postpass::apply(&mut syntax, &nullable);
    let open = enums::open_string_enums(&mut syntax, &enums::ClosedValues::of_schema(&original))
        .map_err(|message| CodegenError::new(file, "/$defs", message))?;
    constructors::apply(&mut syntax, &normalised_defs, &typified.def_types, file)?;
    let rendered = render::render(
        &original,
        bytes,
        syntax,
        &render::Provenance {
            normalised: &report,
            nullable: &nullable_pointers,
            def_types: &typified.def_types,
            named: &named,
            open: &open,
        },
        settings,
    )?;
    // A reference to another document is typed `serde_json::Value` either way; it is worth a
    // warning only when the validators could not resolve it in the schema set either.
    let warnings: Vec<String> = warnings
        .into_iter()
        .filter(|warning| {
            let Some(reference) = warning
                .strip_suffix(": typed as serde_json::Value, validated as any value")
                .and_then(|w| w.rsplit_once(" ("))
                .and_then(|(_, r)| r.strip_suffix(')'))
            else {
                return true;
            };
            rendered.unresolved.iter().any(|u| u == reference)
        })
        .chain(rendered.notes.iter().cloned())
        .collect();
    Ok(GeneratedTypes {
        code: rendered.code,
        warnings,
        api: rendered.api,
        validators: rendered.validators,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn generate(schema: serde_json::Value) -> Result<GeneratedTypes, CodegenError> {
        let settings = TypesSettings::new("s.json")
            .with_embed_schema("s.schema.json")
            .with_schema_def_trait("::pilotage_types::SchemaDef");
        let generated = generate_types(schema.to_string().as_bytes(), &settings)?;
        syn::parse_file(&generated.code).expect("the generated file parses");
        Ok(generated)
    }

    #[test]
    fn the_corpus_cases_generate() {
        // ruff's `line-length` beside `line_length`, a value `unknown`, a bare CR in a description.
        let code = generate(serde_json::json!({"title": "Conf", "type": "object", "properties": {
            "line-length": {"type": "integer"}, "line_length": {"type": "string"},
            "status": {"type": "string", "enum": ["unknown", "known"]},
            "note": {"type": "string", "description": "first\rsecond\r\nthird"}}}))
        .unwrap()
        .code;
        assert!(
            code.contains("pub line_length_2:") && code.contains("Unknown_(::std::string::String)"),
            "{code}"
        );
        assert!(!code.contains('\r'));
        // Windows' resjson: a merge through a recursive reference (typify overflows its stack).
        generate(serde_json::json!({"type": "object", "title": "Res",
            "additionalProperties": {"minProperties": 1, "anyOf": [{"type": "string"}, {"$ref": "#/definitions/resource"}]},
            "definitions": {"resource": {"type": "object",
                "additionalProperties": {"minProperties": 1, "anyOf": [{"type": "string"}, {"$ref": "#/definitions/resource"}]}}}}))
        .unwrap();
        // A reference to the root, and a date-time (no chrono in the output).
        let code = generate(serde_json::json!({"title": "Tree", "type": "object", "properties": {
            "at": {"type": "string", "format": "date-time"},
            "children": {"type": "array", "items": {"$ref": "#"}}}}))
        .unwrap()
        .code;
        assert!(!code.contains("chrono") && code.contains("Vec<Tree>"), "{code}");
    }

    #[test]
    fn a_definition_typify_cannot_type_is_any_value_with_a_warning_and_still_validated() {
        let generated = generate(serde_json::json!({"title": "Root", "type": "object",
            "properties": {"base": {"$ref": "#/$defs/Base"}, "fine": {"$ref": "#/$defs/Fine"}},
            "$defs": {
                "Fine": {"type": "object", "properties": {"name": {"type": ["string", "null"]}}},
                "Base": {"type": "object", "required": ["kind"],
                    "properties": {"kind": {"type": "string", "enum": ["a", "b"], "const": "a"},
                        "note": {"type": ["string", "null"]}}}}}))
        .unwrap();
        let warning = generated
            .warnings
            .iter()
            .find(|w| w.contains("/$defs/Base"))
            .unwrap_or_else(|| panic!("{:?}", generated.warnings));
        assert!(
            warning.contains("typed as serde_json::Value") && warning.contains("does not support"),
            "{warning}"
        );
        assert!(
            !generated
                .warnings
                .iter()
                .any(|w| w.contains("nullable optional member")),
            "no second warning for the members of the definition typed as a whole: {:?}",
            generated.warnings
        );
        assert!(generated.code.contains("pub struct Fine"), "{}", generated.code);
        assert!(syn::parse_file(&generated.code).is_ok());
        // The validators still check Base: `kind` is required and must be "a".
        let validators = generated.validators.unwrap_or_else(|| generated.code.clone());
        assert!(validators.contains("kind"), "{validators}");
    }

    #[test]
    fn a_pattern_that_needs_annex_b_generates_with_a_note_naming_its_pointer() {
        // SARIF's lone `]`, and a class escape at one end of a range.
        let generated = generate(serde_json::json!({"title": "S", "type": "object", "properties": {
            "name": {"type": "string", "pattern": "^[^\\]]+]$"},
            "id": {"type": "string", "pattern": "^[\\w-.]+$"}}}))
        .unwrap();
        let notes: Vec<&String> = generated.warnings.iter().filter(|w| w.contains("Annex B")).collect();
        assert_eq!(notes.len(), 2, "{:?}", generated.warnings);
        assert!(
            notes
                .iter()
                .any(|n| n.contains("/properties/name/pattern") && n.contains("a lone `]`")),
            "{notes:?}"
        );
        assert!(
            notes
                .iter()
                .any(|n| n.contains("/properties/id/pattern") && n.contains("read as a union")),
            "{notes:?}"
        );
    }

    #[test]
    fn a_nullable_member_the_post_pass_cannot_place_is_a_warning() {
        let generated = generate(serde_json::json!({"title": "S", "type": "object", "properties": {
            "m": {"type": "object", "additionalProperties": {"type": "object",
                "properties": {"n": {"type": ["string", "null"]}}}}}}))
        .unwrap();
        assert!(
            generated
                .warnings
                .iter()
                .any(|w| w.contains("nullable optional member")),
            "{:?}",
            generated.warnings
        );
    }

    #[test]
    fn references_typify_cannot_follow_do_not_refuse_the_schema() {
        // An `$anchor`, a draft-07 plain-name `$id`, a nested `$id` (and a reference relative
        // to it), and another document.
        let generated = generate(serde_json::json!({
            "$schema": "http://json-schema.org/draft-07/schema#",
            "$id": "https://example.com/conf.json", "title": "Conf", "type": "object",
            "definitions": {
                "count": {"$id": "#count", "type": "integer"},
                "name": {"$anchor": "name", "type": "string"},
                "part": {"$id": "https://example.com/parts/part.json", "type": "object",
                    "definitions": {"flag": {"type": "boolean"}},
                    "properties": {"flag": {"$ref": "#/definitions/flag"}}}},
            "properties": {
                "count": {"$ref": "#count"},
                "name": {"$ref": "#name"},
                "part": {"$ref": "parts/part.json"},
                "flag": {"$ref": "parts/part.json#/definitions/flag"},
                "other": {"$ref": "https://example.org/other.json#/definitions/x"}}}))
        .unwrap();
        let code = &generated.code;
        for member in [
            "pub count: ::std::option::Option<Count>",
            "pub name: ::std::option::Option<Name>",
            "pub part: ::std::option::Option<Part>",
            "pub flag: ::std::option::Option<bool>",
            "pub other: ::std::option::Option<::serde_json::Value>",
        ] {
            assert!(code.contains(member), "{member}\n{code}");
        }
        assert!(code.contains("local_references_as_pointers"), "{code}");
        assert!(
            generated.warnings.iter().any(|w| w.contains("other.json")),
            "{:?}",
            generated.warnings
        );
    }

    #[test]
    fn a_merge_of_recursive_objects_finishes_and_keeps_unknown_members() {
        // SchemaStore's accelerator, reduced: `K0-2` merges `K0-1` with a `type`, and `K0-1`'s
        // members refer to `K0-2` again. With a map of unknown members on both sides of the
        // merge, typify did not finish in 20 s (measured on this schema); the merge's map is
        // its member's.
        let any = serde_json::json!({"anyOf": [{"$ref": "#/definitions/K0-2"}, {"$ref": "#/definitions/K1-2"}]});
        let mut definitions = serde_json::json!({"Expression": {"type": "string"}});
        for kind in ["K0", "K1"] {
            definitions[format!("{kind}-1")] = serde_json::json!({"type": "object", "properties": {
                "condition": {"allOf": [{"$ref": "#/definitions/Expression"}], "description": "When."},
                "then": {"type": "array", "items": any}, "other": any}});
            definitions[format!("{kind}-2")] = serde_json::json!({"type": "object",
                "properties": {"type": {"const": kind}}, "required": ["type"],
                "allOf": [{"$ref": format!("#/definitions/{kind}-1")}]});
        }
        let generated = generate(serde_json::json!({"$schema": "http://json-schema.org/draft-07/schema#",
            "definitions": definitions, "type": "object", "properties": {"engine": any}}))
        .unwrap();
        let code = &generated.code;
        let merged = &code[code.find("pub struct K02 {").expect("a K02 struct")..];
        let merged = &merged[..merged.find("\n}").unwrap()];
        assert!(merged.contains("pub extra: ::serde_json::Map<"), "{merged}");
        assert!(merged.contains("pub other: ::std::option::Option<"), "{merged}");
    }

    #[test]
    fn the_corpus_refusals_of_the_second_round_generate() {
        // A root that is a `$ref` to a schema kept elsewhere (renovate, poetry, taskfile).
        let generated = generate(serde_json::json!({
            "title": "Golangci-lint Configuration",
            "$ref": "https://golangci-lint.run/jsonschema/golangci.jsonschema.json"}))
        .unwrap();
        assert!(
            generated.code.contains("GolangciLintConfiguration"),
            "{}",
            generated.code
        );
        assert!(
            generated
                .warnings
                .iter()
                .any(|w| w.contains("golangci.jsonschema.json")),
            "{:?}",
            generated.warnings
        );
        // eslintrc: a deep reference to a member whose items refer to it again.
        let code = generate(serde_json::json!({"title": "Eslint", "type": "object", "properties": {
            "overrides": {"type": "array", "items": {"type": "object", "properties": {
                "overrides": {"$ref": "#/properties/overrides"}}}}}}))
        .unwrap()
        .code;
        assert!(code.contains("Option<EslintPropertiesOverrides>"), "{code}");
        // Vector's schemas: references into a definition's unknown keywords.
        generate(serde_json::json!({"title": "V", "type": "object",
            "properties": {"a": {"$ref": "#/definitions/1edb/full"}},
            "definitions": {"1edb": {"full": {"type": "object",
                "properties": {"b": {"$ref": "#/definitions/6c39/local/one"}}}},
                "6c39": {"local": {"one": {"type": "integer"}}}}}))
        .unwrap();
        // accelerator: a merge of an object whose member is an annotated `$ref`.
        generate(serde_json::json!({"definitions": {"expression": {"type": "string"},
            "combo": {"properties": {"x": {}}, "allOf": [{"properties": {
                "condition": {"$ref": "#/definitions/expression", "description": "When."}}}]}}}))
        .unwrap();
        // warp-workflows: a nullable constrained string.
        let code = generate(serde_json::json!({"definitions": {
            "nullable-string": {"oneOf": [{"type": "string", "minLength": 1}, {"type": "null"}]}}}))
        .unwrap()
        .code;
        assert!(code.contains("pub struct NullableStringValue"), "{code}");
        // prometheus' `scheme`: a nullable enum keeps its split (one type per name).
        let code = generate(serde_json::json!({"definitions": {
            "scheme": {"type": ["string", "null"], "enum": ["http", "https", null]}}}))
        .unwrap()
        .code;
        assert!(
            code.contains("pub enum SchemeValue") && code.contains("pub struct Scheme("),
            "{code}"
        );
    }

    #[test]
    fn unions_convert_from_their_string_and_number_alternatives() {
        let code = generate(serde_json::json!({"$defs": {
            "Range": {"type": "object", "properties": {"start": {"type": "integer"}}, "required": ["start"]},
            "Path": {"anyOf": [{"type": "string"}, {"$ref": "#/$defs/Range"}]},
            "Amount": {"anyOf": [{"type": "number"}, {"$ref": "#/$defs/Range"}]},
            "Id": {"type": "string", "description": "An id."},
            "Named": {"anyOf": [{"$ref": "#/$defs/Id"}, {"$ref": "#/$defs/Range"}]},
            "Scalar": {"anyOf": [{"type": "string"}, {"type": "integer"}]}}}))
        .unwrap()
        .code;
        let conversions = |union: &str, source: &str| {
            code.matches(&format!("impl ::std::convert::From<{source}> for {union} {{"))
                .count()
        };
        // A string alternative: from `&str` and `String`, beside typify's own conversions.
        assert_eq!(conversions("Path", "&str"), 1, "{code}");
        assert_eq!(conversions("Path", "::std::string::String"), 1, "{code}");
        assert_eq!(conversions("Path", "Range"), 1, "{code}");
        assert!(
            code.contains("Self::String(::std::borrow::ToOwned::to_owned(value))"),
            "{code}"
        );
        // A newtype over `String` is built through its own conversion.
        assert_eq!(conversions("Named", "&str"), 1, "{code}");
        assert_eq!(conversions("Named", "::std::string::String"), 1, "{code}");
        // A number alternative typify already converts from is not converted twice.
        assert_eq!(conversions("Amount", "f64"), 1, "{code}");
        assert_eq!(conversions("Amount", "&str"), 0, "{code}");
        assert_eq!(conversions("Scalar", "i64"), 1, "{code}");
        assert_eq!(conversions("Scalar", "&str"), 1, "{code}");
    }

    #[test]
    fn annotated_references_give_the_types_they_gave_before() {
        let defs = serde_json::json!({
            "b": {"type": "string", "minLength": 2},
            "a": {"type": "object", "required": ["c"], "properties": {
                "c": {"$ref": "#/$defs/b", "description": "The c.", "title": "Cee"},
                "d": {"$ref": "#/$defs/a", "description": "Self."}}}});
        let mut rewritten = serde_json::json!({ "$defs": defs.clone() });
        assert_eq!(normalise::annotated_references_as_alternatives(&mut rewritten).len(), 2);
        let types = |defs: &serde_json::Value| {
            typify_stage::run(defs.as_object().unwrap(), render::typify_settings, "s.json")
                .unwrap()
                .tokens
                .to_string()
        };
        assert_eq!(types(&defs), types(&rewritten["$defs"]));
    }
}
