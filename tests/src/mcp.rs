//! The official MCP schemas, read in place from `../shared/mcp/` (override the directory with
//! `PILOTAGE_MCP_SCHEMAS`). They are never copied into the project. Under `CI=true` a missing
//! directory is a test failure; elsewhere the checks that need it are skipped, loudly.

use std::path::PathBuf;

use pilotage_types::validate::SchemaValidators;
use serde_json::Value;

/// The MCP revisions every emitted tool definition must satisfy.
pub const REVISIONS: [&str; 3] = ["2025-06-18", "2025-11-25", "2026-07-28"];

/// The directory holding `schema-<revision>.json`.
pub fn directory() -> PathBuf {
    std::env::var_os("PILOTAGE_MCP_SCHEMAS")
        .map(PathBuf::from)
        .unwrap_or_else(|| crate::workspace_root().join("../shared/mcp"))
}

/// Validators of the three official MCP schemas, or `None` (after saying so on stderr) when
/// they are not available outside CI. Panics under `CI=true` when they are missing.
pub fn schemas(check: &str) -> Option<Vec<(&'static str, SchemaValidators)>> {
    let dir = directory();
    let mut found = Vec::new();
    for revision in REVISIONS {
        let path = dir.join(format!("schema-{revision}.json"));
        match std::fs::read_to_string(&path) {
            Ok(text) => {
                let document: Value =
                    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: not JSON: {e}", path.display()));
                found.push((revision, SchemaValidators::new(document)));
            }
            Err(e) => {
                if std::env::var("CI").as_deref() == Ok("true") {
                    panic!(
                        "CI=true and the official MCP schema {} is missing ({e}); set PILOTAGE_MCP_SCHEMAS",
                        path.display()
                    );
                }
                crate::report_skipped(&format!(
                    "{check}: official MCP schema {} not found ({e}); set PILOTAGE_MCP_SCHEMAS=DIR to run this check",
                    path.display()
                ));
                return None;
            }
        }
    }
    Some(found)
}

/// Asserts that `tool` is a valid MCP `Tool` under every revision in `schemas`.
pub fn assert_valid_tool(schemas: &[(&'static str, SchemaValidators)], tool: &Value) {
    for (revision, validators) in schemas {
        let verdict = validators.validate("Tool", tool).expect("the MCP schema defines Tool");
        if let Err(errors) = verdict {
            panic!(
                "tool {} is not a valid MCP {revision} Tool: {errors}\n{tool:#}",
                tool["name"]
            );
        }
    }
}
