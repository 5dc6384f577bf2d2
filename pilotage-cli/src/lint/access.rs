//! Part III 4 (the tool surface: unique tool names, the manifest's reference-field binding),
//! 4.1 and 4.2 with 10.1-2 (the fixed access tools and their input schemas), 10.1-3 (a valid
//! manifest) and Part II 4.2 (every Language has a capability declaration).

use std::collections::BTreeMap;

use pilotage_types::validate::pilotage;
use pilotage_types::{AccessTool, CATALOG_TOOL, GET_GUIDE_TOOL};
use serde_json::{json, Value};

use super::rules::{
    ACCESS_INPUT_SCHEMA, ACCESS_TOOL_MISSING, CAPABILITY_DECLARATION_MISSING, CATALOG_BINDING, CATALOG_TOOL_UNEXPECTED,
    DUPLICATE_TOOL_NAME, GUIDES_BINDING, MANIFEST_INVALID,
};
use super::{declared, required_members, signposts, Finding, Linter};

/// 4: one finding for every listing entry whose name an earlier entry already has. The
/// other rules read the first entry of each name.
pub(super) fn duplicate_tool_names(linter: &mut Linter<'_>) {
    let mut first: BTreeMap<&str, usize> = BTreeMap::new();
    for (index, tool) in linter.list.iter().enumerate() {
        let Some(name) = tool.get("name").and_then(Value::as_str) else {
            continue;
        };
        match first.get(name) {
            None => {
                first.insert(name, index);
            }
            Some(earlier) => linter.push(
                Finding::new(
                    &DUPLICATE_TOOL_NAME,
                    format!("`{name}` is already the name of /tools/{earlier}; tool names must be unique (the first is the one linted)"),
                )
                .tool(name)
                .at(Some(format!("/tools/{index}"))),
            ),
        }
    }
}

/// 10.1-3, Part II 4.2 and the 4 bindings on the manifest. Returns whether the loop tools
/// can be checked against it (it is valid, or at least lists Languages).
pub(super) fn manifest(linter: &mut Linter<'_>) -> bool {
    let valid = manifest_validity(linter);
    let (manifest, languages) = (linter.surface.manifest, linter.languages);
    for (index, language) in languages.iter().enumerate() {
        let at = format!("/manifest/languages/{index}");
        let name = language.get("name").and_then(Value::as_str).unwrap_or("?");
        if language.get("capabilities").is_none() && manifest.get("capabilities").is_none() {
            linter.push(
                Finding::new(
                    &CAPABILITY_DECLARATION_MISSING,
                    format!(
                        "Language {name} has no capability declaration, and the manifest declares none at server level"
                    ),
                )
                .at(Some(at.clone())),
            );
        }
        bindings(linter, language, name, &at);
    }
    valid || !languages.is_empty()
}

/// 10.1-3: the manifest validates against `$defs/Manifest`. Binding and capability faults
/// are left to their own rules.
fn manifest_validity(linter: &mut Linter<'_>) -> bool {
    let Err(errors) = pilotage()
        .validate("Manifest", linter.surface.manifest)
        .expect("Manifest exists")
    else {
        return true;
    };
    for violation in errors.violations {
        let binding =
            violation.instance_pointer.ends_with("/guides") || violation.instance_pointer.ends_with("/catalog");
        let capability =
            violation.schema_pointer.starts_with("/$defs/Manifest/anyOf") && violation.instance_pointer.is_empty();
        if binding || capability {
            continue;
        }
        linter.push(
            Finding::new(
                &MANIFEST_INVALID,
                format!("the manifest violates the schema: {}", violation.message),
            )
            .at(Some(format!("/manifest{}", violation.instance_pointer))),
        );
    }
    false
}

/// 4, manifest reference-field binding: `guides` and `catalog` name the fixed tools.
fn bindings(linter: &mut Linter<'_>, language: &Value, name: &str, at: &str) {
    if language.get("guides") != Some(&json!(GET_GUIDE_TOOL)) {
        linter.push(
            Finding::new(
                &GUIDES_BINDING,
                format!("Language {name}: `guides` must be \"{GET_GUIDE_TOOL}\" in the MCP binding"),
            )
            .at(Some(format!("{at}/guides"))),
        );
    }
    let catalog_declared = declared(linter.surface.manifest, language, "catalog");
    let finding = match language.get("catalog") {
        Some(value) if value != &json!(CATALOG_TOOL) => Finding::new(
            &CATALOG_BINDING,
            format!("Language {name}: `catalog` must be \"{CATALOG_TOOL}\" in the MCP binding"),
        ),
        None if catalog_declared => Finding::new(
            &CATALOG_BINDING,
            format!("Language {name} declares catalog but has no `catalog` member"),
        )
        .hint("present iff catalog is declared"),
        _ => return,
    };
    linter.push(finding.at(Some(format!("{at}/catalog"))));
}

/// 10.1-2 and 4.2: the fixed access tools are listed (pilotage_catalog exactly when a
/// Language declares catalog) with the Part III input schemas; their 3.4 signposts.
pub(super) fn access_tools(linter: &mut Linter<'_>) {
    let manifest = linter.surface.manifest;
    let any_catalog = linter
        .languages
        .iter()
        .any(|language| declared(manifest, language, "catalog"));
    for access in AccessTool::ALL {
        let name = access.name();
        let Some((_, tool)) = linter.tools.get(name).copied() else {
            if access != AccessTool::Catalog || any_catalog {
                linter.push(Finding::new(&ACCESS_TOOL_MISSING, format!("tools/list has no `{name}`")).tool(name));
            }
            continue;
        };
        if access == AccessTool::Catalog && !any_catalog {
            linter.push(
                Finding::new(
                    &CATALOG_TOOL_UNEXPECTED,
                    "pilotage_catalog is exposed but no Language declares catalog",
                )
                .tool(name)
                .at(linter.tool_pointer(name, "")),
            );
        }
        input_schema(linter, access, tool);
        signposts::access_description(linter, access, tool);
    }
}

/// 10.1-2: "Those tools use the Section 4 schemas" (3.1 for pilotage_manifest: any object
/// schema without required members), annotation keywords aside.
fn input_schema(linter: &mut Linter<'_>, access: AccessTool, tool: &Value) {
    let input = tool.get("inputSchema").unwrap_or(&Value::Null);
    let matches = match access {
        AccessTool::Manifest => input.get("type") == Some(&json!("object")) && required_members(input).is_empty(),
        _ => without_annotations(input) == without_annotations(&access.input_schema()),
    };
    if matches {
        return;
    }
    let name = access.name();
    linter.push(
        Finding::new(
            &ACCESS_INPUT_SCHEMA,
            format!("the inputSchema of {name} is not the one Part III defines"),
        )
        .tool(name)
        .at(linter.tool_pointer(name, "/inputSchema"))
        .hint(match access {
            AccessTool::Manifest => "an object schema with no required members (Part III 3.1)",
            AccessTool::GetGuide => "the one printed in Part III 4.1, exactly",
            AccessTool::Catalog => "the one printed in Part III 4.2, exactly",
        }),
    );
}

/// `schema` without annotation keywords (`description`, `title`, `$comment`, `examples`,
/// `$schema`) at any depth: an access tool's inputSchema may document its members and still be
/// the one Part III 4.1/4.2 defines.
fn without_annotations(schema: &Value) -> Value {
    match schema {
        Value::Object(object) => Value::Object(
            object
                .iter()
                .filter(|(key, _)| {
                    !matches!(
                        key.as_str(),
                        "description" | "title" | "$comment" | "examples" | "$schema"
                    )
                })
                .map(|(key, value)| {
                    let value = if matches!(key.as_str(), "enum" | "const" | "default") {
                        value.clone()
                    } else {
                        without_annotations(value)
                    };
                    (key.clone(), value)
                })
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.iter().map(without_annotations).collect()),
        other => other.clone(),
    }
}
