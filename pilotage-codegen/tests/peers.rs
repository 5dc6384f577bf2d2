//! The neighbouring MCP schemas, generated through the same pipeline: realistic instances
//! (written from the schemas' descriptions) validate and round-trip through the generated
//! types; invalid ones are rejected, with the same API as Pilotage's (`SchemaDef::validate`,
//! `parse`); the hard cases (unresolved external references, deep pointers, `if/then`,
//! `additionalProperties: false`, a `$def` name defined twice, described `const` variants) hold.

#[path = "golden/mod.rs"]
mod golden;

use golden::{
    majordomus_projection_input as mpi, majordomus_projection_output as mpo, mcec_agent_tool_result as mcec,
    pcp_tools as pcp,
};
use pilotage_types::{parse, SchemaDef};
use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::{json, Value};

fn accepts<T: SchemaDef + DeserializeOwned + Serialize>(value: Value) {
    if let Err(errors) = T::validate(&value) {
        panic!("{} rejects {value}: {errors}", std::any::type_name::<T>());
    }
    let typed: T = parse(&value).unwrap_or_else(|e| panic!("{}: {e}", std::any::type_name::<T>()));
    assert_eq!(
        serde_json::to_value(typed).unwrap(),
        value,
        "{} does not round-trip",
        std::any::type_name::<T>()
    );
}

fn rejects<T: SchemaDef + DeserializeOwned>(value: Value, expected: &str) {
    let errors = T::validate(&value).expect_err(&format!("{} must reject {value}", std::any::type_name::<T>()));
    let text = errors.to_string();
    assert!(
        text.contains(expected),
        "{} rejected {value} without `{expected}`: {text}",
        std::any::type_name::<T>()
    );
    assert!(parse::<T>(&value).is_err());
}

#[test]
fn pcp_tools() {
    accepts::<pcp::MemoryReadOutput>(
        json!({"path": "projects/pilotage.md", "frontmatter": {"title": "Pilotage", "type": "semantic"},
        "body": "# Pilotage\nNotes.", "pending_revisions": 2}),
    );
    accepts::<pcp::PartitionListOutput>(json!({"partitions": [
        {"name": "work", "label": "Work", "access": ["read", "propose"], "review_required": true},
        {"name": "personal", "access": ["read", "write", "review"]}]}));
    accepts::<pcp::ContextBriefOutput>(json!({"kind": "work", "profile_type": "none", "profile": null,
        "memory": [{"path": "a.md", "title": "A", "updated": "2026-11-01T10:00:00Z", "excerpt": "first lines"}],
        "partitions": [{"name": "work", "access": ["read"]}], "omitted": ["profile.core"]}));
    accepts::<pcp::Error>(
        json!({"error": {"code": "forbidden", "message": "token lacks memory.write", "required_scopes": ["memory.write"]}}),
    );
    accepts::<pcp::MemorySearchInput>(
        json!({"query": "quarterly goals", "limit": 5, "type": "episodic", "include_review": ["proposed"]}),
    );

    rejects::<pcp::Error>(json!({"error": {"code": "teapot", "message": "m"}}), "teapot");
    rejects::<pcp::MemoryReadOutput>(
        json!({"path": "a.md", "body": "x"}),
        "\"frontmatter\" is a required property",
    );
    rejects::<pcp::PartitionListOutput>(
        json!({"partitions": [{"name": "work", "access": ["delete"]}]}),
        "delete",
    );
    rejects::<pcp::ContextBriefOutput>(
        json!({"kind": "work", "profile_type": "none", "memory": [],
        "partitions": [{"name": "work"}], "omitted": []}),
        "\"access\" is a required property",
    );
    rejects::<pcp::MemorySearchInput>(json!({"query": ""}), "shorter than 1 character");
}

#[test]
fn pcp_deep_pointer_is_resolved_and_externals_are_explicit_values() {
    // `partitions` of context_brief_output points into partition_list_output: same item type.
    let brief = pcp::ContextBriefOutput::new(
        pcp::ContextBriefOutputKind::Team,
        pcp::ContextBriefOutputProfileType::Team,
        [],
        Vec::<String>::new(),
    )
    .with_profile(json!({"team": "platform"}));
    assert_eq!(
        serde_json::to_value(&brief).unwrap()["profile"],
        json!({"team": "platform"})
    );
    // The validators list the unresolved references and accept anything there.
    let unresolved = pcp::validators().unresolved_references();
    for reference in [
        "memory.page.schema.json#/$defs/path",
        "profile.core.schema.json",
        "audit.entry.schema.json",
    ] {
        assert!(
            unresolved.contains(&reference),
            "{reference} not listed in {unresolved:?}"
        );
    }
    accepts::<pcp::AuditListOutput>(json!({"entries": [{"anything": [1, 2]}, "even a string"], "next_cursor": "c"}));
    let code = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/golden/pcp_tools.rs")).unwrap();
    assert!(
        code.contains("Reference to another document `profile.core.schema.json`"),
        "the fallback is documented on the type"
    );
}

#[test]
fn mcec_agent_tool_result() {
    accepts::<mcec::McecAgentToolResult>(
        json!({"sessionId": "s-1", "ok": true, "result": {"png": "iVBORw0KGgo="},
        "warnings": [{"code": "slow-capture", "detail": "capture took 2.1 s"}]}),
    );
    accepts::<mcec::McecAgentToolResult>(
        json!({"ok": false, "sessionId": null, "error": {"code": "window-not-found",
        "category": "no-target", "detail": "no window titled Notepad", "lastObservation": {"windows": 3}, "partialResult": null}}),
    );
    accepts::<mcec::McecAgentToolResult>(json!({"ok": true, "result": null}));

    // additionalProperties: false, in the schema and in the types.
    rejects::<mcec::McecAgentToolResult>(json!({"ok": true, "extra": 1}), "Additional properties");
    assert!(serde_json::from_value::<mcec::McecAgentToolResult>(json!({"ok": true, "extra": 1})).is_err());
    // if ok is false then error is required; if ok is true no error object.
    rejects::<mcec::McecAgentToolResult>(json!({"ok": false}), "\"error\" is a required property");
    rejects::<mcec::McecAgentToolResult>(
        json!({"ok": true, "error": {"code": "c", "category": "focus", "detail": "d"}}),
        "not",
    );
    rejects::<mcec::McecAgentToolResult>(
        json!({"ok": false, "error": {"code": "c", "category": "cosmic-rays", "detail": "d"}}),
        "cosmic-rays",
    );
    // The root is validated through DEF ".".
    assert_eq!(<mcec::McecAgentToolResult as SchemaDef>::DEF, ".");
}

#[test]
fn majordomus_projection() {
    accepts::<mpi::McpProjectionInput>(json!({}));
    accepts::<mpi::McpProjectionInput>(json!({"effect": "repository_mutation"}));
    accepts::<mpi::McpProjectionInput>(json!({"effect": null}));
    rejects::<mpi::McpProjectionInput>(json!({"effect": "delete"}), "delete");
    rejects::<mpi::McpProjectionInput>(json!({"effects": "read"}), "Additional properties");
    rejects::<mpi::McpProjectionInput>(json!({"effect": 3}), "3");

    let projection = json!({
        "server": {"name": "majordomus", "title": "Majordomus", "version": "0.14.0"},
        "protocol_versions": ["2025-06-18"],
        "transports": [{"id": "stdio", "reached_by": "majordomus mcp", "attached": 0}],
        "serving": {"methods": ["initialize"], "tools": true, "resources": true, "prompts": false, "notifications": false},
        "tool_count": 2,
        "tools": [],
        "effects": [{"effect": "read", "tools": 1}, {"effect": "repository_mutation", "tools": 1}],
        "writers": ["majordomus_plan_transition"],
        "resources": {"builtin": 1, "objects": 0, "template": "majordomus://<kind>/<identity>"},
        "launcher_in_repository": false,
        "clients": [{"id": "claude", "title": "Claude Code", "config": ".mcp.json", "standing": "wired"}],
        "findings": [{"code": "launcher-missing", "message": "no launcher", "remedy": "run majordomus mcp install"}]
    });
    accepts::<mpo::McpProjection>(projection.clone());
    let mut fewer = projection.clone();
    fewer["clients"] = json!([]);
    fewer["findings"] = json!([]);
    accepts::<mpo::McpProjection>(fewer);
    accepts::<mpo::McpEffectCount>(json!({"effect": "process_state", "tools": 4}));

    let mut missing = projection.clone();
    missing.as_object_mut().unwrap().remove("serving");
    rejects::<mpo::McpProjection>(missing, "\"serving\" is a required property");
    rejects::<mpo::McpEffectCount>(json!({"effect": "read", "tools": -1}), "-1");
    rejects::<mpo::McpClient>(
        json!({"id": "x", "title": "X", "config": "c", "standing": "maybe"}),
        "maybe",
    );
}

#[test]
fn the_same_def_name_in_two_schemas_lives_in_two_modules() {
    let input: mpi::ExecutionEffect = serde_json::from_value(json!("read")).unwrap();
    let output: mpo::ExecutionEffect = serde_json::from_value(json!("read")).unwrap();
    assert_eq!(
        serde_json::to_value(input).unwrap(),
        serde_json::to_value(output).unwrap()
    );
    // Variants carry the descriptions of their `const` branches as docs.
    let code = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/golden/majordomus_projection_input.rs"
    ))
    .unwrap();
    assert!(
        code.contains("///Nothing changes. Every query and every resource of this executable.\n    Read,"),
        "the variant keeps the description of its `const` branch"
    );
    // An open enum: a later version's value is kept, not rejected.
    let later: mpi::ExecutionEffect = serde_json::from_value(json!("teleport")).unwrap();
    assert!(!later.is_known());
    assert_eq!(serde_json::to_value(&later).unwrap(), json!("teleport"));
}
