//! Loop tools (Part III 4.3 to 4.6, 5, 3.4): the [`PilotageTool`] trait that
//! `#[derive(PilotageTool)]` implements, the [`ArgumentFault`] routing of Part III 7.1, and
//! the runtime that turns a struct's schemars schema into a conformant MCP tool definition.
//!
//! The derive checks at compile time everything it can see in the struct (4.4 declaration
//! obligations, 4.6 runnable selection, 5 program arguments); this module applies the schema
//! rules by construction when the definition is first built:
//!
//! - 4.6 permissive schemas: no `additionalProperties: false` at any depth, reserved members
//!   constrained by JSON type only, program members permissive (`{}` or a bare type), no
//!   `$ref`, `$schema`, root `title`, `nullable` or non-standard `format`;
//! - 4.4 requiredness: `run_id` required on trace tools, a single-Language validate tool's
//!   program member required, nothing else reserved or runnable required;
//! - 5 the `_meta["io.github.jafarsa0/pilotage"]` declaration; 4.5 annotations; 3.4 stage and
//!   Language named in the description; 6 the stage's outputSchema union.

use std::collections::BTreeSet;

use serde::de::DeserializeOwned;
use serde_json::{json, Map, Value};

use crate::names::{
    is_reserved_name as is_reserved, names_stage, reserved_member, Stage, MODES, OPTIONAL_FEATURE_MEMBERS,
};
use crate::output_schema::Flavour;
use crate::output_schema::ToolKind;
use crate::tool::{ToolAnnotations, ToolDefinition};
use crate::{RequestError, META_KEY};

/// A loop tool: a struct whose `#[derive(PilotageTool)]` made it conformant by construction.
pub trait PilotageTool: Sized {
    /// The MCP tool definition, computed once on first call.
    fn tool_definition() -> &'static ToolDefinition;

    /// Parses `tools/call` arguments, routing every fault to its Part III 7.1 channel.
    fn from_arguments(arguments: &Value) -> Result<Self, ArgumentFault>;

    /// The derive's runtime state of this tool (its spec and the raw schemas of its program
    /// members), for the server framework that serves a derived struct as a Language's loop
    /// tool. `None` for a hand-written implementation.
    #[doc(hidden)]
    fn loop_tool_state() -> Option<&'static LoopToolState> {
        None
    }
}

pub use crate::fault::ArgumentFault;

/// One program-bearing argument and the Language whose programs it carries (Part III 5), as
/// the derive knows it at compile time. On the wire (the `_meta` declaration) the same
/// concept is the generated [`crate::ProgramArgument`].
#[doc(hidden)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProgramSpec {
    /// The serialised argument name.
    pub argument: &'static str,
    /// The Language identifier.
    pub language: &'static str,
}

/// Everything the derive read from the struct; the input of [`LoopToolState::new`].
#[doc(hidden)]
#[derive(Debug, Clone, Copy)]
pub struct LoopToolSpec {
    pub stage: Stage,
    pub name: &'static str,
    pub title: Option<&'static str>,
    /// The author's description (explicit, else the doc comment); may be empty.
    pub description: &'static str,
    /// Program-bearing arguments (validate, execute); empty for trace tools.
    pub programs: &'static [ProgramSpec],
    /// The Languages served (for trace tools, which have no program argument).
    pub languages: &'static [&'static str],
    pub catalog: bool,
    pub execution_both: bool,
    pub destructive: bool,
    /// An execute tool's `readOnlyHint` (validate and trace tools are always read-only).
    pub read_only: bool,
    pub idempotent: bool,
    pub open_world: bool,
    /// Serialised names of every declared argument.
    pub members: &'static [&'static str],
}

/// Formats of JSON Schema 2020-12 (7.3); any other (`uint`, `int64`, `double`, ...) is
/// schemars-specific and dropped.
const STANDARD_FORMATS: &[&str] = &[
    "date-time",
    "date",
    "time",
    "duration",
    "email",
    "idn-email",
    "hostname",
    "idn-hostname",
    "ipv4",
    "ipv6",
    "uri",
    "uri-reference",
    "iri",
    "iri-reference",
    "uuid",
    "uri-template",
    "json-pointer",
    "relative-json-pointer",
    "regex",
];

/// The definition and the compiled structural checker of one loop tool.
#[doc(hidden)]
pub struct LoopToolState {
    pub definition: ToolDefinition,
    spec: LoopToolSpec,
    /// The full schemars schema of each program member (before the permissive cleaning of
    /// Part III 4.6), with the struct's `$defs`: what a program must fit to deserialize.
    program_schemas: Vec<(&'static str, Value)>,
}

impl std::fmt::Debug for LoopToolState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LoopToolState")
            .field("definition", &self.definition)
            .finish_non_exhaustive()
    }
}

impl LoopToolState {
    /// Builds the definition of the loop tool described by `spec`.
    ///
    /// `raw` is the struct's schemars schema (draft 2020-12, subschemas inlined, for
    /// deserialization), computed by the derive's expansion in the user's crate: this crate
    /// does not depend on schemars, so downstream builds compile it in parallel with schemars.
    pub fn new(raw: Value, spec: LoopToolSpec) -> Self {
        let program_schemas = spec
            .programs
            .iter()
            .filter_map(|program| Some((program.argument, program_schema(&raw, program.argument)?)))
            .collect();
        let input_schema = input_schema(raw, &spec);
        let definition = ToolDefinition {
            name: spec.name.to_owned(),
            title: spec.title.map(str::to_owned),
            description: description(&spec),
            input_schema,
            output_schema: Some(ToolKind::from(spec.stage).output_schema(Flavour::Inlined).clone()),
            annotations: Some(annotations(&spec)),
            meta: program_declaration(&spec),
        };
        Self {
            definition,
            spec,
            program_schemas,
        }
    }

    /// What the derive read from the struct.
    pub fn spec(&self) -> &LoopToolSpec {
        &self.spec
    }

    /// The full schema of the program member `argument` (its type's schemars schema, with the
    /// struct's `$defs`; `null` allowed by an `Option` removed), when the struct has one.
    pub fn program_schema(&self, argument: &str) -> Option<&Value> {
        self.program_schemas
            .iter()
            .find(|(name, _)| *name == argument)
            .map(|(_, schema)| schema)
    }

    /// Part III 7.1 routing: the permissive inputSchema first (structural → carrier), then
    /// the value and eligibility rules (→ request error), then deserialisation: a program that
    /// does not fit its Rust type, and context the tool does not take, are program faults
    /// (→ diagnostics, Part III 4.6 and 4.4 rule 10); any other member that does not fit is a
    /// request error.
    pub fn from_arguments<T: DeserializeOwned>(&self, arguments: &Value) -> Result<T, ArgumentFault> {
        let Value::Object(members) = arguments else {
            return Err(ArgumentFault::Carrier {
                message: "arguments must be a JSON object".to_owned(),
            });
        };
        let structural: Vec<String> = crate::structural::faults(&self.definition.input_schema, arguments)
            .into_iter()
            .map(|(at, message)| {
                if at.is_empty() {
                    format!("arguments: {message}")
                } else {
                    format!("argument {at}: {message}")
                }
            })
            .collect();
        if !structural.is_empty() {
            return Err(ArgumentFault::Carrier {
                message: structural.join("; "),
            });
        }
        eligibility(&self.spec, members).map_err(ArgumentFault::Request)?;
        // Receivers ignore unknown members: drop them, so that even a struct with
        // `#[serde(deny_unknown_fields)]` accepts them.
        let known: Map<String, Value> = members
            .iter()
            .filter(|(name, _)| self.spec.members.contains(&name.as_str()))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        let mut diagnostics = Vec::new();
        if self.spec.stage != Stage::Trace
            && present(members, "context").is_some()
            && !self.spec.members.contains(&"context")
        {
            diagnostics.push(crate::Diagnostic::error(
                "context_binding",
                "",
                format!(
                    "{} takes no validation context; the supplied `context` was not bound (Part III 4.4 rule 10)",
                    self.spec.name
                ),
            ));
        }
        match serde_path_to_error::deserialize::<_, T>(Value::Object(known)) {
            Ok(request) if diagnostics.is_empty() => Ok(request),
            Ok(_) => Err(ArgumentFault::Program(diagnostics)),
            Err(error) => {
                let mut segments = error.path().iter();
                let program = match segments.next() {
                    Some(serde_path_to_error::Segment::Map { key })
                        if self.spec.programs.iter().any(|p| p.argument == key) =>
                    {
                        Some(key.clone())
                    }
                    _ => None,
                };
                match program {
                    Some(argument) => {
                        diagnostics.push(crate::Diagnostic::error(
                            "invalid_program",
                            pointer_of(segments),
                            format!(
                                "the program in `{argument}` does not fit its Language's shape: {}",
                                error.inner()
                            ),
                        ));
                        Err(ArgumentFault::Program(diagnostics))
                    }
                    None => Err(ArgumentFault::Request(RequestError::invalid_request(format!(
                        "invalid arguments: {error}"
                    )))),
                }
            }
        }
    }
}

/// The JSON Pointer of a deserialisation path (below the program argument).
#[doc(hidden)]
pub fn pointer_of<'a>(segments: impl Iterator<Item = &'a serde_path_to_error::Segment>) -> String {
    use serde_path_to_error::Segment;
    let mut pointer = String::new();
    for segment in segments {
        match segment {
            Segment::Seq { index } => pointer.push_str(&format!("/{index}")),
            Segment::Map { key } => {
                pointer.push('/');
                pointer.push_str(&crate::escape_pointer_token(key));
            }
            Segment::Enum { .. } => {}
            Segment::Unknown => break,
        }
    }
    pointer
}

fn present<'a>(members: &'a Map<String, Value>, name: &str) -> Option<&'a Value> {
    members.get(name).filter(|value| !value.is_null())
}

/// The value and eligibility rules of Part III 4.3, 4.4 and 7.1 that the permissive schema
/// leaves to the Pilotage channels.
fn eligibility(spec: &LoopToolSpec, members: &Map<String, Value>) -> Result<(), RequestError> {
    let programs: Vec<&str> = spec
        .programs
        .iter()
        .map(|p| p.argument)
        .filter(|argument| present(members, argument).is_some())
        .collect();
    let names = || {
        spec.programs
            .iter()
            .map(|p| format!("`{}`", p.argument))
            .collect::<Vec<_>>()
            .join(", ")
    };
    match spec.stage {
        Stage::Validate if spec.programs.len() > 1 && programs.len() != 1 => {
            let given: Vec<String> = programs.iter().map(|argument| format!("`{argument}`")).collect();
            return Err(RequestError::invalid_request(format!(
                "exactly one program-bearing argument ({}) must be supplied; given: {}",
                names(),
                if given.is_empty() {
                    "none".to_owned()
                } else {
                    given.join(" and ")
                }
            )));
        }
        Stage::Execute => {
            // Part III 4.6 runnable selection and 7.1: both or neither runnable, and a
            // `program_ref` the tool does not declare (no promoted programs), are request
            // errors, never a Run. The message names what was given and what is accepted.
            let declares_ref = spec.members.contains(&"program_ref");
            let given: Vec<String> = programs
                .iter()
                .map(|argument| format!("`{argument}`"))
                .chain(present(members, "program_ref").map(|_| "`program_ref`".to_owned()))
                .collect();
            let given_text = if given.is_empty() {
                "none".to_owned()
            } else {
                given.join(" and ")
            };
            if !declares_ref && present(members, "program_ref").is_some() {
                return Err(RequestError::unsupported(format!(
                    "`program_ref` is not supported by {}: it runs no promoted programs and takes the program \
                     inline in {}; given: {given_text}",
                    spec.name,
                    names()
                )));
            }
            if given.len() != 1 {
                let options = if declares_ref {
                    format!("{} or `program_ref`", names())
                } else {
                    names()
                };
                return Err(RequestError::invalid_request(format!(
                    "exactly one runnable must be supplied ({options}); given: {given_text}"
                )));
            }
            match (spec.execution_both, present(members, "mode")) {
                (true, None) => {
                    return Err(RequestError::invalid_request(
                        "`mode` is required: this Language executes both immediately and by deployment",
                    ));
                }
                (true, Some(mode)) if !mode.as_str().is_some_and(|m| MODES.contains(&m)) => {
                    return Err(RequestError::invalid_request(format!(
                        "unrecognized mode {mode}: expected one of {}",
                        MODES.join(", ")
                    )));
                }
                (false, Some(_)) => {
                    return Err(RequestError::invalid_request(
                        "`mode` applies only to Languages whose execution is \"both\"",
                    ));
                }
                _ => {}
            }
        }
        _ => {}
    }
    // The trace levels of this version (the generated enums' values; Part II 6.5, 6.6).
    let levels: Vec<&str> = match spec.stage {
        Stage::Execute => crate::ExecuteTraceLevel::KNOWN.iter().map(|l| l.as_str()).collect(),
        Stage::Trace => crate::TraceLevel::KNOWN.iter().map(|l| l.as_str()).collect(),
        Stage::Validate => Vec::new(),
    };
    if let (false, Some(level)) = (levels.is_empty(), present(members, "trace_level")) {
        if !level.as_str().is_some_and(|l| levels.contains(&l)) {
            return Err(RequestError::invalid_request(format!(
                "unknown trace_level {level}: expected one of {}",
                levels.join(", ")
            )));
        }
    }
    let optional_features = OPTIONAL_FEATURE_MEMBERS
        .iter()
        .filter(|name| reserved_member(name).is_some_and(|m| m.applies_to(spec.stage)));
    for feature in optional_features {
        if present(members, feature).is_some() && !spec.members.contains(feature) {
            return Err(RequestError::unsupported(format!(
                "`{feature}` is not supported by {}",
                spec.name
            )));
        }
    }
    Ok(())
}

/// JSON types a schema admits, ignoring `null` (`None`: unconstrained or unknown).
fn json_types(schema: &Value) -> Option<BTreeSet<String>> {
    let object = schema.as_object()?;
    if let Some(types) = object.get("type") {
        let set: BTreeSet<String> = match types {
            Value::String(t) => [t.clone()].into(),
            Value::Array(ts) => ts.iter().filter_map(Value::as_str).map(str::to_owned).collect(),
            _ => return None,
        };
        let set: BTreeSet<String> = set.into_iter().filter(|t| t != "null").collect();
        return (!set.is_empty()).then_some(set);
    }
    let type_of = |value: &Value| match value {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(n) if n.is_i64() || n.is_u64() => "integer",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    };
    let values: Option<Vec<&Value>> = match (object.get("enum"), object.get("const")) {
        (Some(Value::Array(values)), _) => Some(values.iter().collect()),
        (_, Some(value)) => Some(vec![value]),
        _ => None,
    };
    if let Some(values) = values {
        let set: BTreeSet<String> = values
            .into_iter()
            .map(|v| type_of(v).to_owned())
            .filter(|t| t != "null")
            .collect();
        return (!set.is_empty()).then_some(set);
    }
    for key in ["anyOf", "oneOf"] {
        if let Some(Value::Array(branches)) = object.get(key) {
            let mut set = BTreeSet::new();
            for branch in branches {
                if branch.get("type") == Some(&json!("null")) {
                    continue;
                }
                set.extend(json_types(branch)?);
            }
            return (!set.is_empty()).then_some(set);
        }
    }
    None
}

/// `{"type": ...}` for `types` (plus `description`), or `{}` when unconstrained.
fn type_only(types: Option<BTreeSet<String>>, description: Option<&Value>) -> Value {
    let mut schema = Map::new();
    if let Some(types) = types {
        let mut types: Vec<String> = types.into_iter().collect();
        // `integer` is a `number`; listing both would be redundant.
        if types.contains(&"number".to_owned()) {
            types.retain(|t| t != "integer");
        }
        schema.insert(
            "type".into(),
            if types.len() == 1 {
                json!(types[0])
            } else {
                json!(types)
            },
        );
    }
    if let Some(description) = description {
        schema.insert("description".into(), description.clone());
    }
    Value::Object(schema)
}

/// Removes what Part III 4.6 and the MCP clients do not accept, at every depth.
fn clean(schema: &mut Value, defs: &Map<String, Value>, depth: usize) {
    match schema {
        Value::Object(object) => {
            if let Some(Value::String(reference)) = object.get("$ref").cloned() {
                object.remove("$ref");
                let name = reference.rsplit('/').next().unwrap_or_default();
                // Recursive types cannot be inlined for ever: past a few levels, any value.
                if let (true, Some(Value::Object(target))) = (depth < 8, defs.get(name)) {
                    for (key, value) in target {
                        object.entry(key.clone()).or_insert_with(|| value.clone());
                    }
                }
            }
            for key in ["$schema", "$id", "$defs", "definitions", "nullable"] {
                object.remove(key);
            }
            for key in ["additionalProperties", "unevaluatedProperties"] {
                if object.get(key) == Some(&Value::Bool(false)) {
                    object.remove(key);
                }
            }
            if object
                .get("format")
                .and_then(Value::as_str)
                .is_some_and(|f| !STANDARD_FORMATS.contains(&f))
            {
                object.remove("format");
            }
            for (key, value) in object.iter_mut() {
                if !matches!(key.as_str(), "const" | "enum" | "default" | "examples") {
                    clean(value, defs, depth + 1);
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(|item| clean(item, defs, depth + 1)),
        _ => {}
    }
}

/// Value keywords: constraints beyond structure, which Part III 4.6 keeps out of loop-tool
/// schemas ("only structural faults may be expressed by the schema").
const VALUE_KEYWORDS: &[&str] = &[
    "enum",
    "const",
    "pattern",
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "multipleOf",
    "minLength",
    "maxLength",
    "minItems",
    "maxItems",
    "uniqueItems",
    "minProperties",
    "maxProperties",
    "minContains",
    "maxContains",
    "format",
    "contentEncoding",
    "contentMediaType",
    "not",
    "if",
    "then",
    "else",
    "dependentRequired",
    "dependentSchemas",
    "propertyNames",
    "patternProperties",
];

/// Reduces an ordinary argument's schema to structure (JSON types, members, requiredness),
/// at every depth: an enum becomes its JSON type, `oneOf` becomes `anyOf` (type-only branches
/// may overlap), value keywords go. A value outside the Rust type's range then fails in
/// deserialisation, a request error, as Part III 7.1 routes value faults.
fn structural_only(schema: &mut Value) {
    let Value::Object(object) = schema else { return };
    let enumerated = object.contains_key("enum")
        || object.contains_key("const")
        || ["oneOf", "anyOf"].iter().any(|key| {
            object.get(*key).and_then(Value::as_array).is_some_and(|branches| {
                branches.iter().all(|b| {
                    b.get("const").is_some() || b.get("enum").is_some() || b.get("type") == Some(&json!("null"))
                })
            })
        });
    if enumerated {
        let mut types = json_types(schema);
        let nullable = match schema.get("type") {
            Some(Value::Array(ts)) => ts.iter().any(|t| t == "null"),
            _ => false,
        } || ["oneOf", "anyOf"].iter().any(|key| {
            schema.get(*key).and_then(Value::as_array).is_some_and(|bs| {
                bs.iter()
                    .any(|b| b.get("type") == Some(&json!("null")) || b.get("const") == Some(&Value::Null))
            })
        });
        if let (true, Some(set)) = (nullable, types.as_mut()) {
            set.insert("null".to_owned());
        }
        *schema = type_only(types, schema.get("description"));
        return;
    }
    for key in VALUE_KEYWORDS {
        object.remove(*key);
    }
    if let Some(branches) = object.remove("oneOf") {
        object.insert("anyOf".into(), branches);
    }
    for (key, value) in object.iter_mut() {
        match key.as_str() {
            "properties" => value
                .as_object_mut()
                .into_iter()
                .flat_map(|m| m.values_mut())
                .for_each(structural_only),
            "items" | "additionalProperties" | "unevaluatedProperties" | "contains" => structural_only(value),
            "anyOf" | "allOf" | "prefixItems" => value.as_array_mut().into_iter().flatten().for_each(structural_only),
            _ => {}
        }
    }
}

/// The conformant inputSchema of a loop tool from its struct's schemars schema.
fn input_schema(mut raw: Value, spec: &LoopToolSpec) -> Value {
    let defs = raw.get("$defs").and_then(Value::as_object).cloned().unwrap_or_default();
    clean(&mut raw, &defs, 0);
    let source_properties = raw
        .get("properties")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    let source_required: Vec<String> = raw
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).map(str::to_owned).collect())
        .unwrap_or_default();

    let is_program = |name: &str| spec.programs.iter().any(|p| p.argument == name);
    let mut properties = Map::new();
    for (name, schema) in &source_properties {
        let description = schema.get("description");
        let property = if let Some(reserved) = reserved_member(name) {
            match reserved.json_type {
                Some(json_type) => type_only(Some([json_type.as_str().to_owned()].into()), description),
                None => type_only(json_types(schema), description),
            }
        } else if is_program(name) {
            type_only(json_types(schema), description)
        } else {
            let mut schema = schema.clone();
            structural_only(&mut schema);
            schema
        };
        properties.insert(name.clone(), property);
    }
    let mut required: Vec<String> = source_required
        .into_iter()
        .filter(|name| !is_reserved(name) && !is_program(name))
        .collect();
    match spec.stage {
        Stage::Trace => required.push("run_id".to_owned()),
        Stage::Validate if spec.programs.len() == 1 => required.push(spec.programs[0].argument.to_owned()),
        _ => {}
    }
    required.sort();
    required.dedup();
    let mut schema = Map::new();
    schema.insert("type".into(), json!("object"));
    schema.insert("properties".into(), Value::Object(properties));
    if !required.is_empty() {
        schema.insert("required".into(), json!(required));
    }
    Value::Object(schema)
}

/// The schema of the program member `argument` of a struct's schemars schema `raw`, as a
/// document of its own: the member's schema (an `Option`'s `null` branch removed) with the
/// struct's `$defs` beside it, so that its references still resolve.
fn program_schema(raw: &Value, argument: &str) -> Option<Value> {
    let mut schema = raw.get("properties")?.get(argument)?.clone();
    // `Option<P>`: `anyOf: [P, {"type": "null"}]` (schemars 1) — the program is never null
    // when it is checked.
    if let Some(Value::Array(branches)) = schema.get("anyOf") {
        let not_null: Vec<&Value> = branches
            .iter()
            .filter(|b| b.get("type") != Some(&json!("null")))
            .collect();
        if let ([only], 2) = (not_null.as_slice(), branches.len()) {
            schema = (*only).clone();
        }
    }
    if let Value::Object(object) = &mut schema {
        if let Some(Value::Array(types)) = object.get("type") {
            let types: Vec<Value> = types.iter().filter(|t| *t != "null").cloned().collect();
            object.insert(
                "type".into(),
                if types.len() == 1 {
                    types[0].clone()
                } else {
                    Value::Array(types)
                },
            );
        }
        if let Some(defs) = raw.get("$defs") {
            object.entry("$defs").or_insert_with(|| defs.clone());
        }
    }
    Some(schema)
}

/// The languages a tool serves, in declaration order, without duplicates.
fn languages(spec: &LoopToolSpec) -> Vec<&'static str> {
    let mut out: Vec<&'static str> = Vec::new();
    for language in spec
        .programs
        .iter()
        .map(|p| p.language)
        .chain(spec.languages.iter().copied())
    {
        if !out.contains(&language) {
            out.push(language);
        }
    }
    out
}

/// The author's description, with a sentence appended when it does not state the stage and
/// every Language (Part III 3.4).
fn description(spec: &LoopToolSpec) -> String {
    let text = spec.description.trim();
    let languages = languages(spec);
    if names_stage(text, spec.stage) && languages.iter().all(|language| text.contains(language)) {
        return text.to_owned();
    }
    let sentence = format!("Pilotage {} tool for {}.", spec.stage.label(), languages.join(", "));
    if text.is_empty() {
        sentence
    } else if text.ends_with(['.', '!', '?']) {
        format!("{text} {sentence}")
    } else {
        format!("{text}. {sentence}")
    }
}

/// Part III 4.5: read-only hints on validate and trace tools; the execute tool's effect hints.
fn annotations(spec: &LoopToolSpec) -> ToolAnnotations {
    match spec.stage {
        Stage::Validate | Stage::Trace => ToolAnnotations {
            read_only_hint: Some(true),
            ..ToolAnnotations::default()
        },
        Stage::Execute => ToolAnnotations {
            read_only_hint: Some(spec.read_only),
            destructive_hint: Some(spec.destructive && !spec.read_only),
            idempotent_hint: spec.idempotent.then_some(true),
            open_world_hint: spec.open_world.then_some(true),
            title: None,
        },
    }
}

/// Part III 5: `{argument, language}` or `{languages: [...]}` under the full key.
fn program_declaration(spec: &LoopToolSpec) -> Option<Map<String, Value>> {
    let declaration = match spec.programs {
        [] => return None,
        [single] => json!({"argument": single.argument, "language": single.language}),
        many => {
            json!({"languages": many.iter().map(|p| json!({"argument": p.argument, "language": p.language})).collect::<Vec<_>>()})
        }
    };
    Some(Map::from_iter([(META_KEY.to_owned(), declaration)]))
}
