//! Validation against the **original** vendored schema (never the codegen's normalised copy),
//! by code generated from it.
//!
//! `cargo xtask regen` writes a validator for every `$defs` entry (`src/validators.rs`, from
//! `pilotage-codegen/src/validators/`), for both readings: **pinned** (the schema as written)
//! and **compatible** (every open enum widened to any string, see [`widen_open_enums`]). They
//! back [`SchemaDef::validate`], [`SchemaDef::is_valid`], [`parse`] and [`parse_slice`], and are
//! reachable by definition name through [`pilotage`]. Nothing is compiled at run time and no
//! regex engine is linked: patterns are compiled by the generator ([`pattern`]).
//!
//! Which reading to use: an engine checks what it *sends* and what it is *sent* against the
//! pinned reading (it implements exactly this version); a client reading a server uses the
//! compatible one, so that a later minor version's new enum value is accepted (and becomes the
//! enum's `Unknown(String)`), while every other rule still holds.
//!
//! ```
//! use pilotage_types::{parse, SchemaDef, VersionString};
//! use serde_json::json;
//!
//! assert!(VersionString::is_valid(&json!("1.1")));
//! let errors = VersionString::validate(&json!("1.1.0")).unwrap_err();
//! assert_eq!(errors.violations[0].schema_pointer, "/$defs/VersionString/pattern");
//! let version: VersionString = parse(&json!("1.1")).unwrap();
//! assert_eq!(version.as_str(), "1.1");
//! ```
//!
//! With the feature `interpreter`, [`SchemaValidators`] validates against any schema document
//! by interpreting it with `jsonschema` (the command line's `--schema PATH`; the tests' oracle).

use std::fmt;

use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::SchemaDef;

pub mod format;
#[cfg(feature = "interpreter")]
mod interpreter;
pub mod pattern;
pub mod runtime;
pub mod stream;

#[cfg(feature = "interpreter")]
pub use interpreter::{validate_with, SchemaValidators, Validator};
use runtime::{Check, Cx, Loc};

/// The Pilotage schema, embedded byte for byte (regen keeps `schema/pilotage.schema.json`
/// in this crate identical to the vendored `schemas/pilotage.schema.json`).
pub const PILOTAGE_SCHEMA_JSON: &str = include_str!("../../schema/pilotage.schema.json");

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
    /// The schema (or the definition) does not compile (the interpreter only: generated
    /// validators were compiled when they were generated).
    Invalid {
        /// The definition.
        def: String,
        /// What is wrong with it.
        message: String,
    },
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

/// The generated validators of one schema document, by definition name, in one reading.
///
/// ```
/// let manifest = serde_json::json!({"pilotage": "1.1"});
/// let errors = pilotage_types::validate::pilotage().validate("Manifest", &manifest).unwrap();
/// assert!(errors.is_err());
/// assert!(pilotage_types::validate::pilotage().validate("NoSuchDef", &manifest).is_err());
/// ```
#[derive(Debug, Clone, Copy)]
pub struct Validators {
    defs: &'static [(&'static str, Check)],
    unresolved: &'static [&'static str],
    program: &'static [stream::Node],
    streams: &'static [(&'static str, u32)],
    compatible: bool,
}

impl Validators {
    /// The validators of a generated table, sorted by definition name (generated code calls
    /// this).
    pub const fn new(defs: &'static [(&'static str, Check)], unresolved: &'static [&'static str]) -> Self {
        Self {
            defs,
            unresolved,
            program: &[],
            streams: &[],
            compatible: false,
        }
    }

    /// The same validators with their stream program: `program`, and each definition's node
    /// in it, sorted by definition name (generated code calls this).
    pub const fn with_streams(self, program: &'static [stream::Node], streams: &'static [(&'static str, u32)]) -> Self {
        Self {
            program,
            streams,
            ..self
        }
    }

    /// The entry of `def` into the stream program (validation fused into deserialization,
    /// see [`stream`]), if the document has one.
    pub fn stream(&self, def: &str) -> Option<stream::Stream> {
        self.streams
            .binary_search_by(|(name, _)| (*name).cmp(def))
            .ok()
            .map(|index| stream::Stream::new(self.program, self.streams[index].1))
    }

    /// The references to other documents, each validated as accepting any value (as the
    /// generated types hold them as `serde_json::Value`).
    pub fn unresolved_references(&self) -> &'static [&'static str] {
        self.unresolved
    }

    /// The same validators in the compatible reading (every open enum widened to any string).
    pub fn compatible(self) -> Self {
        Self {
            compatible: true,
            ..self
        }
    }

    /// Whether this is the compatible reading.
    pub fn is_compatible_reading(&self) -> bool {
        self.compatible
    }

    /// The names of the definitions, sorted (`.` is a document's root).
    pub fn def_names(&self) -> impl Iterator<Item = &'static str> {
        self.defs.iter().map(|(name, _)| *name)
    }

    /// The generated check of `def`.
    pub fn check(&self, def: &str) -> Result<Check, SchemaError> {
        self.defs
            .binary_search_by(|(name, _)| (*name).cmp(def))
            .map(|index| self.defs[index].1)
            .map_err(|_| SchemaError::UnknownDef(def.to_owned()))
    }

    /// Validates `instance` against `def`, listing every violation.
    pub fn validate(&self, def: &str, instance: &Value) -> Result<Result<(), ValidationErrors>, SchemaError> {
        Ok(run(def, self.check(def)?, instance, self.compatible))
    }

    /// Whether `instance` is valid against `def`, without collecting violations.
    pub fn is_valid(&self, def: &str, instance: &Value) -> Result<bool, SchemaError> {
        Ok(verdict(self.check(def)?, instance, self.compatible))
    }
}

/// The generated validators of the Pilotage schema, pinned reading
/// ([`Validators::compatible`] for the other).
pub fn pilotage() -> Validators {
    crate::validators::VALIDATORS
}

/// Whether `instance` passes `check` (stops at the first violation, allocates nothing).
#[inline]
pub fn verdict(check: Check, instance: &Value, compatible: bool) -> bool {
    check(&mut Cx::new(false, compatible), instance, &Loc::Root)
}

/// Runs `check` on `instance`, listing every violation when it fails. Valid values cost one
/// pass that stops at the first violation and records nothing.
#[inline]
pub fn run(def: &str, check: Check, instance: &Value, compatible: bool) -> Result<(), ValidationErrors> {
    if verdict(check, instance, compatible) {
        return Ok(());
    }
    collect(def, check, instance, compatible)
}

#[cold]
#[inline(never)]
fn collect(def: &str, check: Check, instance: &Value, compatible: bool) -> Result<(), ValidationErrors> {
    let mut cx = Cx::new(true, compatible);
    check(&mut cx, instance, &Loc::Root);
    let violations = cx.into_violations();
    if violations.is_empty() {
        // Unreachable for a correct generator: both passes run the same code.
        return Ok(());
    }
    Err(ValidationErrors {
        def: def.to_owned(),
        violations,
    })
}

/// Longest violation message kept, in bytes. Messages quote the offending value, which for
/// hostile input can be megabytes; the pointers say where it is.
pub const MAX_MESSAGE_BYTES: usize = 1000;

pub(crate) fn bounded_message(mut message: String) -> String {
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
///
/// On a `Value` the two walks (the generated check, then serde) are faster than one walk
/// through the stream program ([`stream`]): the check reads the value in place, where the
/// program must be handed each value through serde.
pub fn parse<T: SchemaDef + DeserializeOwned>(value: &Value) -> Result<T, ParseError> {
    T::validate(value).map_err(ParseError::Invalid)?;
    T::deserialize(value).map_err(|error| ParseError::Type { def: T::DEF, error })
}

/// Parses JSON bytes, validates them against `T`'s definition and deserializes them.
///
/// With the type's stream program ([`stream`]), the bytes are deserialized straight into `T`,
/// every value checked as it is read: no `Value` is built. Only when that cannot show the
/// document valid (it is not, it is no JSON, or the program cannot decide) is it parsed into
/// a `Value`, validated (naming every violation) and deserialized from it (moving its strings
/// into `T` rather than copying them).
pub fn parse_slice<T: SchemaDef + DeserializeOwned>(bytes: &[u8]) -> Result<T, ParseError> {
    if let Some(program) = T::STREAM {
        let mut deserializer = serde_json::Deserializer::from_slice(bytes);
        if let Ok((parsed, stream::Verdict::Valid)) =
            stream::parse_until_invalid::<T, _>(program, false, &mut deserializer)
        {
            if deserializer.end().is_ok() {
                return Ok(parsed);
            }
        }
    }
    let value: Value = serde_json::from_slice(bytes).map_err(ParseError::Json)?;
    T::validate(&value).map_err(ParseError::Invalid)?;
    serde_json::from_value(value).map_err(|error| ParseError::Type { def: T::DEF, error })
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
    if let Some(program) = T::STREAM {
        let mut deserializer = serde_json::Deserializer::from_slice(bytes);
        if let Ok((parsed, stream::Verdict::Valid)) =
            stream::parse_until_invalid::<T, _>(program, true, &mut deserializer)
        {
            if deserializer.end().is_ok() {
                return Ok(parsed);
            }
        }
    }
    let value: Value = serde_json::from_slice(bytes).map_err(ParseError::Json)?;
    T::validate_compatible(&value).map_err(ParseError::Invalid)?;
    serde_json::from_value(value).map_err(|error| ParseError::Type { def: T::DEF, error })
}
