//! The interpreter (feature `interpreter`): validation against *any* schema document, by
//! `jsonschema`, for what generated validators cannot serve (a schema given at run time, the
//! command line's `--schema PATH`) and as the tests' oracle.
//!
//! [`SchemaValidators`] owns one schema document and compiles, on first use and once per
//! process, one `jsonschema` validator per `$defs` entry; it is `Sync`.

use std::collections::BTreeMap;
use std::fmt;
use std::sync::OnceLock;

pub use jsonschema::Validator;
use serde_json::Value;

use super::{bounded_message, widen_open_enums, SchemaError, ValidationErrors, Violation, ViolationList};
use crate::escape_pointer_token;

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

    /// Validates `instance` against `def`, listing every violation (up to
    /// [`super::MAX_VIOLATIONS_BYTES`] of them).
    pub fn validate(&self, def: &str, instance: &Value) -> Result<Result<(), ValidationErrors>, SchemaError> {
        Ok(validate_with(def, self.validator(def)?, instance))
    }

    /// Whether `instance` is valid against `def`, without collecting violations.
    pub fn is_valid(&self, def: &str, instance: &Value) -> Result<bool, SchemaError> {
        Ok(self.validator(def)?.is_valid(instance))
    }
}

/// Validates `instance` with the compiled `validator` of `def`, listing every violation (up to
/// [`super::MAX_VIOLATIONS_BYTES`] of them).
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
    // Within the bound the generated validators keep (`MAX_VIOLATIONS_BYTES`). This bounds
    // the list returned, not the memory of the search: jsonschema 0.61's `iter_errors` has
    // built every error (each with its own pointer) before it yields the first.
    let mut list = ViolationList::new();
    for error in validator.iter_errors(instance) {
        let full = list.push(Violation {
            instance_pointer: error.instance_path().as_str().to_owned(),
            schema_pointer: error.schema_path().as_str().to_owned(),
            message: bounded_message(error.to_string()),
        });
        if full {
            break;
        }
    }
    list.into_result(def)
}
