//! `pilotage lint` / `cargo xtask lint` (both `pilotage_cli::cli::run`, in-process here):
//! inputs, the manifest fallback to the initialize result, output formats and exit statuses.

mod common;

use std::fs;
use std::path::PathBuf;

use common::surface;
use serde_json::{json, Value};

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("pilotage-lint-{name}-{}", std::process::id()));
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(&dir).unwrap();
    dir
}

fn write(dir: &std::path::Path, name: &str, value: &Value) -> String {
    let path = dir.join(name);
    fs::write(&path, serde_json::to_vec_pretty(value).unwrap()).unwrap();
    path.display().to_string()
}

fn lint(args: &[&str]) -> (u8, String, String) {
    let line = ["pilotage", "lint"].iter().chain(args);
    let (mut out, mut err) = (Vec::new(), Vec::new());
    let status = pilotage_cli::cli::run(line, &mut out, &mut err);
    (status, String::from_utf8(out).unwrap(), String::from_utf8(err).unwrap())
}

#[test]
fn clean_surface_exits_0_and_the_manifest_comes_from_initialize() {
    let dir = scratch("clean");
    let tools = write(
        &dir,
        "tools.json",
        &json!({"jsonrpc": "2.0", "id": 2, "result": surface::tools()}),
    );
    let initialize = write(&dir, "initialize.json", &surface::initialize());
    let (status, out, err) = lint(&["--tools", &tools, "--initialize", &initialize]);
    assert_eq!(status, 0, "{out}{err}");
    assert_eq!(out, "0 error(s), 0 warning(s)\n");
    let manifest = write(
        &dir,
        "manifest.json",
        &json!({"structuredContent": surface::manifest()}),
    );
    let (status, _, _) = lint(&["--tools", &tools, "--manifest", &manifest, "--stateless"]);
    assert_eq!(status, 0);
    fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn findings_exit_1_grouped_by_tool_or_as_json() {
    let dir = scratch("findings");
    let mut tools_value = surface::tools();
    tools_value["tools"]
        .as_array_mut()
        .unwrap()
        .retain(|t| t["name"] != "trace_run");
    let tools = write(&dir, "tools.json", &tools_value);
    let manifest = write(&dir, "manifest.json", &surface::manifest());
    let (status, out, _) = lint(&["--tools", &tools, "--manifest", &manifest]);
    assert_eq!(status, 1);
    assert!(
        out.contains("tool trace_run:\n  error [10.1-4/loop-tool-missing]"),
        "{out}"
    );
    assert!(out.ends_with("1 error(s), 0 warning(s)\n"), "{out}");
    let (status, out, _) = lint(&["--tools", &tools, "--manifest", &manifest, "--format", "json"]);
    assert_eq!(status, 1);
    let findings: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(findings[0]["rule"], "10.1-4/loop-tool-missing");
    assert_eq!(findings[0]["severity"], "error");
    assert_eq!(findings[0]["tool"], "trace_run");
    assert_eq!(findings[0]["pointer"], "/manifest/languages/0/loop/trace");
    fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn unusable_input_exits_2() {
    let dir = scratch("unusable");
    let tools = write(&dir, "tools.json", &surface::tools());
    let not_tools = write(&dir, "not-tools.json", &json!({"items": []}));
    let broken = dir.join("broken.json");
    fs::write(&broken, "{").unwrap();
    let broken = broken.display().to_string();
    for args in [
        vec!["--tools", &tools],
        vec!["--tools", &not_tools, "--manifest", &tools],
        vec!["--tools", &broken, "--manifest", &tools],
        vec!["--manifest", &tools],
        vec!["--tools", &tools, "--format", "yaml"],
        vec!["--tools", &tools, "--frobnicate"],
    ] {
        let (status, _, err) = lint(&args);
        assert_eq!(status, 2, "{args:?}: {err}");
        assert!(err.starts_with("error: "), "{args:?}: {err}");
    }
    let (_, _, err) = lint(&["--tools", &tools]);
    assert!(err.contains("no manifest"), "{err}");
    // Usage errors are clap's: they name the argument and show the usage.
    let (_, _, err) = lint(&["--manifest", &tools]);
    assert!(
        err.contains("--tools <FILE>") && err.contains("Usage: pilotage lint"),
        "{err}"
    );
    let (_, _, err) = lint(&["--tools", &tools, "--format", "yaml"]);
    assert!(
        err.contains("invalid value 'yaml'") && err.contains("text, json"),
        "{err}"
    );
    fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn help_exits_0_on_stdout() {
    let (status, out, err) = lint(&["--help"]);
    assert_eq!(status, 0, "{err}");
    assert!(
        out.contains("--stateless") && out.contains("--format <FORMAT>"),
        "{out}"
    );
    assert!(err.is_empty());
}
