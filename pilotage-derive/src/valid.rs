//! Every rule of Part III that an annotated struct can break, checked at compile time. All
//! violations are reported at once, each on the offending token:
//!
//! - 4.4 reserved names: execute declares `trace_level` (rule 5), `expected_catalog_version`
//!   with `catalog` (rule 6); trace declares `run_id` (rule 7); `mode` iff `execution = "both"`;
//!   a reserved member's Rust type must be able to take its JSON type (rule 3);
//! - 4.6 runnable selection: no required (non-`Option`) program member or `program_ref` on an
//!   execute tool, nor a required program member on a shared validate tool (4.4 rule 9);
//! - 5 program declaration: validate and execute tools have a program member, each of one
//!   Language, one per Language (4.3 shared tools use distinct arguments);
//! - the attribute itself: `stage` and `name` present, keys that fit the stage.

use proc_macro2::Span;

use crate::ast::{Container, Field, JsonKind};
use crate::attr::{Errors, Stage};

/// The JSON kind of a reserved argument (Part III 4.4), from the one table in
/// `pilotage-spec`: `Some(None)` for a reserved member of any JSON type, `None` for a name that
/// is not reserved.
fn reserved_kind(name: &str) -> Option<Option<JsonKind>> {
    pilotage_spec::reserved_member(name).map(|member| {
        member.json_type.map(|json_type| match json_type {
            pilotage_spec::JsonType::String => JsonKind::String,
            pilotage_spec::JsonType::Boolean => JsonKind::Boolean,
        })
    })
}

fn kind_name(kind: JsonKind) -> &'static str {
    match kind {
        JsonKind::String => "string",
        JsonKind::Boolean => "boolean",
        JsonKind::Number => "number",
        JsonKind::Array => "array",
        JsonKind::Object => "object",
        JsonKind::Any => "any JSON value",
        JsonKind::Unknown => "unknown",
    }
}

fn type_span(field: &Field) -> Span {
    syn::spanned::Spanned::span(field.ty)
}

/// The span of the type inside `Option<...>` (the part that has the wrong JSON kind).
fn value_type_span(field: &Field) -> Span {
    field
        .value_type()
        .map_or_else(|| type_span(field), syn::spanned::Spanned::span)
}

/// `name` without underscores and hyphens, lower-cased: the spelling a renaming rule keeps.
fn folded(name: &str) -> String {
    name.chars()
        .filter(|c| *c != '_' && *c != '-')
        .flat_map(char::to_lowercase)
        .collect()
}

/// Part III 4.4 rule 1: the reserved name this field stands for, when its wire name is a
/// respelling of it (`programRef`, `ProgramRef`, `program-ref`, or a field `program_ref`
/// renamed to anything else).
fn renamed_away_from_reserved(field: &Field) -> Option<&'static str> {
    if reserved_kind(&field.name).is_some() {
        return None;
    }
    pilotage_spec::RESERVED
        .iter()
        .map(|member| member.name)
        .find(|reserved| field.rust_name == *reserved || folded(&field.name) == folded(reserved))
}

/// Checks `container`; `Err` holds every violation.
pub fn check(container: &Container) -> syn::Result<()> {
    let mut errors = Errors::default();
    let attrs = &container.attrs;
    let anchor = attrs.span.unwrap_or_else(|| container.ident.span());
    if attrs.name.is_none() {
        errors.push_at(
            anchor,
            "missing `name = \"...\"`: the MCP tool name, as the Language's `loop` object declares it",
        );
    }
    let Some(stage) = attrs.stage.as_ref().map(|s| s.value) else {
        errors.push_at(anchor, "missing `stage = \"validate\" | \"execute\" | \"trace\"`");
        return errors.finish();
    };
    let execute = stage == Stage::Execute;
    let both = attrs
        .execution
        .as_ref()
        .is_some_and(|e| e.value == pilotage_spec::EXECUTION_BOTH);
    if !execute {
        for (key, span) in [
            ("execution", attrs.execution.as_ref().map(|e| e.span)),
            ("destructive", attrs.destructive),
            ("idempotent", attrs.idempotent),
            ("open_world", attrs.open_world),
        ] {
            if let Some(span) = span {
                errors.push_at(span, format!("`{key}` applies only to execute tools"));
            }
        }
    }

    // A field renamed away from its reserved name is reported once (below) and otherwise
    // taken as that reserved member, so the one error does not cascade.
    let find = |name: &str| {
        container
            .fields
            .iter()
            .find(|f| f.name == name || renamed_away_from_reserved(f) == Some(name))
    };
    let programs: Vec<&Field> = container.fields.iter().filter(|f| f.attrs.program.is_some()).collect();
    let shared = programs.len() > 1;

    for field in &container.fields {
        if let Some(reserved) = renamed_away_from_reserved(field) {
            errors.push_at(
                field.ident.span(),
                format!(
                    "this field is the reserved argument `{reserved}` but is serialised as `{}` (serde rename or rename_all): a loop tool that supports it MUST use the reserved name (Part III 4.4 rule 1); add `#[serde(rename = \"{reserved}\")]`",
                    field.name
                ),
            );
        }
        if let Some(span) = field.flatten {
            errors.push_at(span, "`#[serde(flatten)]` is not supported on a loop tool: every argument must be a named member of the inputSchema");
        }
        if let Some(Some(kind)) = reserved_kind(&field.name) {
            let actual = field.json_kind();
            if !matches!(actual, JsonKind::Unknown | JsonKind::Any) && actual != kind {
                errors.push_at(
                    value_type_span(field),
                    format!(
                        "reserved argument `{}` is a JSON {} (Part III 4.4), but this type serialises as a JSON {}",
                        field.name,
                        kind_name(kind),
                        kind_name(actual)
                    ),
                );
            }
        }
        if let Some(program) = field.attrs.program {
            if reserved_kind(&field.name).is_some() {
                errors.push_at(
                    program,
                    format!(
                        "`{}` is a reserved argument name (Part III 4.4) and cannot carry the program",
                        field.name
                    ),
                );
            }
            if stage == Stage::Trace {
                errors.push_at(program, "a trace-fetch tool takes a run_id, not a program");
            }
            if attrs.language.is_none() && field.attrs.language.is_none() {
                errors.push_at(program, "which Language does this program belong to? add `language = \"family/version\"` here or on the struct");
            }
            if (execute || (stage == Stage::Validate && shared)) && !field.is_option() {
                let why = if execute {
                    "an execute tool's program argument must be `Option<_>`: runnable selection happens after schema validation (Part III 4.6)"
                } else {
                    "a shared validate tool's program arguments must be `Option<_>`: none is required, selection is enforced after schema validation (Part III 4.4 rule 9)"
                };
                errors.push_at(type_span(field), why);
            }
        }
    }

    // Part III 5 and 4.3: one program argument per Language.
    let mut seen: Vec<(&str, &Field)> = Vec::new();
    for field in &programs {
        let Some(language) = field.attrs.language.as_ref().or(attrs.language.as_ref()) else {
            continue;
        };
        if let Some((_, first)) = seen.iter().find(|(l, _)| *l == language.value) {
            errors.push_at(
                field.ident.span(),
                format!("two program arguments for Language {} (`{}` and `{}`): a Language has one program argument (Part III 5)", language.value, first.name, field.name),
            );
        } else {
            seen.push((&language.value, field));
        }
        if !language.value.contains('/') {
            errors.push_at(
                language.span,
                format!("\"{}\" is not a Language identifier (family/version)", language.value),
            );
        }
    }

    match stage {
        Stage::Validate | Stage::Execute if programs.is_empty() => {
            errors.push_at(
                container.ident.span(),
                "a validate or execute tool needs a program argument: mark it `#[pilotage(program)]` (Part III 5)",
            );
        }
        Stage::Trace if attrs.language.is_none() => {
            errors.push_at(anchor, "a trace-fetch tool needs `language = \"...\"`: its description must name the Language it serves (Part III 3.4)");
        }
        _ => {}
    }

    if execute {
        if find("trace_level").is_none() {
            errors.push_at(
                container.ident.span(),
                "an execute tool must declare `trace_level` (Part III 4.4 rule 5): add `trace_level: Option<String>`",
            );
        }
        if let (Some(_), None) = (attrs.catalog, find("expected_catalog_version")) {
            errors.push_at(
                attrs.catalog.unwrap_or(anchor),
                "a catalog-bearing Language's execute tool must declare `expected_catalog_version` (Part III 4.4 rule 6)",
            );
        }
        if let Some(program_ref) = find("program_ref") {
            if !program_ref.is_option() {
                errors.push_at(type_span(program_ref), "`program_ref` must be `Option<_>`: runnable selection happens after schema validation (Part III 4.6)");
            }
        }
        match (both, find("mode")) {
            (true, None) => errors.push_at(
                attrs.execution.as_ref().map_or(anchor, |e| e.span),
                "a Language with execution \"both\" must accept `mode` (Part III 4.4): add `mode: Option<String>`",
            ),
            (false, Some(mode)) => errors.push_at(
                mode.ident.span(),
                "`mode` is reserved for Languages with `execution = \"both\"` (Part III 4.4)",
            ),
            _ => {}
        }
    } else if let Some(mode) = find("mode") {
        errors.push_at(
            mode.ident.span(),
            "`mode` is an execute argument, for Languages with `execution = \"both\"` (Part III 4.4)",
        );
    }
    if stage == Stage::Trace && find("run_id").is_none() {
        errors.push_at(
            container.ident.span(),
            "a trace-fetch tool must declare `run_id` (Part III 4.4 rule 7): add `run_id: String`",
        );
    }
    errors.finish()
}
