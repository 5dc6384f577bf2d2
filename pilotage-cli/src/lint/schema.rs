//! Part III 4.6 and 10.1-6 (loop-tool schema authoring): a loop tool's inputSchema stays
//! permissive. No `additionalProperties: false`; reserved members constrained by JSON type
//! only; runnables not required, and `program_ref` declared where promoted programs can run.

use pilotage_types::{escape_pointer_token, Stage};
use serde_json::Value;

use super::reserved::reserved_type;
use super::rules::{
    ADDITIONAL_PROPERTIES_FALSE, PROGRAM_REF_UNDECLARED, RESERVED_MEMBER_CONSTRAINED, RUNNABLE_REQUIRED,
};
use super::{Finding, Linter, LoopTool};

/// Keywords a reserved member may carry: its type, and annotations.
const RESERVED_MEMBER_KEYWORDS: &[&str] = &["type", "description", "title", "$comment"];

/// 4.6 on a loop tool.
pub(super) fn check(linter: &mut Linter<'_>, tool: &LoopTool<'_>) {
    additional_properties_false(linter, tool);
    reserved_constrained(linter, tool);
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

/// The execute tool requires no runnable, and declares `program_ref` where its Languages
/// appear to support promoted programs.
fn runnables(linter: &mut Linter<'_>, tool: &LoopTool<'_>) {
    let promotes = tool.serves.iter().any(|l| {
        l.get("promotion_authority").is_some()
            || matches!(l.get("execution").and_then(Value::as_str), Some("deploy" | "both"))
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
