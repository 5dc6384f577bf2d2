//! The conformance linter: the toolkit's own surface lints clean; each fixture breaks exactly
//! one rule and produces exactly that finding, and every rule of the table has one; the
//! Part III section 9 example is linted and its findings explained.

mod common;

use std::collections::BTreeSet;

use common::surface;
use pilotage_cli::lint::{lint, render_text, Finding, Severity, Surface, RULES};
use serde_json::{json, Value};

fn findings(tools: &Value, manifest: &Value, initialize: Option<&Value>, stateless: bool) -> Vec<Finding> {
    lint(Surface {
        tools,
        manifest,
        initialize,
        stateless,
    })
}

fn rules(found: &[Finding]) -> Vec<&'static str> {
    let mut rules: Vec<&str> = found.iter().map(|f| f.rule).collect();
    rules.sort();
    rules.dedup();
    rules
}

#[test]
fn the_toolkit_surface_lints_clean() {
    let found = findings(
        &surface::tools(),
        &surface::manifest(),
        Some(&surface::initialize()),
        true,
    );
    assert!(found.is_empty(), "{}", render_text(&found));
    assert_eq!(render_text(&found), "0 error(s), 0 warning(s)\n");
}

fn tool_mut<'a>(tools: &'a mut Value, name: &str) -> &'a mut Value {
    tools["tools"]
        .as_array_mut()
        .unwrap()
        .iter_mut()
        .find(|t| t["name"] == name)
        .unwrap()
}

fn remove_tool(tools: &mut Value, name: &str) {
    tools["tools"].as_array_mut().unwrap().retain(|t| t["name"] != name);
}

type Mutation = fn(&mut Value, &mut Value, &mut Value, &mut bool);

/// One fixture per rule: (rule, severity, what it breaks).
const FIXTURES: &[(&str, Severity, Mutation)] = &[
    ("4/duplicate-tool-name", Severity::Error, |tools, _, _, _| {
        let copy = tool_mut(tools, "trace_run").clone();
        tools["tools"].as_array_mut().unwrap().push(copy);
    }),
    ("4.4/reserved-member-type", Severity::Error, |tools, _, _, _| {
        tool_mut(tools, "run_workflow")["inputSchema"]["properties"]["trace_level"] = json!({"type": "integer"});
    }),
    ("4.6/value-constraint", Severity::Error, |tools, _, _, _| {
        tool_mut(tools, "validate_workflow")["inputSchema"]["properties"]["note"] =
            json!({"type": "string", "maxLength": 80});
    }),
    ("4.6/format-constraint", Severity::Warning, |tools, _, _, _| {
        tool_mut(tools, "run_workflow")["inputSchema"]["properties"]["not_before"] =
            json!({"type": "string", "format": "date-time"});
    }),
    (
        "10.1-5/shared-program-argument-required",
        Severity::Error,
        |tools, manifest, init, _| {
            share_validate_tool(tools, manifest);
            init["_meta"]["io.github.jafarsa0/pilotage"]["manifest"] = manifest.clone();
        },
    ),
    ("1.2/extension-undeclared", Severity::Warning, |_, _, init, _| {
        init["capabilities"]["extensions"] = json!({});
    }),
    ("2/shorthand-meta-key", Severity::Error, |tools, _, _, _| {
        let meta = tool_mut(tools, "run_workflow")["_meta"].as_object_mut().unwrap();
        meta.insert(
            "pilotage".into(),
            json!({"argument": "workflow", "language": "workflow/v1"}),
        );
    }),
    ("3.2/initialize-meta-invalid", Severity::Error, |_, _, init, _| {
        init["_meta"]["io.github.jafarsa0/pilotage"] = json!({"manifest_url": "pilotage://manifest"});
    }),
    ("3.4/welcome-text", Severity::Error, |_, _, init, _| {
        init["instructions"] = json!("Welcome to the rules engine.");
    }),
    ("3.4/entry-point-description", Severity::Error, |tools, _, _, _| {
        tool_mut(tools, "pilotage_manifest")["description"] = json!("Returns the manifest.");
    }),
    ("3.4/stage-description", Severity::Error, |tools, _, _, _| {
        tool_mut(tools, "run_workflow")["description"] = json!("Execute a workflow document.");
    }),
    ("4/guides-binding", Severity::Error, |_, manifest, init, _| {
        manifest["languages"][0]["guides"] = json!("get_guide");
        init["_meta"]["io.github.jafarsa0/pilotage"]["manifest"] = manifest.clone();
    }),
    ("4/catalog-binding", Severity::Error, |_, manifest, init, _| {
        manifest["languages"][0]["catalog"] = json!("catalog");
        init["_meta"]["io.github.jafarsa0/pilotage"]["manifest"] = manifest.clone();
    }),
    (
        "4.2/capability-declaration-missing",
        Severity::Error,
        |tools, manifest, init, _| {
            remove_tool(tools, "pilotage_catalog");
            manifest["languages"][0].as_object_mut().unwrap().remove("capabilities");
            manifest["languages"][0]["loop"] = json!({"validate": "validate_workflow"});
            manifest["languages"][0].as_object_mut().unwrap().remove("catalog");
            init["_meta"]["io.github.jafarsa0/pilotage"] = json!({"manifest_uri": "pilotage://manifest"});
        },
    ),
    (
        "4.2/catalog-tool-unexpected",
        Severity::Error,
        |_, manifest, init, _| {
            manifest["languages"][0]["capabilities"]["catalog"] = json!(false);
            manifest["languages"][0].as_object_mut().unwrap().remove("catalog");
            manifest["languages"][0]["capabilities"]["execute"] = json!(true);
            init["_meta"]["io.github.jafarsa0/pilotage"]["manifest"] = manifest.clone();
        },
    ),
    ("10.1-2/access-tool-missing", Severity::Error, |tools, _, _, _| {
        remove_tool(tools, "pilotage_get_guide")
    }),
    ("10.1-2/access-input-schema", Severity::Error, |tools, _, _, _| {
        tool_mut(tools, "pilotage_catalog")["inputSchema"]["required"] = json!(["language"]);
    }),
    ("10.1-3/manifest-invalid", Severity::Error, |_, manifest, init, _| {
        manifest["languages"][0]["locator"] = json!("xpath");
        init["_meta"]["io.github.jafarsa0/pilotage"]["manifest"] = manifest.clone();
    }),
    ("10.1-4/loop-tool-missing", Severity::Error, |tools, _, _, _| {
        remove_tool(tools, "trace_run")
    }),
    (
        "4.3/loop-capability-mismatch",
        Severity::Error,
        |_, manifest, init, _| {
            manifest["languages"][0]["capabilities"]["trace_fetch"] = json!(false);
            init["_meta"]["io.github.jafarsa0/pilotage"]["manifest"] = manifest.clone();
        },
    ),
    ("4.3/plan-loop-member", Severity::Error, |_, manifest, init, _| {
        manifest["languages"][0]["loop"]["plan"] = json!("validate_workflow");
        init["_meta"]["io.github.jafarsa0/pilotage"]["manifest"] = manifest.clone();
    }),
    ("4.4/mode-missing", Severity::Error, |_, manifest, init, _| {
        manifest["languages"][0]["execution"] = json!("both");
        manifest["languages"][0]["promotion_authority"] = json!("caller");
        init["_meta"]["io.github.jafarsa0/pilotage"]["manifest"] = manifest.clone();
    }),
    ("4.4/mode-unexpected", Severity::Error, |tools, _, _, _| {
        tool_mut(tools, "run_workflow")["inputSchema"]["properties"]["mode"] = json!({"type": "string"});
    }),
    ("4.5/read-only-hint", Severity::Warning, |tools, _, _, _| {
        tool_mut(tools, "validate_workflow")
            .as_object_mut()
            .unwrap()
            .remove("annotations");
    }),
    ("4.6/additional-properties-false", Severity::Error, |tools, _, _, _| {
        tool_mut(tools, "validate_workflow")["inputSchema"]["additionalProperties"] = json!(false);
    }),
    ("4.6/reserved-member-constrained", Severity::Error, |tools, _, _, _| {
        tool_mut(tools, "run_workflow")["inputSchema"]["properties"]["trace_level"] =
            json!({"type": "string", "enum": ["none", "summary", "full"]});
    }),
    ("4.6/runnable-required", Severity::Error, |tools, _, _, _| {
        tool_mut(tools, "run_workflow")["inputSchema"]["required"] = json!(["workflow"]);
    }),
    (
        "4.6/program-ref-undeclared",
        Severity::Warning,
        |tools, manifest, init, _| {
            manifest["languages"][0]["promotion_authority"] = json!("promoter");
            init["_meta"]["io.github.jafarsa0/pilotage"]["manifest"] = manifest.clone();
            tool_mut(tools, "run_workflow")["inputSchema"]["properties"]
                .as_object_mut()
                .unwrap()
                .remove("program_ref");
        },
    ),
    (
        "4.3/shared-tool-without-languages",
        Severity::Error,
        |tools, manifest, init, _| {
            let mut second = manifest["languages"][0].clone();
            second["name"] = json!("workflow/v2");
            second["loop"] = json!({"validate": "validate_workflow"});
            second["capabilities"] = json!({"validate": true});
            second.as_object_mut().unwrap().remove("catalog");
            manifest["languages"].as_array_mut().unwrap().push(second);
            init["_meta"]["io.github.jafarsa0/pilotage"]["manifest"] = manifest.clone();
            tool_mut(tools, "validate_workflow")["description"] =
                json!("Validate workflow/v1 and workflow/v2 documents.");
        },
    ),
    ("5/program-declaration-missing", Severity::Error, |tools, _, _, _| {
        tool_mut(tools, "validate_workflow")
            .as_object_mut()
            .unwrap()
            .remove("_meta");
    }),
    ("5/program-declaration-invalid", Severity::Error, |tools, _, _, _| {
        tool_mut(tools, "validate_workflow")["_meta"]["io.github.jafarsa0/pilotage"] =
            json!({"languages": [{"argument": "workflow", "language": "workflow/v1"}]});
    }),
    ("5/program-argument-undeclared", Severity::Error, |tools, _, _, _| {
        tool_mut(tools, "run_workflow")["_meta"]["io.github.jafarsa0/pilotage"]["argument"] = json!("document");
    }),
    ("5/language-unknown", Severity::Error, |tools, _, _, _| {
        tool_mut(tools, "run_workflow")["_meta"]["io.github.jafarsa0/pilotage"]["language"] = json!("workflow/v9");
    }),
    ("5/duplicate-program-argument", Severity::Error, |tools, _, _, _| {
        tool_mut(tools, "run_workflow")["_meta"]["io.github.jafarsa0/pilotage"] = json!({"languages": [
            {"argument": "workflow", "language": "workflow/v1"}, {"argument": "workflow", "language": "workflow/v1"}]});
    }),
    ("6/output-schema-missing", Severity::Warning, |tools, _, _, _| {
        tool_mut(tools, "trace_run")
            .as_object_mut()
            .unwrap()
            .remove("outputSchema");
    }),
    ("6/output-schema-incomplete", Severity::Error, |tools, _, _, _| {
        let schema = &mut tool_mut(tools, "validate_workflow")["outputSchema"];
        schema["anyOf"].as_array_mut().unwrap().pop();
    }),
    (
        "8.1/session-retention-stateless",
        Severity::Error,
        |_, manifest, init, stateless| {
            manifest["languages"][0]["retention"] = json!("session");
            init["_meta"]["io.github.jafarsa0/pilotage"]["manifest"] = manifest.clone();
            *stateless = true;
        },
    ),
    ("10.1-5/trace-level-missing", Severity::Error, |tools, _, _, _| {
        tool_mut(tools, "run_workflow")["inputSchema"]["properties"]
            .as_object_mut()
            .unwrap()
            .remove("trace_level");
    }),
    (
        "10.1-5/expected-catalog-version-missing",
        Severity::Error,
        |tools, _, _, _| {
            tool_mut(tools, "run_workflow")["inputSchema"]["properties"]
                .as_object_mut()
                .unwrap()
                .remove("expected_catalog_version");
        },
    ),
    ("10.1-5/run-id-missing", Severity::Error, |tools, _, _, _| {
        tool_mut(tools, "trace_run")["inputSchema"]
            .as_object_mut()
            .unwrap()
            .remove("required");
    }),
    (
        "10.1-5/program-argument-not-required",
        Severity::Error,
        |tools, _, _, _| {
            tool_mut(tools, "validate_workflow")["inputSchema"]
                .as_object_mut()
                .unwrap()
                .remove("required");
        },
    ),
];

/// Adds a second Language, sql/postgres-15, validated by validate_workflow through its own
/// program argument `query`; `workflow` stays required.
fn share_validate_tool(tools: &mut Value, manifest: &mut Value) {
    let mut second = manifest["languages"][0].clone();
    second["name"] = json!("sql/postgres-15");
    second["loop"] = json!({"validate": "validate_workflow"});
    second["capabilities"] = json!({"validate": true});
    second.as_object_mut().unwrap().remove("catalog");
    manifest["languages"].as_array_mut().unwrap().push(second);
    let validate = tool_mut(tools, "validate_workflow");
    validate["_meta"]["io.github.jafarsa0/pilotage"] = json!({"languages": [
        {"argument": "workflow", "language": "workflow/v1"}, {"argument": "query", "language": "sql/postgres-15"}]});
    validate["inputSchema"]["properties"]["query"] = json!({"type": "string"});
    validate["description"] = json!("Validate workflow/v1 documents or sql/postgres-15 queries.");
}

#[test]
fn every_rule_of_the_table_has_a_fixture() {
    let table: BTreeSet<&str> = RULES.iter().map(|rule| rule.id).collect();
    let fixtures: BTreeSet<&str> = FIXTURES.iter().map(|(rule, _, _)| *rule).collect();
    assert_eq!(fixtures.len(), FIXTURES.len(), "one fixture per rule");
    assert_eq!(fixtures, table);
    for (id, severity, _) in FIXTURES {
        let rule = RULES.iter().find(|rule| rule.id == *id).unwrap();
        assert_eq!(rule.severity, *severity, "{id}");
    }
}

#[test]
fn each_fixture_breaks_exactly_its_rule() {
    for (rule, severity, mutate) in FIXTURES {
        let (mut tools, mut manifest, mut initialize, mut stateless) =
            (surface::tools(), surface::manifest(), surface::initialize(), false);
        mutate(&mut tools, &mut manifest, &mut initialize, &mut stateless);
        let found = findings(&tools, &manifest, Some(&initialize), stateless);
        assert_eq!(rules(&found), [*rule], "fixture for {rule}:\n{}", render_text(&found));
        assert!(found.iter().all(|f| f.severity == *severity), "{rule} severity");
        assert!(found.iter().all(|f| !f.message.is_empty() && !f.remedy.is_empty()));
    }
}

#[test]
fn shared_validate_tools_and_catalog_absence() {
    // A shared validate tool that requires a program argument, and a missing catalog tool.
    let mut tools = surface::tools();
    let mut manifest = surface::manifest();
    share_validate_tool(&mut tools, &mut manifest);
    let found = findings(&tools, &manifest, None, false);
    assert_eq!(
        rules(&found),
        ["10.1-5/shared-program-argument-required"],
        "{}",
        render_text(&found)
    );

    let mut tools = surface::tools();
    remove_tool(&mut tools, "pilotage_catalog");
    let found = findings(&tools, &surface::manifest(), None, false);
    assert_eq!(rules(&found), ["10.1-2/access-tool-missing"]);
    assert_eq!(found[0].tool.as_deref(), Some("pilotage_catalog"));
}

/// Part III section 9: the initialize result of 9.1 and the one listing of 9.2.
#[test]
fn part_iii_section_9_is_linted_and_explained() {
    let initialize = part_iii::block("9.1#d986bcba2757")["result"].clone();
    let listing = part_iii::block("9.2#da27e2e3ce2e");
    let manifest = initialize["_meta"]["io.github.jafarsa0/pilotage"]["manifest"].clone();
    let found = findings(&json!({"tools": [listing]}), &manifest, Some(&initialize), false);
    let text = render_text(&found);
    // 9.1 shows no instructions: the welcome text of 3.4 is missing from the example.
    // 9.2 shows one tool: the access tools and the validate and trace tools are not listed.
    // The 9.2 description says "Execute a workflow document" without naming workflow/v1 (3.4).
    // 9.2 shows no outputSchema (a SHOULD of Part III 6).
    let mut expected = vec![
        ("3.4/welcome-text", None),
        ("10.1-2/access-tool-missing", Some("pilotage_manifest")),
        ("10.1-2/access-tool-missing", Some("pilotage_get_guide")),
        ("10.1-2/access-tool-missing", Some("pilotage_catalog")),
        ("10.1-4/loop-tool-missing", Some("validate_workflow")),
        ("10.1-4/loop-tool-missing", Some("trace_run")),
        ("3.4/stage-description", Some("run_workflow")),
        ("6/output-schema-missing", Some("run_workflow")),
    ];
    let mut actual: Vec<(&str, Option<&str>)> = found.iter().map(|f| (f.rule, f.tool.as_deref())).collect();
    expected.sort();
    actual.sort();
    assert_eq!(actual, expected, "{text}");
    assert!(text.ends_with("7 error(s), 1 warning(s)\n"), "{text}");
}

#[test]
fn signpost_heuristics_are_neither_too_loose_nor_too_strict() {
    let tools = surface::tools();
    let manifest = surface::manifest();
    let mut initialize = surface::initialize();
    // The tool name alone does not name Pilotage.
    initialize["instructions"] = json!("Call pilotage_manifest first.");
    assert_eq!(
        rules(&findings(&tools, &manifest, Some(&initialize), false)),
        ["3.4/welcome-text"]
    );
    // The extension identifier names it.
    initialize["instructions"] = json!("Supports io.github.jafarsa0/pilotage; call pilotage_manifest first.");
    assert!(findings(&tools, &manifest, Some(&initialize), false).is_empty());
    // Documented access-tool schemas are still the Part III schemas; other vendors' _meta keys are theirs.
    let mut documented = surface::tools();
    tool_mut(&mut documented, "pilotage_get_guide")["inputSchema"]["properties"]["language"]["description"] =
        json!("A Language of the manifest.");
    tool_mut(&mut documented, "run_workflow")["_meta"]["com.example/pilotage-stats"] = json!({"calls": 3});
    assert!(
        findings(&documented, &manifest, None, false).is_empty(),
        "{}",
        render_text(&findings(&documented, &manifest, None, false))
    );
    let mut dotted = surface::tools();
    tool_mut(&mut dotted, "run_workflow")["_meta"]["io.github.jafarsa0.pilotage"] =
        json!({"argument": "workflow", "language": "workflow/v1"});
    assert_eq!(
        rules(&findings(&dotted, &manifest, None, false)),
        ["2/shorthand-meta-key"]
    );
    // Other wordings of the entry point are accepted.
    let mut tools = surface::tools();
    tool_mut(&mut tools, "pilotage_manifest")["description"] =
        json!("The entry point: begin here to learn this server's Languages.");
    assert!(findings(&tools, &manifest, None, false).is_empty());
}

fn with_member(tool: &str, member: &str, schema: Value) -> Vec<Finding> {
    let mut tools = surface::tools();
    tool_mut(&mut tools, tool)["inputSchema"]["properties"][member] = schema;
    findings(&tools, &surface::manifest(), None, false)
}

fn pointers(found: &[Finding]) -> Vec<&str> {
    found.iter().filter_map(|f| f.pointer.as_deref()).collect()
}

#[test]
fn reserved_members_have_their_json_type() {
    // run_workflow is /tools/4 of the surface.
    let found = with_member("run_workflow", "trace_level", json!({"type": "integer"}));
    assert_eq!(rules(&found), ["4.4/reserved-member-type"]);
    assert_eq!(pointers(&found), ["/tools/4/inputSchema/properties/trace_level/type"]);
    assert!(found[0].message.contains("\"string\""), "{}", found[0].message);
    let found = with_member("run_workflow", "test_run", json!({"type": "string"}));
    assert_eq!(rules(&found), ["4.4/reserved-member-type"]);
    let found = with_member("run_workflow", "trace_level", json!({"type": ["string", "integer"]}));
    assert_eq!(rules(&found), ["4.4/reserved-member-type"]);
    let found = with_member("run_workflow", "trace_level", json!({"type": ["null"]}));
    assert_eq!(rules(&found), ["4.4/reserved-member-type"]);
    // Clean: the exact type, the type or null, no type at all, any type for `input`.
    for (member, schema) in [
        (
            "trace_level",
            json!({"type": "string", "description": "none, summary or full"}),
        ),
        ("test_run", json!({"type": "boolean"})),
        ("trace_level", json!({"type": ["string", "null"]})),
        ("store", json!({})),
        ("input", json!({"type": "array"})),
    ] {
        let found = with_member("run_workflow", member, schema.clone());
        assert!(found.is_empty(), "{member}: {schema}\n{}", render_text(&found));
    }
}

#[test]
fn value_keywords_on_ordinary_members_are_errors() {
    let found = with_member(
        "validate_workflow",
        "level",
        json!({"type": "string", "enum": ["a", "b"]}),
    );
    assert_eq!(rules(&found), ["4.6/value-constraint"]);
    assert_eq!(pointers(&found), ["/tools/3/inputSchema/properties/level/enum"]);
    // Nested, and through a local $ref to $defs (as schemars writes an enum type).
    let found = with_member(
        "validate_workflow",
        "tags",
        json!({"type": "array", "items": {"type": "string", "pattern": "^[a-z]+$"}, "minItems": 1}),
    );
    let mut at = pointers(&found);
    at.sort();
    assert_eq!(
        at,
        [
            "/tools/3/inputSchema/properties/tags/items/pattern",
            "/tools/3/inputSchema/properties/tags/minItems"
        ]
    );
    let mut tools = surface::tools();
    let schema = &mut tool_mut(&mut tools, "validate_workflow")["inputSchema"];
    schema["properties"]["level"] = json!({"anyOf": [{"$ref": "#/$defs/Level"}, {"type": "null"}]});
    schema["$defs"] = json!({"Level": {"type": "string", "enum": ["low", "high"]}});
    let found = findings(&tools, &surface::manifest(), None, false);
    assert_eq!(
        pointers(&found),
        ["/tools/3/inputSchema/$defs/Level/enum"],
        "{}",
        render_text(&found)
    );
    // Across members, on the inputSchema itself.
    let mut tools = surface::tools();
    tool_mut(&mut tools, "validate_workflow")["inputSchema"]["dependentRequired"] = json!({"context": ["workflow"]});
    let found = findings(&tools, &surface::manifest(), None, false);
    assert_eq!(rules(&found), ["4.6/value-constraint"]);
    assert_eq!(pointers(&found), ["/tools/3/inputSchema/dependentRequired"]);
    for keyword in [
        "const",
        "minimum",
        "multipleOf",
        "uniqueItems",
        "not",
        "if",
        "maxProperties",
    ] {
        let found = with_member("validate_workflow", "x", json!({keyword: 1}));
        assert_eq!(rules(&found), ["4.6/value-constraint"], "{keyword}");
    }
}

#[test]
fn structure_annotations_programs_and_reserved_members_are_not_value_constraints() {
    // Structure only: types, nested members and their `required`, annotations, a member
    // named like a keyword.
    let structural = json!({
        "type": ["object", "null"],
        "description": "options",
        "default": {"pattern": "x"},
        "examples": [{"enum": 1}],
        "properties": {"pattern": {"type": "string"}, "enum": {"type": "array", "items": {"type": "integer"}}},
        "required": ["pattern"]
    });
    let found = with_member("validate_workflow", "options", structural);
    assert!(found.is_empty(), "{}", render_text(&found));
    // The program argument is left to the Language (a SHOULD of 4.6).
    let found = with_member(
        "validate_workflow",
        "workflow",
        json!({"type": "object", "minProperties": 1}),
    );
    assert!(found.is_empty(), "{}", render_text(&found));
    // A reserved member's value keyword is the reserved-member rule's, reported once.
    let found = with_member(
        "run_workflow",
        "trace_level",
        json!({"type": "string", "enum": ["full"]}),
    );
    assert_eq!(rules(&found), ["4.6/reserved-member-constrained"]);
    // Access tools are not loop tools: their Part III schemas carry enum and minimum.
    assert!(findings(&surface::tools(), &surface::manifest(), None, false).is_empty());
}

#[test]
fn every_duplicate_tool_name_is_reported_where_it_is_listed() {
    let mut tools = surface::tools();
    let list = tools["tools"].as_array_mut().unwrap();
    let (first, manifest_tool) = (list[5].clone(), list[0].clone());
    list.push(first.clone());
    list.push(manifest_tool);
    list.push(first);
    let found = findings(&tools, &surface::manifest(), None, false);
    assert_eq!(rules(&found), ["4/duplicate-tool-name"], "{}", render_text(&found));
    let mut at: Vec<(Option<&str>, &str)> = found
        .iter()
        .map(|f| (f.tool.as_deref(), f.pointer.as_deref().unwrap()))
        .collect();
    at.sort();
    assert_eq!(
        at,
        [
            (Some("pilotage_manifest"), "/tools/7"),
            (Some("trace_run"), "/tools/6"),
            (Some("trace_run"), "/tools/8")
        ]
    );
    assert!(found[0].message.contains("/tools/0") || found[0].message.contains("/tools/5"));
    // The first of each name is the one linted: a broken duplicate changes nothing else.
    let mut tools = surface::tools();
    let mut broken = tools["tools"][5].clone();
    broken["inputSchema"] = json!({"type": "object", "additionalProperties": false});
    tools["tools"].as_array_mut().unwrap().push(broken);
    assert_eq!(
        rules(&findings(&tools, &surface::manifest(), None, false)),
        ["4/duplicate-tool-name"]
    );
}

/// The JSON blocks of the vendored Part III (`schemas/pilotage-part-iii.txt`), by the rule of
/// `pilotage-tests` (`tests/src/part_iii.rs`): a block starts at a line that begins with `{`
/// and ends where its braces balance again (braces inside strings do not count); its key is
/// its section (the nearest numbered heading above it) and the first 12 hex digits of the
/// SHA-256 of its text, so a spec bump that edits a block is noticed.
mod part_iii {
    use serde_json::Value;
    use sha2::{Digest, Sha256};

    /// The JSON block keyed `key` (`9.2#da27e2e3ce2e`), parsed.
    pub fn block(key: &str) -> Value {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../schemas/pilotage-part-iii.txt");
        let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
        let found = blocks(&text)
            .into_iter()
            .find(|(found, _)| found == key)
            .unwrap_or_else(|| panic!("Part III has no block {key}"));
        serde_json::from_str(&found.1).unwrap_or_else(|e| panic!("block {key}: {e}"))
    }

    /// The section number of a heading line such as `9.4 Successful execution#`.
    fn heading_section(line: &str) -> Option<&str> {
        let (number, rest) = line.strip_suffix('#')?.split_once(' ')?;
        let number = number.trim_end_matches('.');
        let numeric = !number.is_empty()
            && number
                .split('.')
                .all(|part| !part.is_empty() && part.chars().all(|c| c.is_ascii_digit()));
        (numeric && !rest.is_empty()).then_some(number)
    }

    /// Brace depth change of one line, ignoring braces inside JSON strings.
    fn brace_delta(line: &str, in_string: &mut bool) -> i64 {
        let (mut delta, mut escaped) = (0, false);
        for c in line.chars() {
            if *in_string {
                match (escaped, c) {
                    (true, _) => escaped = false,
                    (false, '\\') => escaped = true,
                    (false, '"') => *in_string = false,
                    _ => {}
                }
                continue;
            }
            match c {
                '"' => *in_string = true,
                '{' => delta += 1,
                '}' => delta -= 1,
                _ => {}
            }
        }
        delta
    }

    /// Every block of `text` as (key, text), in order.
    fn blocks(text: &str) -> Vec<(String, String)> {
        let lines: Vec<&str> = text.lines().collect();
        let (mut section, mut found, mut index) = ("0", Vec::new(), 0);
        while index < lines.len() {
            if let Some(number) = heading_section(lines[index]) {
                section = number;
            }
            if !lines[index].starts_with('{') {
                index += 1;
                continue;
            }
            let (start, mut depth, mut in_string) = (index, 0, false);
            while index < lines.len() {
                depth += brace_delta(lines[index], &mut in_string);
                index += 1;
                if depth == 0 {
                    break;
                }
            }
            let block = lines[start..index].join("\n");
            let hash: String = Sha256::digest(block.as_bytes())
                .iter()
                .take(6)
                .map(|b| format!("{b:02x}"))
                .collect();
            found.push((format!("{section}#{hash}"), block));
        }
        found
    }
}
