//! Part III 5 and 10.1-7 (program-valued tool declaration): every validate and execute tool
//! carries `{"argument", "language"}` or `{"languages": [...]}` under the full `_meta` key;
//! each argument is its own, is in the inputSchema, and names a Language of the manifest.

use std::collections::BTreeSet;

use pilotage_types::validate::pilotage;
use pilotage_types::{escape_pointer_token, META_KEY};
use serde_json::Value;

use super::rules::{
    DUPLICATE_PROGRAM_ARGUMENT, LANGUAGE_UNKNOWN, PROGRAM_ARGUMENT_UNDECLARED, PROGRAM_DECLARATION_INVALID,
    PROGRAM_DECLARATION_MISSING,
};
use super::{extension, Finding, Linter, LoopTool};

/// 5 on a loop tool whose Languages are `known`; returns the declaration's (argument,
/// Language) pairs (none for a trace-fetch tool, which carries no program).
pub(super) fn declaration(
    linter: &mut Linter<'_>,
    tool: &LoopTool<'_>,
    known: &BTreeSet<&str>,
) -> Vec<(String, String)> {
    if !tool.stage.carries_programs() {
        return Vec::new();
    }
    let meta = tool.tool.get("_meta").and_then(Value::as_object);
    if let Some(meta) = meta {
        let at = tool.pointer("/_meta").unwrap_or_default();
        extension::shorthand_meta_keys(linter, meta, Some(tool.name), &at);
    }
    let Some(declaration) = meta.and_then(|m| m.get(META_KEY)) else {
        linter.push(
            Finding::new(
                &PROGRAM_DECLARATION_MISSING,
                format!(
                    "{} tool `{}` has no _meta[\"{META_KEY}\"] program declaration",
                    tool.stage.label(),
                    tool.name
                ),
            )
            .tool(tool.name)
            .at(tool.pointer("/_meta")),
        );
        return Vec::new();
    };
    validity(linter, tool, declaration);
    let arguments = arguments(declaration);
    argument_checks(linter, tool, &arguments, known);
    arguments
}

/// The declaration validates against `$defs/ProgramDeclaration`.
fn validity(linter: &mut Linter<'_>, tool: &LoopTool<'_>, declaration: &Value) {
    let Err(errors) = pilotage()
        .validate("ProgramDeclaration", declaration)
        .expect("ProgramDeclaration exists")
    else {
        return;
    };
    let messages: Vec<&str> = errors.violations.iter().map(|v| v.message.as_str()).collect();
    linter.push(
        Finding::new(
            &PROGRAM_DECLARATION_INVALID,
            format!("the program declaration is invalid: {}", messages.join("; ")),
        )
        .tool(tool.name)
        .at(declaration_pointer(tool)),
    );
}

/// The (argument, Language) pairs of a declaration, single or `languages[]`.
fn arguments(declaration: &Value) -> Vec<(String, String)> {
    let pair = |entry: &Value| {
        let argument = entry.get("argument").and_then(Value::as_str)?;
        let language = entry.get("language").and_then(Value::as_str)?;
        Some((argument.to_owned(), language.to_owned()))
    };
    match declaration.get("languages").and_then(Value::as_array) {
        Some(entries) => entries.iter().filter_map(pair).collect(),
        None => pair(declaration).into_iter().collect(),
    }
}

/// Each argument declared once, present in the inputSchema, for a Language of the manifest.
fn argument_checks(
    linter: &mut Linter<'_>,
    tool: &LoopTool<'_>,
    arguments: &[(String, String)],
    known: &BTreeSet<&str>,
) {
    let mut seen = BTreeSet::new();
    for (argument, language) in arguments {
        let mut findings = Vec::new();
        if !seen.insert(argument) {
            findings.push((
                &DUPLICATE_PROGRAM_ARGUMENT,
                format!("argument `{argument}` is declared for more than one Language"),
                declaration_pointer(tool),
            ));
        }
        if !tool.declares(argument) {
            findings.push((
                &PROGRAM_ARGUMENT_UNDECLARED,
                format!("program argument `{argument}` is not in the inputSchema"),
                tool.pointer("/inputSchema/properties"),
            ));
        }
        if !known.contains(language.as_str()) {
            findings.push((
                &LANGUAGE_UNKNOWN,
                format!("declared Language {language} is not in the manifest"),
                declaration_pointer(tool),
            ));
        }
        for (rule, message, at) in findings {
            linter.push(Finding::new(rule, message).tool(tool.name).at(at));
        }
    }
}

/// The pointer of the tool's program declaration.
fn declaration_pointer(tool: &LoopTool<'_>) -> Option<String> {
    tool.pointer(&format!("/_meta/{}", escape_pointer_token(META_KEY)))
}
