//! The minimal engine is conformant by construction: `pilotage check --allow-execute` (every
//! probe, a Run and its trace, a failed Run included) finds nothing over stdio, HTTP with
//! sessions and stateless HTTP on the 2026-07-28 revision.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};

use serde_json::{json, Value};

/// The engine over HTTP on a free loopback port; killed on drop.
struct Served(Child, String);

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Starts the engine with `args` and waits (at most 30 s) for the endpoint it prints.
fn serve(args: &[&str]) -> Served {
    let mut child = Command::new(env!("CARGO_BIN_EXE_calc-engine"))
        .args(args)
        .stderr(Stdio::piped())
        .spawn()
        .expect("the engine starts");
    let stderr = child.stderr.take().expect("piped");
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            if let Some(at) = line.find("http://") {
                let _ = tx.send(line[at..].split_whitespace().next().unwrap_or_default().to_owned());
            }
        }
    });
    let url = rx
        .recv_timeout(std::time::Duration::from_secs(30))
        .expect("the engine says where it listens within 30 s");
    Served(child, url)
}

fn write(name: &str, value: &Value) -> String {
    let path =
        std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("pilotage-calc-{}-{name}", std::process::id()));
    std::fs::write(&path, value.to_string()).unwrap();
    path.display().to_string()
}

/// `pilotage check --format json ARGS`, in-process: (exit status, report).
fn check(args: &[&str]) -> (u8, Value) {
    let (mut out, mut err) = (Vec::new(), Vec::new());
    let argv = ["pilotage", "check", "--format", "json"]
        .into_iter()
        .chain(args.iter().copied());
    let status = pilotage_cli::cli::run(argv, &mut out, &mut err);
    let report = serde_json::from_slice(&out).unwrap_or_else(|e| {
        panic!(
            "not JSON ({e}): {}\n{}",
            String::from_utf8_lossy(&out),
            String::from_utf8_lossy(&err)
        )
    });
    (status, report)
}

#[test]
fn pilotage_check_finds_the_calc_engine_clean_on_every_transport() {
    let engine = env!("CARGO_BIN_EXE_calc-engine");
    let program = format!(
        "calc/v1={}",
        write(
            "program.json",
            &json!({"start": 2, "steps": [{"op": "add", "by": 3}, {"op": "mul", "by": 4}]})
        )
    );
    let failing = format!(
        "calc/v1={}",
        write("failing.json", &json!({"steps": [{"op": "div", "by": 0}]}))
    );
    let invalid = format!(
        "calc/v1={}",
        write("invalid.json", &json!({"steps": [{"op": "pow", "by": 2}]}))
    );
    let probes = [
        "--allow-execute",
        "--program",
        &program,
        "--failing-program",
        &failing,
        "--invalid-program",
        &invalid,
    ];
    let sessions = serve(&["--http", "127.0.0.1:0"]);
    let stateless = serve(&["--http", "127.0.0.1:0", "--stateless"]);
    let targets: [(&str, Vec<&str>); 3] = [
        ("stdio", vec!["--", engine]),
        ("http sessions", vec!["--url", &sessions.1]),
        ("stateless http, 2026-07-28", vec!["--stateless", "--url", &stateless.1]),
    ];
    for (label, target) in targets {
        let args: Vec<&str> = probes.iter().copied().chain(target).collect();
        let (status, report) = check(&args);
        assert_eq!(status, 0, "{label}: {report:#}");
        assert!(report["findings"].as_array().unwrap().is_empty(), "{label}: {report:#}");
        let status_of = |rule: &str| {
            report["results"]
                .as_array()
                .unwrap()
                .iter()
                .find(|r| r["rule"] == rule)
                .and_then(|r| r["status"].as_str())
                .unwrap_or("missing")
                .to_owned()
        };
        for rule in [
            "3.1/manifest-tool-answers",
            "4.1/guide-forms",
            "4.3/run-and-trace",
            "7.1/invalid-program-diagnostics",
            "7.1/failed-run-outcome",
            "9.5/unknown-run-not-found",
            "10.1-8/structured-content",
            "10.1-9/request-error-channel",
        ] {
            assert_eq!(status_of(rule), "passed", "{label}: {rule}: {report:#}");
        }
    }
}
