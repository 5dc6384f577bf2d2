//! Part III 4.3 and 10.1-4 (loop tools): every name in a Language's loop object exists in
//! tools/list, the loop object's members match the effective capability map, there is no
//! `plan` member, and a tool shared by several Languages is shared only through distinct
//! program arguments in `languages[]`. Also where each named loop tool is handed to the checks
//! of the other sections.

use std::collections::{BTreeMap, BTreeSet};

use pilotage_types::{escape_pointer_token, Stage, ToolKind, META_KEY};
use serde_json::{Map, Value};

use super::rules::{LOOP_CAPABILITY_MISMATCH, LOOP_TOOL_MISSING, PLAN_LOOP_MEMBER, SHARED_TOOL_WITHOUT_LANGUAGES};
use super::{
    annotations, declared, output, program, required_members, reserved, schema, signposts, Finding, Linter, LoopTool,
};

/// The capability that declares a stage (Part II 4.2).
fn capability(stage: Stage) -> &'static str {
    match stage {
        Stage::Validate => "validate",
        Stage::Execute => "execute",
        Stage::Trace => "trace_fetch",
    }
}

/// 4.3 on every Language's loop object, then every check of every loop tool named.
pub(super) fn loop_tools(linter: &mut Linter<'_>) {
    let languages = linter.languages;
    // tool name -> (stage, indexes of the Languages naming it)
    let mut uses: BTreeMap<&str, (Stage, Vec<usize>)> = BTreeMap::new();
    for (index, language) in languages.iter().enumerate() {
        loop_object(linter, index, language, &mut uses);
    }
    let known: BTreeSet<&str> = languages
        .iter()
        .filter_map(|l| l.get("name").and_then(Value::as_str))
        .collect();
    for (name, (stage, users)) in uses {
        let mut tool = loop_tool(linter, name, stage, &users);
        tool.program_arguments = program::declaration(linter, &tool, &known);
        shared_tool(linter, &tool);
        schema::check(linter, &tool);
        reserved::check(linter, &tool);
        signposts::stage_description(linter, &tool);
        annotations::loop_tool(linter, &tool);
        output::output_schema(linter, name, tool.tool, ToolKind::from(stage));
    }
}

/// 4.3 and 10.1-4 on the loop object of the Language at `index`; records the listed tools it
/// names in `uses`.
fn loop_object<'a>(
    linter: &mut Linter<'a>,
    index: usize,
    language: &'a Value,
    uses: &mut BTreeMap<&'a str, (Stage, Vec<usize>)>,
) {
    let name = language.get("name").and_then(Value::as_str).unwrap_or("?");
    let at = format!("/manifest/languages/{index}/loop");
    let Some(Value::Object(loop_object)) = language.get("loop") else {
        return;
    };
    if loop_object.contains_key("plan") {
        linter.push(
            Finding::new(
                &PLAN_LOOP_MEMBER,
                format!(
                    "Language {name}: the loop object has a `plan` member; the plan is returned by the validate tool"
                ),
            )
            .at(Some(format!("{at}/plan"))),
        );
    }
    for stage in Stage::ALL {
        let member = stage.loop_member();
        capability_consistency(linter, language, loop_object, stage, &at);
        let Some(tool_name) = loop_object.get(member).and_then(Value::as_str) else {
            continue;
        };
        if !linter.tools.contains_key(tool_name) {
            linter.push(
                Finding::new(
                    &LOOP_TOOL_MISSING,
                    format!("Language {name} declares {member} tool `{tool_name}`, which is not in tools/list"),
                )
                .tool(tool_name)
                .at(Some(format!("{at}/{member}"))),
            );
            continue;
        }
        uses.entry(tool_name).or_insert((stage, Vec::new())).1.push(index);
    }
}

/// 4.3: the loop member of `stage` is present exactly when its capability is declared
/// (validate always is).
fn capability_consistency(
    linter: &mut Linter<'_>,
    language: &Value,
    loop_object: &Map<String, Value>,
    stage: Stage,
    at: &str,
) {
    let (member, capability) = (stage.loop_member(), capability(stage));
    let has_member = loop_object.contains_key(member);
    let has_capability = stage == Stage::Validate || declared(linter.surface.manifest, language, capability);
    if has_member == has_capability {
        return;
    }
    let name = language.get("name").and_then(Value::as_str).unwrap_or("?");
    let message = if has_member {
        format!("Language {name} names a {member} tool but does not declare {capability}")
    } else {
        format!("Language {name} declares {capability} but its loop object names no {member} tool")
    };
    linter.push(Finding::new(&LOOP_CAPABILITY_MISMATCH, message).at(Some(format!("{at}/{member}"))));
}

/// The context of the listed loop tool `name`, named for `stage` by the Languages `users`.
fn loop_tool<'a>(linter: &Linter<'a>, name: &'a str, stage: Stage, users: &[usize]) -> LoopTool<'a> {
    static NULL: Value = Value::Null;
    let (_, tool) = linter.tools[name];
    let schema = tool.get("inputSchema").unwrap_or(&NULL);
    let serves: Vec<&Value> = users.iter().map(|i| &linter.languages[*i]).collect();
    LoopTool {
        name,
        tool,
        stage,
        serve_names: serves
            .iter()
            .filter_map(|l| l.get("name").and_then(Value::as_str))
            .collect(),
        serves,
        schema,
        properties: schema
            .get("properties")
            .and_then(Value::as_object)
            .cloned()
            .unwrap_or_default(),
        required: required_members(schema),
        base: linter.tool_pointer(name, ""),
        program_arguments: Vec::new(),
    }
}

/// 4.3: a tool named by several Languages maps a distinct program argument to each of them
/// in `languages[]` (validate and execute tools; a trace-fetch tool carries no program).
fn shared_tool(linter: &mut Linter<'_>, tool: &LoopTool<'_>) {
    if !tool.stage.carries_programs() || tool.serves.len() < 2 {
        return;
    }
    let covered = tool
        .serve_names
        .iter()
        .all(|l| tool.program_arguments.iter().any(|(_, declared)| declared == l));
    if tool.shared() && covered {
        return;
    }
    linter.push(
        Finding::new(
            &SHARED_TOOL_WITHOUT_LANGUAGES,
            format!(
                "`{}` serves {} but does not map a distinct program argument to each in languages[]",
                tool.name,
                tool.serve_names.join(", ")
            ),
        )
        .tool(tool.name)
        .at(tool.pointer(&format!("/_meta/{}", escape_pointer_token(META_KEY)))),
    );
}
