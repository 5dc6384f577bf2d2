//! Part III 4.5 (tool annotations): the access tools, validate tools and trace-fetch tools
//! declare `readOnlyHint: true` (a SHOULD: warnings).

use pilotage_types::{AccessTool, Stage};
use serde_json::{json, Value};

use super::rules::READ_ONLY_HINT;
use super::{Finding, Linter, LoopTool};

fn read_only(tool: &Value) -> bool {
    tool.pointer("/annotations/readOnlyHint") == Some(&json!(true))
}

/// 4.5 for the listed access tools.
pub(super) fn access_tools(linter: &mut Linter<'_>) {
    for access in AccessTool::ALL {
        let name = access.name();
        let Some((_, tool)) = linter.tools.get(name).copied() else {
            continue;
        };
        if !read_only(tool) {
            linter.push(
                Finding::new(&READ_ONLY_HINT, format!("{name} does not declare readOnlyHint: true"))
                    .tool(name)
                    .at(linter.tool_pointer(name, "/annotations")),
            );
        }
    }
}

/// 4.5 for a validate or trace-fetch tool (an execute tool's annotations reflect its
/// Language's maximum effect, which the surface does not show).
pub(super) fn loop_tool(linter: &mut Linter<'_>, tool: &LoopTool<'_>) {
    if tool.stage == Stage::Execute || read_only(tool.tool) {
        return;
    }
    linter.push(
        Finding::new(
            &READ_ONLY_HINT,
            format!("the {} tool does not declare readOnlyHint: true", tool.stage.label()),
        )
        .tool(tool.name)
        .at(tool.pointer("/annotations")),
    );
}
