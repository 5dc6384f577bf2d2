//! Part III 4.6 and 10.1-6 (loop-tool schema authoring): a loop tool's inputSchema stays
//! permissive. No `additionalProperties: false`; reserved members constrained by JSON type
//! only; no value keyword anywhere else either ("Only structural faults may be expressed by
//! the schema": a missing required member, a wrong JSON type); runnables not required, and
//! `program_ref` declared where promoted programs can run.
//!
//! Value keywords are looked for in every ordinary member's schema, at any depth, through
//! the applicators (`items`, `properties`, `anyOf`, ...) and local `$ref`s (`#/$defs/...`, as
//! schemars writes an enum type), and on the inputSchema itself (cross-member constraints such
//! as `dependentRequired`). Program arguments are left alone (a SHOULD of 4.6, "Program-bearing
//! schema"), and so are reserved members, which `4.6/reserved-member-constrained` covers.
//! `format` is reported apart, as a warning: JSON Schema 2020-12 makes it an annotation, but a
//! server whose validator asserts it turns a value fault into a carrier error.

use std::collections::BTreeSet;

use pilotage_types::{escape_pointer_token, Stage};
use serde_json::Value;

use super::reserved::reserved_type;
use super::rules::{
    ADDITIONAL_PROPERTIES_FALSE, FORMAT_CONSTRAINT, PROGRAM_REF_UNDECLARED, RESERVED_MEMBER_CONSTRAINED,
    RUNNABLE_REQUIRED, VALUE_CONSTRAINT,
};
use super::{Finding, Linter, LoopTool};

/// Keywords that can reject a value of the right JSON type (JSON Schema 2020-12, and
/// draft-07's `dependencies`). `then` and `else` act only with `if`, which stands for all three.
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
    "contains",
    "minContains",
    "maxContains",
    "minProperties",
    "maxProperties",
    "propertyNames",
    "not",
    "if",
    "dependentRequired",
    "dependentSchemas",
    "dependencies",
];

/// Keywords a reserved member may carry: its type, and annotations.
const RESERVED_MEMBER_KEYWORDS: &[&str] = &["type", "description", "title", "$comment"];

/// 4.6 on a loop tool.
pub(super) fn check(linter: &mut Linter<'_>, tool: &LoopTool<'_>) {
    additional_properties_false(linter, tool);
    reserved_constrained(linter, tool);
    value_constraints(linter, tool);
    if tool.stage == Stage::Execute {
        runnables(linter, tool);
    }
}

/// No `additionalProperties: false` (or `unevaluatedProperties: false`) at any depth.
fn additional_properties_false(linter: &mut Linter<'_>, tool: &LoopTool<'_>) {
    let mut closed = Vec::new();
    find_closed(tool.schema, "/inputSchema".to_owned(), &mut closed);
    for at in closed {
        linter.push(
            Finding::new(
                &ADDITIONAL_PROPERTIES_FALSE,
                "a loop-tool schema sets additionalProperties: false",
            )
            .tool(tool.name)
            .at(tool.pointer(&at)),
        );
    }
}

fn find_closed(schema: &Value, at: String, out: &mut Vec<String>) {
    match schema {
        Value::Object(object) => {
            for (key, value) in object {
                let child = format!("{at}/{}", escape_pointer_token(key));
                if matches!(key.as_str(), "additionalProperties" | "unevaluatedProperties")
                    && value == &Value::Bool(false)
                {
                    out.push(child.clone());
                }
                if !matches!(key.as_str(), "const" | "enum" | "default" | "examples") {
                    find_closed(value, child, out);
                }
            }
        }
        Value::Array(items) => {
            for (index, item) in items.iter().enumerate() {
                find_closed(item, format!("{at}/{index}"), out);
            }
        }
        _ => {}
    }
}

/// Reserved members are constrained by JSON type only.
fn reserved_constrained(linter: &mut Linter<'_>, tool: &LoopTool<'_>) {
    for (member, member_schema) in &tool.properties {
        if reserved_type(member).is_none() {
            continue;
        }
        let extra: Vec<&str> = member_schema
            .as_object()
            .map(|o| {
                o.keys()
                    .map(String::as_str)
                    .filter(|k| !RESERVED_MEMBER_KEYWORDS.contains(k))
                    .collect()
            })
            .unwrap_or_default();
        if extra.is_empty() {
            continue;
        }
        linter.push(
            Finding::new(
                &RESERVED_MEMBER_CONSTRAINED,
                format!(
                    "reserved member `{member}` is constrained beyond its JSON type ({})",
                    extra.join(", ")
                ),
            )
            .tool(tool.name)
            .at(tool.pointer(&format!("/inputSchema/properties/{}", escape_pointer_token(member)))),
        );
    }
}

/// No value keyword on the inputSchema itself or in an ordinary member's schema.
fn value_constraints(linter: &mut Linter<'_>, tool: &LoopTool<'_>) {
    if let Some(root) = tool.schema.as_object() {
        for keyword in root.keys().filter(|k| VALUE_KEYWORDS.contains(&k.as_str())) {
            let message = format!("`{}` constrains the arguments beyond their structure", shown(keyword));
            let at = tool.pointer(&format!("/inputSchema/{}", escape_pointer_token(keyword)));
            linter.push(Finding::new(&VALUE_CONSTRAINT, message).tool(tool.name).at(at));
        }
    }
    for (member, member_schema) in &tool.properties {
        if reserved_type(member).is_some() || tool.is_program_argument(member) {
            continue;
        }
        let mut walk = Walk {
            root: tool.schema,
            seen: BTreeSet::new(),
            hits: Vec::new(),
        };
        walk.schema(
            member_schema,
            format!("/inputSchema/properties/{}", escape_pointer_token(member)),
        );
        for (at, keyword) in walk.hits {
            let (rule, message) = if keyword == "format" {
                (&FORMAT_CONSTRAINT, format!("member `{member}` declares a `format`"))
            } else {
                let message = format!("member `{member}` is constrained by value (`{}`)", shown(keyword));
                (&VALUE_CONSTRAINT, message)
            };
            linter.push(Finding::new(rule, message).tool(tool.name).at(tool.pointer(&at)));
        }
    }
}

/// How a keyword is named in a message.
fn shown(keyword: &str) -> &str {
    if keyword == "if" {
        "if`/`then`/`else"
    } else {
        keyword
    }
}

/// A walk over one member's schema and the subschemas it applies, collecting the value
/// keywords (and `format`) found, each with its pointer.
struct Walk<'a> {
    /// The inputSchema, against which local `$ref`s resolve.
    root: &'a Value,
    /// The `$ref` fragments already followed.
    seen: BTreeSet<&'a str>,
    hits: Vec<(String, &'a str)>,
}

impl<'a> Walk<'a> {
    fn schema(&mut self, schema: &'a Value, at: String) {
        let Value::Object(object) = schema else {
            return;
        };
        for (key, value) in object {
            let child = format!("{at}/{}", escape_pointer_token(key));
            match key.as_str() {
                keyword if keyword == "format" || VALUE_KEYWORDS.contains(&keyword) => {
                    self.hits.push((child, keyword));
                }
                "properties" | "patternProperties" => {
                    for (name, subschema) in value.as_object().into_iter().flatten() {
                        self.schema(subschema, format!("{child}/{}", escape_pointer_token(name)));
                    }
                }
                "items"
                | "additionalItems"
                | "additionalProperties"
                | "unevaluatedProperties"
                | "unevaluatedItems"
                | "prefixItems"
                | "allOf"
                | "anyOf"
                | "oneOf" => self.schema_or_list(value, child),
                "$ref" => self.reference(value),
                _ => {}
            }
        }
    }

    fn schema_or_list(&mut self, value: &'a Value, at: String) {
        match value {
            Value::Array(items) => {
                for (index, item) in items.iter().enumerate() {
                    self.schema(item, format!("{at}/{index}"));
                }
            }
            other => self.schema(other, at),
        }
    }

    /// Follows a local `$ref` (`#/$defs/Level`) once; the root itself (`#`) is not a member.
    fn reference(&mut self, value: &'a Value) {
        let Some(fragment) = value.as_str().and_then(|r| r.strip_prefix('#')) else {
            return;
        };
        if fragment.is_empty() || !self.seen.insert(fragment) {
            return;
        }
        if let Some(target) = self.root.pointer(fragment) {
            self.schema(target, format!("/inputSchema{fragment}"));
        }
    }
}

/// The execute tool requires no runnable, and declares `program_ref` where its Languages
/// appear to support promoted programs.
fn runnables(linter: &mut Linter<'_>, tool: &LoopTool<'_>) {
    let promotes = tool.serves.iter().any(|l| {
        l.get("promotion_authority").is_some()
            || l.get("execution").and_then(Value::as_str).is_some_and(|execution| {
                matches!(
                    pilotage_types::Execution::from(execution),
                    pilotage_types::Execution::Deploy | pilotage_types::Execution::Both
                )
            })
    });
    if promotes && !tool.declares("program_ref") {
        linter.push(
            Finding::new(
                &PROGRAM_REF_UNDECLARED,
                "the Language appears to support promoted programs (promotion_authority or deploy execution) but the execute tool does not declare `program_ref`",
            )
            .tool(tool.name)
            .at(tool.pointer("/inputSchema/properties")),
        );
    }
    let arguments = tool.program_arguments.iter().map(|(a, _)| a.as_str());
    for runnable in arguments.chain(["program_ref"]) {
        if tool.required.contains(runnable) {
            linter.push(
                Finding::new(
                    &RUNNABLE_REQUIRED,
                    format!("the execute tool marks `{runnable}` required"),
                )
                .tool(tool.name)
                .at(tool.pointer("/inputSchema/required")),
            );
        }
    }
}
