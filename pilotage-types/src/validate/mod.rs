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

#[cfg(feature = "interpreter")]
mod interpreter;

#[cfg(feature = "interpreter")]
pub use interpreter::{validate_with, SchemaValidators, Validator};
/// The run time of generated validators, the crate `pilotage-validate`: its own crate so that
/// it compiles beside `syn` and `serde_derive` in a downstream build, re-exported here because
/// generated code names these paths (`::pilotage_types::validate::runtime::...`).
pub use pilotage_validate::{
    bounded_message, format, pattern, run, runtime, stream, verdict, SchemaError, ValidationErrors, Validators,
    Violation, ViolationList, MAX_MESSAGE_BYTES, MAX_VIOLATIONS_BYTES,
};

/// The Pilotage schema, embedded byte for byte (regen keeps `schema/pilotage.schema.json`
/// in this crate identical to the vendored `schemas/pilotage.schema.json`).
pub const PILOTAGE_SCHEMA_JSON: &str = include_str!("../../schema/pilotage.schema.json");

/// The generated validators of the Pilotage schema, pinned reading
/// ([`Validators::compatible`] for the other).
pub fn pilotage() -> Validators {
    crate::validators::VALIDATORS
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
    T::from_value(value).map_err(|error| ParseError::Type { def: T::DEF, error })
}

/// Parses JSON bytes, validates them against `T`'s definition and deserializes them.
///
/// With the type's stream program ([`stream`]), the bytes are deserialized straight into `T`,
/// every value checked as it is read: no `Value` is built. A generated untagged union is read
/// variant by variant, in serde's order, straight from the text ([`SchemaDef::read_str`]),
/// where serde's untagged enum first copies the whole text into a tree of its own. Only when
/// that cannot show the document valid (it is not, it is no JSON, or the program cannot
/// decide) is it parsed into a `Value`, validated (naming every violation) and deserialized
/// from it (moving its strings into `T` rather than copying them).
pub fn parse_slice<T: SchemaDef + DeserializeOwned>(bytes: &[u8]) -> Result<T, ParseError> {
    if let Some(parsed) = fused::<T>(bytes, false) {
        return Ok(parsed);
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
    T::from_value(value).map_err(|error| ParseError::Type { def: T::DEF, error })
}

/// The fused reading of `parse_slice`: `None` when it does not show `bytes` valid.
///
/// The text is checked to be UTF-8 once, as a whole, and read as a `str`: serde_json's reader
/// of bytes checks each string it reads instead, which took a tenth of a parse of the 9.4
/// benchmark's document (364 bytes, 2,900 of 34,800 instructions). Bytes that are no UTF-8
/// are no JSON either (outside a string no byte past ASCII is JSON, inside one it must be
/// UTF-8), and the two passes then name the error as serde_json does.
#[inline]
fn fused<T: SchemaDef + DeserializeOwned>(bytes: &[u8], compatible: bool) -> Option<T> {
    let program = T::STREAM?;
    let text = std::str::from_utf8(bytes).ok()?;
    T::read_str(program, compatible, text)
}

/// [`parse_slice`] in the compatible reading ([`parse_compatible`]).
pub fn parse_slice_compatible<T: SchemaDef + DeserializeOwned>(bytes: &[u8]) -> Result<T, ParseError> {
    if let Some(parsed) = fused::<T>(bytes, true) {
        return Ok(parsed);
    }
    let value: Value = serde_json::from_slice(bytes).map_err(ParseError::Json)?;
    T::validate_compatible(&value).map_err(ParseError::Invalid)?;
    serde_json::from_value(value).map_err(|error| ParseError::Type { def: T::DEF, error })
}
