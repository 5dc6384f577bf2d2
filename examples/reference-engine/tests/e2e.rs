//! End to end: the reference engine (`reference-engine`, rmcp) driven by the official
//! TypeScript MCP SDK client (`tests/e2e/loop.mjs`) through the whole loop, over stdio and over
//! streamable HTTP (with sessions and stateless), with and without resources; the surface the
//! client saw lints clean. Needs Node.js and `npm ci` in the workspace's `tests/e2e` (`.ci/run`
//! does it): under `CI=true` their absence fails the test; elsewhere it is skipped, loudly.
//!
//! The pinned SDK (1.32.2) initializes with MCP 2025-11-25, the newest revision it speaks; the
//! stateless 2026-07-28 revision is driven by the Rust client in `discover.rs`.

mod common;

use std::path::Path;
use std::process::Command;
use std::time::Instant;

use pilotage_cli::lint::{lint, render_text, Surface};
use pilotage_reference_engine::{engine, Options};
use serde_json::Value;

fn read(dir: &Path, name: &str) -> Value {
    serde_json::from_str(&std::fs::read_to_string(dir.join(name)).unwrap()).unwrap()
}

/// Runs loop.mjs with `args` after OUT_DIR; asserts it passed and the surface it saw lints clean.
fn drive(label: &str, args: &[&str]) {
    let out = std::env::temp_dir().join(format!("pilotage-e2e-{label}-{}", std::process::id()));
    std::fs::create_dir_all(&out).unwrap();
    let started = Instant::now();
    let output = Command::new("node")
        .arg(common::e2e_dir().join("loop.mjs"))
        .arg(&out)
        .args(args)
        .output()
        .expect("node runs");
    let stdout = String::from_utf8_lossy(&output.stdout);
    println!("{label} ({:?}):\n{stdout}", started.elapsed());
    assert!(
        output.status.success(),
        "{label}: the client's loop failed:\n{stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(stdout.contains(" passed, 0 failed"), "{label}: {stdout}");
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
        "{label}: the engine's surface as the client saw it:\n{}",
        render_text(&findings)
    );
    std::fs::remove_dir_all(&out).unwrap();
}

#[test]
fn the_official_typescript_client_drives_the_whole_loop_over_stdio() {
    if !common::node_available() {
        return;
    }
    let engine = env!("CARGO_BIN_EXE_reference-engine");
    drive("stdio", &["stdio", engine]);
    drive("stdio-resources", &["stdio", engine, "--resources"]);
}

#[test]
fn the_official_typescript_client_drives_the_whole_loop_over_http() {
    if !common::node_available() {
        return;
    }
    let sessions = common::engine_http(&["--resources"]);
    drive("http-sessions", &["http", &sessions.url]);
    let stateless = common::engine_http(&["--stateless"]);
    drive("http-stateless", &["http", &stateless.url]);
}

#[test]
fn the_engine_surface_lints_clean_with_its_inline_manifest() {
    for options in [
        Options::default(),
        Options {
            resources: true,
            ..Options::default()
        },
        Options {
            execution_both: true,
            ..Options::default()
        },
    ] {
        let engine = engine(&options);
        let served = engine.tools();
        let tools = serde_json::json!({"tools": served.iter().map(|t| t.to_value()).collect::<Vec<_>>()});
        let initialize = serde_json::to_value(engine.initialize_result()).unwrap();
        let manifest = initialize["_meta"]["io.github.jafarsa0/pilotage"]["manifest"].clone();
        for stateless in [false, true] {
            let findings = lint(Surface {
                tools: &tools,
                manifest: &manifest,
                initialize: Some(&initialize),
                stateless,
            });
            assert!(findings.is_empty(), "{}", render_text(&findings));
        }
    }
}
