//! Part III 4.4 and 10.1-5 (reserved argument names): the declaration obligations of the
//! reserved-name rules 5 to 9, `mode` exactly where a Language has execution "both", and every
//! declared reserved member typed as its Part II member (rule 3: a reserved name is not used
//! for another purpose).

use pilotage_types::{escape_pointer_token, JsonType, Stage, EXECUTION_BOTH};
use serde_json::{json, Value};

use super::rules::{
    EXPECTED_CATALOG_VERSION_MISSING, MODE_MISSING, MODE_UNEXPECTED, PROGRAM_ARGUMENT_NOT_REQUIRED,
    RESERVED_MEMBER_TYPE, RUN_ID_MISSING, SHARED_PROGRAM_ARGUMENT_REQUIRED, TRACE_LEVEL_MISSING,
};
use super::{declared, Finding, Linter, LoopTool};

/// The JSON type of the reserved member `name` (`Some(None)`: any JSON type), or `None` when
/// `name` is not reserved. The one place the linter reads the reserved-name table.
pub(super) fn reserved_type(name: &str) -> Option<Option<&'static str>> {
    pilotage_types::reserved_member(name).map(|member| member.json_type.map(JsonType::as_str))
}

/// 4.4 on a loop tool.
pub(super) fn check(linter: &mut Linter<'_>, tool: &LoopTool<'_>) {
    member_types(linter, tool);
    match tool.stage {
        Stage::Execute => execute_obligations(linter, tool),
        Stage::Validate => validate_obligations(linter, tool),
        Stage::Trace => trace_obligations(linter, tool),
    }
}

/// Whether a member schema's `type` allows exactly `expected`: the type itself, or the type
/// and "null" (how generators such as schemars spell an optional member; a `null` argument
/// is more permissive, not another purpose). A schema without `type` accepts any type and
/// passes: constraining by type is allowed, not required.
fn type_allows_exactly(member_schema: &Value, expected: &str) -> bool {
    match member_schema.get("type") {
        None => true,
        Some(Value::String(declared)) => declared == expected,
        Some(Value::Array(types)) => {
            types.iter().any(|t| t == expected) && types.iter().all(|t| t == expected || t == "null")
        }
        Some(_) => false,
    }
}

/// Rule 3 with 4.6: every declared reserved member has its reserved JSON type.
fn member_types(linter: &mut Linter<'_>, tool: &LoopTool<'_>) {
    for (member, member_schema) in &tool.properties {
        let Some(Some(expected)) = reserved_type(member) else {
            continue;
        };
        if type_allows_exactly(member_schema, expected) {
            continue;
        }
        let declared = member_schema.get("type").map_or_else(String::new, Value::to_string);
        linter.push(
            Finding::new(
                &RESERVED_MEMBER_TYPE,
                format!("reserved member `{member}` is declared with type {declared}; its JSON type is \"{expected}\""),
            )
            .tool(tool.name)
            .at(tool.pointer(&format!(
                "/inputSchema/properties/{}/type",
                escape_pointer_token(member)
            ))),
        );
    }
}

/// Rules 5 and 6, and `mode` (4.4 mode): the execute tool's reserved members.
fn execute_obligations(linter: &mut Linter<'_>, tool: &LoopTool<'_>) {
    let manifest = linter.surface.manifest;
    let catalog = tool.serves.iter().any(|l| declared(manifest, l, "catalog"));
    let both = tool
        .serves
        .iter()
        .any(|l| l.get("execution") == Some(&json!(EXECUTION_BOTH)));
    let properties = tool.pointer("/inputSchema/properties");
    let mut findings = Vec::new();
    if !tool.declares("trace_level") {
        findings.push((
            &TRACE_LEVEL_MISSING,
            "the execute tool does not declare `trace_level`",
            properties.clone(),
        ));
    }
    if catalog && !tool.declares("expected_catalog_version") {
        findings.push((
            &EXPECTED_CATALOG_VERSION_MISSING,
            "the execute tool of a catalog-bearing Language does not declare `expected_catalog_version`",
            properties.clone(),
        ));
    }
    if both && !tool.declares("mode") {
        findings.push((
            &MODE_MISSING,
            "a Language with execution \"both\" must accept `mode`",
            properties,
        ));
    }
    if !both && tool.declares("mode") {
        findings.push((
            &MODE_UNEXPECTED,
            "`mode` is declared but no Language served has execution \"both\"",
            tool.pointer("/inputSchema/properties/mode"),
        ));
    }
    for (rule, message, at) in findings {
        linter.push(Finding::new(rule, message).tool(tool.name).at(at));
    }
}

/// Rules 8 and 9: a single-Language validate tool requires its program argument; a shared one
/// requires none.
fn validate_obligations(linter: &mut Linter<'_>, tool: &LoopTool<'_>) {
    for (argument, _) in &tool.program_arguments {
        let finding = match (tool.shared(), tool.required.contains(argument.as_str())) {
            (false, false) => Finding::new(
                &PROGRAM_ARGUMENT_NOT_REQUIRED,
                format!("the single-Language validate tool does not mark `{argument}` required"),
            ),
            (true, true) => Finding::new(
                &SHARED_PROGRAM_ARGUMENT_REQUIRED,
                format!("the shared validate tool marks program argument `{argument}` required"),
            ),
            _ => continue,
        };
        linter.push(finding.tool(tool.name).at(tool.pointer("/inputSchema/required")));
    }
}

/// Rule 7: a trace-fetch tool declares `run_id` and requires it.
fn trace_obligations(linter: &mut Linter<'_>, tool: &LoopTool<'_>) {
    if !tool.declares("run_id") || !tool.required.contains("run_id") {
        linter.push(
            Finding::new(
                &RUN_ID_MISSING,
                "the trace-fetch tool does not declare `run_id` as a required member",
            )
            .tool(tool.name)
            .at(tool.pointer("/inputSchema")),
        );
    }
}
