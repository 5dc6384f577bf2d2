//! Part III 8.1 and 10.1-11: a stateless deployment (MCP 2026-07-28 without sessions)
//! declares no `session` retention.

use pilotage_types::SESSION_RETENTION;
use serde_json::{json, Value};

use super::rules::SESSION_RETENTION_STATELESS;
use super::{Finding, Linter};

/// 8.1: with `--stateless`, no Language declares retention "session".
pub(super) fn session_retention(linter: &mut Linter<'_>) {
    if !linter.surface.stateless {
        return;
    }
    for (index, language) in linter.languages.iter().enumerate() {
        if language.get("retention") != Some(&json!(SESSION_RETENTION)) {
            continue;
        }
        let name = language.get("name").and_then(Value::as_str).unwrap_or("?");
        linter.push(
            Finding::new(
                &SESSION_RETENTION_STATELESS,
                format!(
                    "Language {name} declares retention \"session\" on a stateless deployment, which has no session"
                ),
            )
            .at(Some(format!("/manifest/languages/{index}/retention"))),
        );
    }
}
