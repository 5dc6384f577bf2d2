//! Part III 3.4 (cold start): the welcome text, the entry-point description and the stage
//! descriptions. Text checks are heuristics; each message says which.

use pilotage_types::{names_stage, AccessTool, CATALOG_TOOL, GET_GUIDE_TOOL, MANIFEST_TOOL};
use serde_json::Value;

use super::rules::{ENTRY_POINT_DESCRIPTION, STAGE_DESCRIPTION, WELCOME_TEXT};
use super::{Finding, Linter, LoopTool};

/// The welcome text: the initialize instructions name Pilotage, not only inside a tool
/// name, and pilotage_manifest.
pub(super) fn welcome_text(linter: &mut Linter<'_>, initialize: &Value) {
    let instructions = initialize
        .get("instructions")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let lower = instructions.to_lowercase();
    let without_tool_names = [MANIFEST_TOOL, GET_GUIDE_TOOL, CATALOG_TOOL]
        .iter()
        .fold(lower.clone(), |text, name| text.replace(name, ""));
    if !(without_tool_names.contains("pilotage") && lower.contains(MANIFEST_TOOL)) {
        linter.push(
            Finding::new(
                &WELCOME_TEXT,
                "the initialize instructions must name Pilotage and direct the agent to call pilotage_manifest first (heuristic: the text contains \"Pilotage\" or the extension identifier, and \"pilotage_manifest\")",
            )
            .at(Some("/instructions".into())),
        );
    }
}

/// The entry-point description (pilotage_manifest) and the learn and lookup stage
/// descriptions (pilotage_get_guide, pilotage_catalog).
pub(super) fn access_description(linter: &mut Linter<'_>, access: AccessTool, tool: &Value) {
    let description = tool
        .get("description")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_lowercase();
    let (ok, rule, hint) = match access {
        AccessTool::Manifest => (
            ["first", "start", "begin", "entry point"]
                .iter()
                .any(|word| description.contains(word)),
            &ENTRY_POINT_DESCRIPTION,
            None,
        ),
        AccessTool::GetGuide => (
            description.contains("learn") && description.contains("guide"),
            &STAGE_DESCRIPTION,
            Some("say that it serves the learn stage, the guides (heuristic: \"learn\" and \"guide\")"),
        ),
        AccessTool::Catalog => (
            (description.contains("lookup") || description.contains("look up")) && description.contains("catalog"),
            &STAGE_DESCRIPTION,
            Some("say that it serves the lookup stage, the catalog (heuristic: \"lookup\" and \"catalog\")"),
        ),
    };
    if ok {
        return;
    }
    let name = access.name();
    let mut finding = Finding::new(
        rule,
        format!("the description of {name} lacks its Part III 3.4 signpost"),
    )
    .tool(name)
    .at(linter.tool_pointer(name, "/description"));
    if let Some(hint) = hint {
        finding = finding.hint(hint);
    }
    linter.push(finding);
}

/// A loop tool's description states its stage and every Language it serves.
pub(super) fn stage_description(linter: &mut Linter<'_>, tool: &LoopTool<'_>) {
    let description = tool.tool.get("description").and_then(Value::as_str).unwrap_or_default();
    let all_languages = tool.serve_names.iter().all(|language| description.contains(language));
    if names_stage(description, tool.stage) && all_languages {
        return;
    }
    let (stage, languages) = (tool.stage.label(), tool.serve_names.join(", "));
    linter.push(
        Finding::new(
            &STAGE_DESCRIPTION,
            format!(
                "the description must state the {stage} stage and the Language(s) {languages} (heuristic: the stage's verb and each Language identifier appear verbatim)"
            ),
        )
        .tool(tool.name)
        .at(tool.pointer("/description"))
        .hint(&format!("state the stage and every Language served, e.g. \"Pilotage {stage} tool for {languages}.\"")),
    );
}
