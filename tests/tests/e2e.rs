//! End to end: the reference engine (`src/bin/reference-engine.rs`, rmcp over stdio) driven
//! by the official TypeScript MCP SDK client (`tests/e2e/loop.mjs`) through the whole loop,
//! and its surface, as that client saw it, linted clean. Needs Node.js and
//! `npm ci` in `tests/e2e` (`.ci/run` does it): under `CI=true` their absence fails the test;
//! elsewhere it is skipped, loudly.

use std::path::Path;
use std::process::Command;

use pilotage_tests::{engine, workspace_root};
use pilotage_types::conformance::{lint, render_text, Surface};
use serde_json::Value;

fn node_client_available() -> bool {
    let installed = workspace_root()
        .join("tests/e2e/node_modules/@modelcontextprotocol/sdk/package.json")
        .is_file();
    let node = Command::new("node")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if installed && node {
        return true;
    }
    let why = if node {
        "tests/e2e/node_modules is missing (run `npm ci` in tests/e2e)"
    } else {
        "node is not installed"
    };
    assert!(
        std::env::var("CI").as_deref() != Ok("true"),
        "CI=true and the end-to-end client cannot run: {why}"
    );
    pilotage_tests::report_skipped(&format!("end-to-end test with the TypeScript MCP SDK: {why}"));
    false
}

fn read(dir: &Path, name: &str) -> Value {
    serde_json::from_str(&std::fs::read_to_string(dir.join(name)).unwrap()).unwrap()
}

#[test]
fn the_official_typescript_client_drives_the_whole_loop() {
    if !node_client_available() {
        return;
    }
    let out = std::env::temp_dir().join(format!("pilotage-e2e-{}", std::process::id()));
    std::fs::create_dir_all(&out).unwrap();
    let output = Command::new("node")
        .arg(workspace_root().join("tests/e2e/loop.mjs"))
        .arg(env!("CARGO_BIN_EXE_reference-engine"))
        .arg(&out)
        .output()
        .expect("node runs");
    let stdout = String::from_utf8_lossy(&output.stdout);
    println!("{stdout}");
    assert!(
        output.status.success(),
        "the client's loop failed:\n{stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(stdout.contains(" passed, 0 failed"));

    let (tools, manifest, initialize) = (
        read(&out, "tools.json"),
        read(&out, "manifest.json"),
        read(&out, "initialize.json"),
    );
    let findings = lint(Surface {
        tools: &tools,
        manifest: &manifest,
        initialize: Some(&initialize),
        stateless: false,
    });
    assert!(
        findings.is_empty(),
        "the engine's surface as the client saw it:\n{}",
        render_text(&findings)
    );
    std::fs::remove_dir_all(&out).unwrap();
}

#[test]
fn the_engine_surface_lints_clean_with_its_inline_manifest() {
    let tools = serde_json::json!({"tools": engine::tools().iter().map(|t| t.to_value()).collect::<Vec<_>>()});
    let initialize = engine::initialize_result();
    let manifest = initialize["_meta"]["io.github.jafarsa0/pilotage"]["manifest"].clone();
    let findings = lint(Surface {
        tools: &tools,
        manifest: &manifest,
        initialize: Some(&initialize),
        stateless: false,
    });
    assert!(findings.is_empty(), "{}", render_text(&findings));
}

#[test]
fn faults_are_routed_as_part_iii_7_says() {
    let engine = engine::Engine::default();
    let carrier = engine.call("validate_workflow", &serde_json::json!({})).unwrap_err();
    assert_eq!(carrier.code.0, -32602);
    let below_minimum = engine.call(
        "pilotage_catalog",
        &serde_json::json!({"language": "workflow/v1", "verb": "list", "limit": 0}),
    );
    assert_eq!(
        below_minimum.unwrap_err().code.0,
        -32602,
        "the access schemas are strict (Part III 7.1)"
    );
    let bad_verb = engine.call(
        "pilotage_catalog",
        &serde_json::json!({"language": "workflow/v1", "verb": "delete"}),
    );
    assert_eq!(bad_verb.unwrap_err().code.0, -32602);
    let unknown = engine.call("nope", &serde_json::json!({})).unwrap_err();
    assert_eq!(unknown.message, "Unknown tool: nope");
    let request = engine
        .call("run_workflow", &serde_json::json!({"workflow": {}, "program_ref": "p"}))
        .unwrap();
    assert_eq!(request.is_error, Some(true));
    let drift = engine
        .call(
            "run_workflow",
            &serde_json::json!({"workflow": {"steps": []}, "expected_catalog_version": "cv_old"}),
        )
        .unwrap();
    assert_eq!(drift.is_error, Some(false));
    assert_eq!(drift.structured_content.unwrap()["outcome"]["status"], "catalog_drift");
}
