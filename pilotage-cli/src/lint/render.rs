//! The text report: findings grouped by tool, ending with a count line.

use std::fmt::Write as _;

use super::{Finding, Severity};

/// Renders findings as text grouped by tool, ending with a count line.
pub fn render_text(findings: &[Finding]) -> String {
    let mut out = String::new();
    let mut current: Option<Option<&str>> = None;
    for finding in findings {
        let tool = finding.tool.as_deref();
        if current != Some(tool) {
            let _ = writeln!(
                out,
                "{}:",
                tool.map_or_else(|| "surface (manifest, initialize)".to_owned(), |t| format!("tool {t}"))
            );
            current = Some(tool);
        }
        let at = finding
            .pointer
            .as_deref()
            .map(|p| format!(" at {p}"))
            .unwrap_or_default();
        let _ = writeln!(
            out,
            "  {} [{}]{at}: {}\n    fix: {}",
            finding.severity, finding.rule, finding.message, finding.remedy
        );
    }
    let errors = findings.iter().filter(|f| f.severity == Severity::Error).count();
    let warnings = findings.len() - errors;
    let _ = writeln!(out, "{errors} error(s), {warnings} warning(s)");
    out
}
