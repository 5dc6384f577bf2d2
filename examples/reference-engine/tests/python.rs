//! End to end with the official Python MCP SDK (`tests/e2e/python/loop.py`, `mcp==2.3.0`): the
//! whole loop over stdio and streamable HTTP, in the handshake revision and in the stateless
//! 2026-07-28 revision (`server/discover`, capabilities in every request). Needs the SDK in
//! `tests/e2e/python/.venv` (or a Python with it in `PILOTAGE_PYTHON`); `.ci/run` installs it.
//! Under `CI=true` its absence fails the test; elsewhere it is skipped, loudly.

mod common;

use std::path::PathBuf;
use std::process::Command;

fn e2e_dir() -> PathBuf {
    common::e2e_dir().join("python")
}

fn python() -> Option<PathBuf> {
    let candidate = std::env::var_os("PILOTAGE_PYTHON")
        .map(PathBuf::from)
        .unwrap_or_else(|| e2e_dir().join(".venv/bin/python"));
    let has_sdk = Command::new(&candidate)
        .args(["-c", "import mcp, jsonschema"])
        .output()
        .is_ok_and(|o| o.status.success());
    if has_sdk {
        return Some(candidate);
    }
    assert!(
        std::env::var("CI").as_deref() != Ok("true"),
        "CI=true and the Python MCP SDK is not installed at {} (see tests/e2e/python/requirements.txt)",
        candidate.display()
    );
    use std::io::Write as _;
    let _ = writeln!(
        std::io::stderr(),
        "SKIPPED: end-to-end test with the Python MCP SDK: no Python with `mcp` at {} (set PILOTAGE_PYTHON)",
        candidate.display()
    );
    None
}

fn drive(python: &PathBuf, label: &str, mode: &str, target: &[&str]) {
    let output = Command::new(python)
        .arg(e2e_dir().join("loop.py"))
        .args(["--mode", mode, "--timeout", "20"])
        .args(target)
        .output()
        .expect("python runs");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success() && stdout.contains(" passed, 0 failed"),
        "{label} ({mode}): the Python client's loop failed:\n{stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
}

#[test]
fn the_official_python_client_drives_the_whole_loop() {
    let Some(python) = python() else { return };
    let engine = env!("CARGO_BIN_EXE_reference-engine");
    for mode in ["handshake", "stateless"] {
        drive(&python, "stdio", mode, &["stdio", engine]);
        drive(&python, "stdio --resources", mode, &["stdio", engine, "--resources"]);
        let sessions = common::engine_http(&["--resources"]);
        drive(&python, "http sessions", mode, &["http", &sessions.url]);
        let stateless = common::engine_http(&["--stateless", "--hide-from-undeclared"]);
        drive(&python, "http stateless", mode, &["http", &stateless.url]);
    }
}
