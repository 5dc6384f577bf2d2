//! Validation against the **original** vendored schema (never the codegen's normalised copy).
//!
//! [`SchemaValidators`] owns one schema document and compiles, on first use and once per
//! process, one `jsonschema` validator per `$defs` entry; it is `Sync`, so one instance serves
//! every thread. [`pilotage`] is the instance for the Pilotage schema, which backs
//! [`SchemaDef::validate`], [`parse`] and [`parse_slice`].

use std::collections::BTreeMap;
use std::fmt;
use std::sync::{LazyLock, OnceLock};

use crate::escape_pointer_token;
pub use jsonschema::Validator;
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::SchemaDef;

/// The Pilotage schema, embedded byte for byte (regen keeps `schema/pilotage.schema.json`
/// in this crate identical to the vendored `schemas/pilotage.schema.json`).
pub const PILOTAGE_SCHEMA_JSON: &str = include_str!("../schema/pilotage.schema.json");

/// One violation of a schema.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Violation {
    /// JSON Pointer of the offending location in the instance (`""` for the whole value).
    pub instance_pointer: String,
    /// JSON Pointer of the violated keyword in the schema document (e.g. `/$defs/Guide/required`).
    pub schema_pointer: String,
    /// What is wrong, e.g. `"title" is a required property` (at most [`MAX_MESSAGE_BYTES`]
    /// bytes of it, then a note of the full length).
    pub message: String,
}

impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let at = if self.instance_pointer.is_empty() {
            "(root)"
        } else {
            &self.instance_pointer
        };
        write!(f, "{at}: {} (schema {})", self.message, self.schema_pointer)
    }
}

/// Every violation of one value against one definition.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ValidationErrors {
    /// The definition validated against (`"."` for a document's root schema).
    pub def: String,
    /// All violations, in the validator's order; never empty.
    pub violations: Vec<Violation>,
}

impl fmt::Display for ValidationErrors {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let count = self.violations.len();
        write!(
            f,
            "not a valid {}: {count} violation{}",
            self.def,
            if count == 1 { "" } else { "s" }
        )?;
        for violation in &self.violations {
            write!(f, "\n  {violation}")?;
        }
        Ok(())
    }
}

impl std::error::Error for ValidationErrors {}

/// Failure to set up validation for a definition.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SchemaError {
    /// The document has no such `$defs` entry.
    UnknownDef(String),
    /// The schema (or the definition) does not compile.
    Invalid { def: String, message: String },
}

impl fmt::Display for SchemaError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::UnknownDef(def) => write!(f, "unknown definition `{def}`: the schema has no `$defs/{def}`"),
            Self::Invalid { def, message } => write!(f, "the schema of `{def}` does not compile: {message}"),
        }
    }
}

impl std::error::Error for SchemaError {}

/// Keywords of a document's root that are kept when validating against one of its `$defs`:
/// identification and the definitions themselves, never the root's own assertions.
const ROOT_CONTEXT_KEYWORDS: &[&str] = &[
    "$schema",
    "$id",
    "$defs",
    "definitions",
    "$vocabulary",
    "$anchor",
    "$dynamicAnchor",
];

/// Every `$ref` of `document` that points into another document, sorted, without duplicates.
fn external_references(document: &Value) -> Vec<String> {
    fn collect(value: &Value, out: &mut std::collections::BTreeSet<String>) {
        match value {
            Value::Object(object) => {
                if let Some(Value::String(reference)) = object.get("$ref") {
                    if !reference.starts_with('#') {
                        out.insert(reference.clone());
                    }
                }
                for (key, child) in object {
                    if !matches!(key.as_str(), "const" | "enum" | "default" | "examples") {
                        collect(child, out);
                    }
                }
            }
            Value::Array(items) => items.iter().for_each(|item| collect(item, out)),
            _ => {}
        }
    }
    let mut found = std::collections::BTreeSet::new();
    collect(document, &mut found);
    found.into_iter().collect()
}

/// Stands in for documents that are not available: every location the schema references in
/// them accepts any value. Built from the references themselves, so only what is referenced
/// exists; nothing is fetched.
#[derive(Clone)]
struct PermissiveStubs(Value);

impl PermissiveStubs {
    fn new(references: &[String]) -> Self {
        let mut stub = serde_json::Map::new();
        for reference in references {
            let Some((_, fragment)) = reference.split_once('#') else {
                continue;
            };
            let tokens: Vec<String> = fragment
                .split('/')
                .filter(|t| !t.is_empty())
                .map(|t| t.replace("~1", "/").replace("~0", "~"))
                .collect();
            let mut node = &mut stub;
            for (index, token) in tokens.iter().enumerate() {
                let last = index + 1 == tokens.len();
                let entry = node.entry(token.clone()).or_insert_with(|| {
                    if last {
                        Value::Bool(true)
                    } else {
                        Value::Object(Default::default())
                    }
                });
                if last {
                    break;
                }
                if !entry.is_object() {
                    *entry = Value::Object(Default::default());
                }
                node = entry.as_object_mut().expect("made an object above");
            }
        }
        Self(Value::Object(stub))
    }
}

impl jsonschema::Retrieve for PermissiveStubs {
    fn retrieve(&self, _uri: &jsonschema::Uri<String>) -> Result<Value, Box<dyn std::error::Error + Send + Sync>> {
        Ok(self.0.clone())
    }
}

/// Per-definition validators for one schema document, compiled lazily and once.
///
/// References to other documents (`other.schema.json#/$defs/x`) are never fetched: when the
/// document has any, they are treated as accepting any value, the same fallback the codegen
/// types them with (`serde_json::Value`); [`SchemaValidators::unresolved_references`] lists them.
pub struct SchemaValidators {
    document: Value,
    /// The compatible reading of `document`, built on first use (`None` inside it).
    compatible: OnceLock<Box<SchemaValidators>>,
    /// Whether this is the compatible reading of another instance.
    widened: bool,
    unresolved: Vec<String>,
    root: OnceLock<Result<Validator, SchemaError>>,
    defs: BTreeMap<String, OnceLock<Result<Validator, SchemaError>>>,
}

impl fmt::Debug for SchemaValidators {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SchemaValidators")
            .field("defs", &self.defs.keys().collect::<Vec<_>>())
            .finish()
    }
}

impl SchemaValidators {
    /// Validators for `document`; nothing is compiled until a definition is first used.
    pub fn new(document: Value) -> Self {
        let defs = ["$defs", "definitions"]
            .iter()
            .filter_map(|key| document.get(*key).and_then(Value::as_object))
            .flat_map(|defs| defs.keys().cloned())
            .map(|name| (name, OnceLock::new()))
            .collect();
        let unresolved = external_references(&document);
        Self {
            document,
            compatible: OnceLock::new(),
            widened: false,
            unresolved,
            root: OnceLock::new(),
            defs,
        }
    }

    /// The compatible reading of this schema: every open enum widened to any string
    /// ([`widen_open_enums`]), every other rule kept; built on first use. The compatible
    /// reading of a compatible reading is itself.
    pub fn compatible(&self) -> &SchemaValidators {
        if self.widened {
            return self;
        }
        self.compatible.get_or_init(|| {
            let mut document = self.document.clone();
            widen_open_enums(&mut document);
            let mut widened = SchemaValidators::new(document);
            widened.widened = true;
            Box::new(widened)
        })
    }

    /// Whether this is a compatible reading ([`Self::compatible`]).
    pub fn is_compatible_reading(&self) -> bool {
        self.widened
    }

    /// The references to other documents, each validated as accepting any value.
    pub fn unresolved_references(&self) -> &[String] {
        &self.unresolved
    }

    /// The schema document.
    pub fn document(&self) -> &Value {
        &self.document
    }

    /// The names of the document's definitions, sorted.
    pub fn def_names(&self) -> impl Iterator<Item = &str> {
        self.defs.keys().map(String::as_str)
    }

    fn compile(&self, def: &str) -> Result<Validator, SchemaError> {
        let schema = if def == "." {
            self.document.clone()
        } else {
            let container = if self
                .document
                .pointer(&format!("/$defs/{}", escape_pointer_token(def)))
                .is_some()
            {
                "$defs"
            } else {
                "definitions"
            };
            let mut context = serde_json::Map::new();
            if let Value::Object(root) = &self.document {
                for (key, value) in root {
                    if ROOT_CONTEXT_KEYWORDS.contains(&key.as_str()) {
                        context.insert(key.clone(), value.clone());
                    }
                }
            }
            context.insert(
                "$ref".into(),
                Value::String(format!("#/{container}/{}", escape_pointer_token(def))),
            );
            Value::Object(context)
        };
        let mut options = jsonschema::options();
        if !self.unresolved.is_empty() {
            options = options.with_retriever(PermissiveStubs::new(&self.unresolved));
        }
        options.build(&schema).map_err(|e| SchemaError::Invalid {
            def: def.to_owned(),
            message: e.to_string(),
        })
    }

    /// The compiled validator of `def` (`"."` for the document's root schema).
    pub fn validator(&self, def: &str) -> Result<&Validator, SchemaError> {
        let cell = if def == "." {
            &self.root
        } else {
            self.defs
                .get(def)
                .ok_or_else(|| SchemaError::UnknownDef(def.to_owned()))?
        };
        cell.get_or_init(|| self.compile(def)).as_ref().map_err(Clone::clone)
    }

    /// Validates `instance` against `def`, listing every violation.
    pub fn validate(&self, def: &str, instance: &Value) -> Result<Result<(), ValidationErrors>, SchemaError> {
        Ok(validate_with(def, self.validator(def)?, instance))
    }

    /// Whether `instance` is valid against `def`, without collecting violations.
    pub fn is_valid(&self, def: &str, instance: &Value) -> Result<bool, SchemaError> {
        Ok(self.validator(def)?.is_valid(instance))
    }
}

/// Validates `instance` with the compiled `validator` of `def`, listing every violation.
#[inline]
pub fn validate_with(def: &str, validator: &Validator, instance: &Value) -> Result<(), ValidationErrors> {
    // The common case first: a valid value costs one boolean pass, nothing collected.
    if validator.is_valid(instance) {
        return Ok(());
    }
    collect_violations(def, validator, instance)
}

/// The slow path of [`validate_with`], kept out of line so the fast path stays small.
#[cold]
#[inline(never)]
fn collect_violations(def: &str, validator: &Validator, instance: &Value) -> Result<(), ValidationErrors> {
    let violations: Vec<Violation> = validator
        .iter_errors(instance)
        .map(|error| Violation {
            instance_pointer: error.instance_path().as_str().to_owned(),
            schema_pointer: error.schema_path().as_str().to_owned(),
            message: bounded_message(error.to_string()),
        })
        .collect();
    if violations.is_empty() {
        Ok(())
    } else {
        Err(ValidationErrors {
            def: def.to_owned(),
            violations,
        })
    }
}

/// Longest violation message kept, in bytes. Messages quote the offending value, which for
/// hostile input can be megabytes; the pointers say where it is.
pub const MAX_MESSAGE_BYTES: usize = 1000;

fn bounded_message(mut message: String) -> String {
    if message.len() > MAX_MESSAGE_BYTES {
        let total = message.len();
        let mut cut = MAX_MESSAGE_BYTES;
        while !message.is_char_boundary(cut) {
            cut -= 1;
        }
        message.truncate(cut);
        message.push_str(&format!("... ({total} bytes in all)"));
    }
    message
}

static PILOTAGE: LazyLock<SchemaValidators> = LazyLock::new(|| {
    let document =
        serde_json::from_str(PILOTAGE_SCHEMA_JSON).expect("the embedded Pilotage schema is JSON (checked by tests)");
    SchemaValidators::new(document)
});

/// The validators of the Pilotage schema (shared, compiled per definition on first use).
pub fn pilotage() -> &'static SchemaValidators {
    &PILOTAGE
}

/// The compiled validator of `def` in `validators`. `def` comes from a generated `SchemaDef`
/// impl, whose definitions exist and compile (the tests validate against every one), so a
/// failure here is a defect of the generated code, not of any input.
pub fn generated_def_validator(validators: &'static SchemaValidators, def: &'static str) -> &'static Validator {
    validators
        .validator(def)
        .unwrap_or_else(|e| panic!("generated SchemaDef impl is broken: {e}"))
}

/// Failure of [`parse`] or [`parse_slice`].
#[derive(Debug)]
pub enum ParseError {
    /// The bytes are not JSON.
    Json(serde_json::Error),
    /// The value violates the schema.
    Invalid(ValidationErrors),
    /// The schema accepts the value but the Rust type does not: a defect of the toolkit,
    /// reported rather than hidden.
    Type {
        def: &'static str,
        error: serde_json::Error,
    },
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Json(e) => write!(f, "not JSON: {e}"),
            Self::Invalid(errors) => errors.fmt(f),
            Self::Type { def, error } => {
                write!(
                    f,
                    "the schema accepts this {def} but its Rust type does not (please report): {error}"
                )
            }
        }
    }
}

impl std::error::Error for ParseError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Self::Json(e) | Self::Type { error: e, .. } => Some(e),
            Self::Invalid(e) => Some(e),
        }
    }
}

/// Keywords whose value is one subschema.
const SINGLE_SUBSCHEMA: &[&str] = &[
    "additionalProperties",
    "additionalItems",
    "unevaluatedProperties",
    "unevaluatedItems",
    "propertyNames",
    "contains",
    "not",
    "if",
    "then",
    "else",
    "items",
];
/// Keywords whose value is an object of subschemas.
const MAP_OF_SUBSCHEMAS: &[&str] = &[
    "properties",
    "patternProperties",
    "dependentSchemas",
    "$defs",
    "definitions",
];
/// Keywords whose value is an array of subschemas.
const ARRAY_OF_SUBSCHEMAS: &[&str] = &["allOf", "anyOf", "oneOf", "prefixItems", "items"];

/// Whether `schema` only fixes one string with `const` (annotations aside).
fn is_string_const_branch(schema: &Value) -> bool {
    let Value::Object(object) = schema else { return false };
    object.get("const").is_some_and(Value::is_string)
        && object.keys().all(|k| {
            matches!(
                k.as_str(),
                "const" | "type" | "title" | "description" | "$comment" | "examples" | "deprecated"
            )
        })
        && object.get("type").is_none_or(|t| t == "string")
}

/// Rewrites `schema` into its compatible reading: every *open enum* accepts any string, every
/// other rule stays. An open enum is what the generated types make open
/// (`pilotage-codegen/src/enums.rs`): an `enum` whose values are all strings, and an
/// `anyOf`/`oneOf` whose every branch is a string `const`. A lone `const` (a binding-fixed
/// value such as `"pilotage_get_guide"`) stays closed. Returns how many were widened.
pub fn widen_open_enums(schema: &mut Value) -> usize {
    let Value::Object(object) = schema else { return 0 };
    let mut widened = 0;
    let enum_of_strings = matches!(object.get("enum"), Some(Value::Array(values)) if !values.is_empty() && values.iter().all(Value::is_string));
    if enum_of_strings {
        object.remove("enum");
        object.insert("type".into(), Value::String("string".into()));
        widened += 1;
    }
    for keyword in ["anyOf", "oneOf"] {
        let consts = matches!(object.get(keyword), Some(Value::Array(branches)) if !branches.is_empty() && branches.iter().all(is_string_const_branch));
        if consts {
            object.remove(keyword);
            object.insert("type".into(), Value::String("string".into()));
            widened += 1;
        }
    }
    for (key, child) in object.iter_mut() {
        let key = key.as_str();
        match child {
            Value::Array(items) if ARRAY_OF_SUBSCHEMAS.contains(&key) => {
                widened += items.iter_mut().map(widen_open_enums).sum::<usize>();
            }
            Value::Object(members) if MAP_OF_SUBSCHEMAS.contains(&key) => {
                widened += members.values_mut().map(widen_open_enums).sum::<usize>();
            }
            child @ Value::Object(_) if SINGLE_SUBSCHEMA.contains(&key) => widened += widen_open_enums(child),
            _ => {}
        }
    }
    widened
}

/// Validates `value` against `T`'s definition, then deserializes it (the pinned reading: see
/// the [module docs](self)).
pub fn parse<T: SchemaDef + DeserializeOwned>(value: &Value) -> Result<T, ParseError> {
    T::validate(value).map_err(ParseError::Invalid)?;
    T::deserialize(value).map_err(|error| ParseError::Type { def: T::DEF, error })
}

/// Parses JSON bytes, validates them against `T`'s definition, then deserializes.
pub fn parse_slice<T: SchemaDef + DeserializeOwned>(bytes: &[u8]) -> Result<T, ParseError> {
    let value: Value = serde_json::from_slice(bytes).map_err(ParseError::Json)?;
    parse(&value)
}

/// [`parse`] in the compatible reading: validates `value` against `T`'s definition with every
/// open enum widened to any string ([`SchemaDef::validate_compatible`]), then deserializes it;
/// a value a later minor version added becomes the enum's `Unknown(String)`. For reading
/// what another party sent (a client reading a server).
pub fn parse_compatible<T: SchemaDef + DeserializeOwned>(value: &Value) -> Result<T, ParseError> {
    T::validate_compatible(value).map_err(ParseError::Invalid)?;
    T::deserialize(value).map_err(|error| ParseError::Type { def: T::DEF, error })
}

/// [`parse_slice`] in the compatible reading ([`parse_compatible`]).
pub fn parse_slice_compatible<T: SchemaDef + DeserializeOwned>(bytes: &[u8]) -> Result<T, ParseError> {
    let value: Value = serde_json::from_slice(bytes).map_err(ParseError::Json)?;
    parse_compatible(&value)
}
