//! `pilotage check`'s probes of an undeclared `program_ref` (Part III 4.6), of arguments that
//! need an undeclared sub-feature (7.1: `test_run`, `idempotency_key`, `question`) and of the
//! topic form of every listed topic (4.1), against a scripted stdio server: each probe passes
//! on the well-behaved server and fails, naming what it sent, on a server with one fault.
//!
//! The server is this test binary itself (`--stub-server FAULT`): a newline-delimited JSON-RPC
//! loop with no framework under it, so that it can misbehave in exactly one way. The test has
//! no libtest harness (`harness = false` in Cargo.toml), since libtest would print to the
//! stdout that carries the protocol; `main` runs the cases and accepts a name filter.

mod stub {
    use std::collections::HashMap;
    use std::io::{BufRead, Write};

    use pilotage_types::{AccessTool, PilotageTool, EXTENSION_ID, PILOTAGE_VERSION};
    use serde_json::{json, Map, Value};

    pub const LANGUAGE: &str = "stub/v1";

    /// Check a stub program and list its diagnostics.
    #[allow(dead_code)] // only its tool definition is served
    #[derive(serde::Deserialize, schemars::JsonSchema, PilotageTool)]
    #[pilotage(stage = "validate", name = "stub_validate", language = "stub/v1")]
    pub struct StubValidate {
        /// The program: `{"steps": ["a", "b"]}`.
        #[pilotage(program)]
        pub program: Value,
    }

    /// Run a stub program and return its outcome, output and trace.
    #[allow(dead_code)] // only its tool definition is served
    #[derive(serde::Deserialize, schemars::JsonSchema, PilotageTool)]
    #[pilotage(stage = "execute", name = "stub_execute", language = "stub/v1", destructive)]
    pub struct StubExecute {
        /// The program.
        #[pilotage(program)]
        pub program: Option<Value>,
        pub input: Option<Map<String, Value>>,
        pub trace_level: Option<String>,
    }

    /// Fetch the stored trace of a stub run by run_id.
    #[allow(dead_code)] // only its tool definition is served
    #[derive(serde::Deserialize, schemars::JsonSchema, PilotageTool)]
    #[pilotage(stage = "trace", name = "stub_trace", language = "stub/v1")]
    pub struct StubTrace {
        pub run_id: String,
        pub trace_level: Option<String>,
    }

    const GUIDE: &str = "# Stub programs\n\n## programs\nA program is `{\"steps\": [\"a\", \"b\"]}`.\n\n\
## steps\nEach step is a string; a Run counts them.\n";

    fn manifest() -> Value {
        json!({
            "pilotage": PILOTAGE_VERSION,
            "languages": [{
                "name": LANGUAGE,
                "title": "Stub programs",
                "guides": "pilotage_get_guide",
                "loop": {"validate": "stub_validate", "execute": "stub_execute", "trace": "stub_trace"},
                "capabilities": {"guides": {"topic_fetch": true}, "validate": true, "execute": true, "trace_fetch": true},
                "locator": "json-pointer",
                "execution": "immediate",
                "trace": "full",
                "retention": "PT1H"
            }]
        })
    }

    fn tools() -> Value {
        json!({"tools": [
            AccessTool::Manifest.definition().to_value(),
            AccessTool::GetGuide.definition().to_value(),
            StubValidate::tool_definition().to_value(),
            StubExecute::tool_definition().to_value(),
            StubTrace::tool_definition().to_value(),
        ]})
    }

    /// One tool's answer: a result (structuredContent, isError) or a carrier error.
    type Answer = Result<(Value, bool), (i64, String)>;

    fn error(kind: &str, message: &str) -> Answer {
        Ok((json!({"error": {"kind": kind, "message": message}}), true))
    }

    fn ok(content: Value) -> Answer {
        Ok((content, false))
    }

    fn success() -> Value {
        json!({"ok": true, "status": "success", "error": null})
    }

    /// The `## topic` section of the guide.
    fn section(topic: &str) -> Option<String> {
        let heading = format!("## {topic}\n");
        let start = GUIDE.find(&heading)?;
        let rest = &GUIDE[start..];
        let end = rest[3..].find("\n## ").map_or(rest.len(), |at| at + 3);
        Some(rest[..end].trim_end().to_owned())
    }

    /// A program's diagnostics: it must be `{"steps": [strings]}`.
    fn diagnostics(program: &Value) -> Vec<Value> {
        match program.get("steps").and_then(Value::as_array) {
            Some(steps) if steps.iter().all(Value::is_string) => Vec::new(),
            _ => vec![json!({
                "severity": "error", "code": "no_steps", "path": "/steps",
                "message": "a program is {\"steps\": [strings]}"
            })],
        }
    }

    pub struct Server {
        fault: String,
        /// run id → (step count).
        runs: HashMap<String, usize>,
        next: u64,
    }

    impl Server {
        pub fn new(fault: &str) -> Self {
            Self {
                fault: fault.to_owned(),
                runs: HashMap::new(),
                next: 0,
            }
        }

        fn faulty(&self, fault: &str) -> bool {
            self.fault == fault
        }

        fn call(&mut self, tool: &str, arguments: &Map<String, Value>) -> Answer {
            let given = |name: &str| arguments.get(name).filter(|v| !v.is_null());
            match tool {
                "pilotage_manifest" => ok(manifest()),
                "pilotage_get_guide" => {
                    if given("language") != Some(&json!(LANGUAGE)) {
                        return error("not_found", "unknown language");
                    }
                    let guide = json!({
                        "id": "intro", "title": "Writing stub programs", "level": "core",
                        "topics": ["programs", "steps"], "language": LANGUAGE, "version": "1",
                        "size_bytes": GUIDE.len()
                    });
                    let Some(id) = given("id") else {
                        return ok(json!({"guides": [guide]}));
                    };
                    if id != "intro" {
                        return error("not_found", "unknown guide");
                    }
                    let body = match given("topic").and_then(Value::as_str) {
                        None => GUIDE.to_owned(),
                        Some("steps") if self.faulty("topic-not-found") => {
                            return error("not_found", "unknown topic 'steps'")
                        }
                        Some(topic) => match section(topic) {
                            Some(body) => body,
                            None => return error("not_found", "unknown topic"),
                        },
                    };
                    let mut guide = guide;
                    guide["body"] = json!(body);
                    ok(json!({"guide": guide}))
                }
                "stub_validate" => {
                    let Some(program) = given("program") else {
                        return error("invalid_request", "`program` is required");
                    };
                    let found = diagnostics(program);
                    ok(json!({"valid": found.is_empty(), "diagnostics": found}))
                }
                "stub_execute" => self.execute(arguments),
                "stub_trace" => {
                    let Some(run_id) = given("run_id").and_then(Value::as_str) else {
                        return Err((-32602, "run_id: a required member is missing".to_owned()));
                    };
                    if given("question").is_some() && !self.faulty("question-ignored") {
                        return error("unsupported", "`question` needs trace_fetch.narrate");
                    }
                    let level = match given("trace_level").map(|l| l.as_str()) {
                        None => "full",
                        Some(Some(level @ ("summary" | "full"))) => level,
                        Some(_) => return error("invalid_request", "trace_level is summary or full"),
                    };
                    let Some(&count) = self.runs.get(run_id) else {
                        return error("not_found", "unknown run: it may have expired");
                    };
                    ok(json!({
                        "run_id": run_id, "outcome": success(), "output": {"count": count},
                        "trace": trace(run_id, level, count),
                    }))
                }
                _ => Err((-32602, format!("unknown tool {tool}"))),
            }
        }

        fn execute(&mut self, arguments: &Map<String, Value>) -> Answer {
            let given = |name: &str| arguments.get(name).filter(|v| !v.is_null());
            let level = match given("trace_level").map(|l| l.as_str()) {
                None => Some("summary"),
                Some(Some("none")) => None,
                Some(Some(level @ ("summary" | "full"))) => Some(level),
                Some(Some(_)) => return error("invalid_request", "trace_level is none, summary or full"),
                Some(None) => return Err((-32602, "trace_level: expected a string".to_owned())),
            };
            let program = given("program");
            if given("program_ref").is_some() {
                match program {
                    Some(_) if self.faulty("ref-beside-program-runs") => {}
                    Some(_) => return error("invalid_request", "a program and program_ref: give exactly one"),
                    None if self.faulty("ref-alone-carrier") => {
                        return Err((-32602, "program_ref: not a member of this tool".to_owned()))
                    }
                    None => return error("unsupported", "program_ref: stub/v1 has no promoted programs"),
                }
            }
            if given("test_run").is_some() && !self.faulty("test-run-ignored") {
                return error("unsupported", "`test_run` needs execute.test_run");
            }
            if given("idempotency_key").is_some() && !self.faulty("idempotency-key-ignored") {
                return error("unsupported", "`idempotency_key` needs execute.idempotency");
            }
            let Some(program) = program else {
                return error("invalid_request", "no runnable: give `program`");
            };
            self.next += 1;
            let run_id = format!("run-{}", self.next);
            let found = diagnostics(program);
            if !found.is_empty() {
                return ok(json!({
                    "run_id": run_id,
                    "outcome": {"ok": false, "status": "validation_error", "error": "the program is invalid"},
                    "diagnostics": found,
                }));
            }
            let count = program["steps"].as_array().map_or(0, Vec::len);
            self.runs.insert(run_id.clone(), count);
            let mut response = json!({"run_id": run_id, "outcome": success(), "output": {"count": count}});
            if let Some(level) = level {
                response["trace"] = trace(&run_id, level, count);
            }
            ok(response)
        }

        /// The answer to one JSON-RPC message (`None` for a notification).
        pub fn handle(&mut self, message: &Value) -> Option<Value> {
            let id = message.get("id")?.clone();
            let params = message.get("params").cloned().unwrap_or(json!({}));
            let result = match message["method"].as_str().unwrap_or_default() {
                "initialize" => Ok(json!({
                    "protocolVersion": params.get("protocolVersion").cloned().unwrap_or(json!("2025-06-18")),
                    "capabilities": {"tools": {}, "extensions": {EXTENSION_ID: {"version": PILOTAGE_VERSION}}},
                    "serverInfo": {"name": "stub", "version": "1"},
                    "instructions": "This server speaks Pilotage: call pilotage_manifest first to learn its program Languages.",
                    "_meta": {EXTENSION_ID: {"manifest": manifest()}},
                })),
                "ping" => Ok(json!({})),
                "tools/list" => Ok(tools()),
                "tools/call" => {
                    let name = params["name"].as_str().unwrap_or_default().to_owned();
                    let arguments = params["arguments"].as_object().cloned().unwrap_or_default();
                    self.call(&name, &arguments).map(|(content, is_error)| {
                        json!({
                            "content": [{"type": "text", "text": content.to_string()}],
                            "structuredContent": content,
                            "isError": is_error,
                        })
                    })
                }
                other => Err((-32601, format!("method not found: {other}"))),
            };
            Some(match result {
                Ok(result) => json!({"jsonrpc": "2.0", "id": id, "result": result}),
                Err((code, message)) => {
                    json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}})
                }
            })
        }
    }

    fn trace(run_id: &str, level: &str, count: usize) -> Value {
        let steps: Vec<Value> = (0..count)
            .map(|i| json!({"id": format!("s{i}"), "outcome": success()}))
            .collect();
        json!({"run_id": run_id, "level": level, "steps": steps})
    }

    /// Serves stdin/stdout until the client closes stdin.
    pub fn serve(fault: &str) {
        let mut server = Server::new(fault);
        let stdin = std::io::stdin();
        let mut stdout = std::io::stdout().lock();
        for line in stdin.lock().lines().map_while(Result::ok) {
            let Ok(message) = serde_json::from_str::<Value>(&line) else {
                continue;
            };
            if let Some(answer) = server.handle(&message) {
                let _ = writeln!(stdout, "{answer}");
                let _ = stdout.flush();
            }
        }
    }
}

use serde_json::{json, Value};

const RUNNABLE_SELECTION: &str = "4.6/runnable-selection";
const UNDECLARED_SUB_FEATURE: &str = "7.1/undeclared-sub-feature";
const GUIDE_FORMS: &str = "4.1/guide-forms";

/// A program file for the stub Language, written once per process.
fn program_file() -> String {
    let path = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("pilotage-check-probes-{}.json", std::process::id()));
    std::fs::write(&path, json!({"steps": ["a", "b"]}).to_string()).unwrap();
    path.display().to_string()
}

/// `pilotage check --format json` of the stub with `fault` (and `extra` options), in-process:
/// (exit status, report).
fn check(fault: &str, extra: &[&str]) -> (u8, Value) {
    let exe = std::env::current_exe().unwrap().display().to_string();
    let mut argv = vec!["pilotage", "check", "--format", "json", "--timeout", "60"];
    argv.extend_from_slice(extra);
    argv.extend(["--", &exe, "--stub-server", fault]);
    let (mut out, mut err) = (Vec::new(), Vec::new());
    let status = pilotage_cli::cli::run(argv, &mut out, &mut err);
    let report = serde_json::from_slice(&out).unwrap_or_else(|e| {
        panic!(
            "{fault}: not JSON ({e}): {}\n{}",
            String::from_utf8_lossy(&out),
            String::from_utf8_lossy(&err)
        )
    });
    (status, report)
}

fn status_of(report: &Value, rule: &str) -> String {
    report["results"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["rule"] == rule)
        .map(|r| match r["status"].as_str() {
            Some("skipped") => format!("skipped: {}", r["reason"]),
            other => other.unwrap_or("?").to_owned(),
        })
        .unwrap_or_else(|| "missing".to_owned())
}

fn findings_of<'a>(report: &'a Value, rule: &str) -> Vec<&'a Value> {
    report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["rule"] == rule)
        .collect()
}

/// With --allow-execute and a program, every probe runs on the well-behaved stub and passes:
/// the whole report is clean.
fn well_behaved_server_passes_every_probe() {
    let program = format!("stub/v1={}", program_file());
    let (status, report) = check("good", &["--allow-execute", "--program", &program]);
    assert_eq!(report["findings"], json!([]), "{report:#}");
    assert_eq!(status, 0, "{report:#}");
    for rule in [
        RUNNABLE_SELECTION,
        UNDECLARED_SUB_FEATURE,
        GUIDE_FORMS,
        "4.3/run-and-trace",
    ] {
        assert_eq!(status_of(&report, rule), "passed", "{rule}: {report:#}");
    }
}

/// The fault breaks exactly `rule`: it fails, with one finding on `tool` whose message names
/// every part of `names`; the exit status is 1.
fn fails_with(fault: &str, rule: &str, tool: &str, names: &[&str]) {
    let program = format!("stub/v1={}", program_file());
    let (status, report) = check(fault, &["--allow-execute", "--program", &program]);
    assert_eq!(status, 1, "{fault}: {report:#}");
    assert_eq!(status_of(&report, rule), "failed", "{fault}: {report:#}");
    let found = findings_of(&report, rule);
    assert_eq!(found.len(), 1, "{fault}: one finding of {rule}: {report:#}");
    assert_eq!(found[0]["tool"], tool, "{fault}: {report:#}");
    let message = found[0]["message"].as_str().unwrap();
    for name in names {
        assert!(message.contains(name), "{fault}: the finding names {name}: {message}");
    }
    let others: Vec<&Value> = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["rule"] != rule)
        .collect();
    assert!(others.is_empty(), "{fault}: only {rule} fails: {others:#?}");
}

/// The old framework ran the program and ignored an undeclared program_ref beside it.
fn program_ref_beside_a_program_must_not_run() {
    fails_with(
        "ref-beside-program-runs",
        RUNNABLE_SELECTION,
        "stub_execute",
        &["program_ref", "does not declare", "an execute response (a Run)"],
    );
}

fn program_ref_alone_must_not_be_a_carrier_error() {
    fails_with(
        "ref-alone-carrier",
        RUNNABLE_SELECTION,
        "stub_execute",
        &["program_ref alone", "JSON-RPC error -32602"],
    );
}

fn undeclared_test_run_must_be_refused() {
    fails_with(
        "test-run-ignored",
        UNDECLARED_SUB_FEATURE,
        "stub_execute",
        &["`test_run`", "execute.test_run", "an execute response (a Run)"],
    );
}

fn undeclared_idempotency_key_must_be_refused() {
    fails_with(
        "idempotency-key-ignored",
        UNDECLARED_SUB_FEATURE,
        "stub_execute",
        &["`idempotency_key`", "execute.idempotency"],
    );
}

/// The question is asked about the run the probes kept, so that ignoring it answers a trace.
fn undeclared_question_must_be_refused() {
    fails_with(
        "question-ignored",
        UNDECLARED_SUB_FEATURE,
        "stub_trace",
        &[
            "`question`",
            "trace_fetch.narrate",
            "a trace fetch response",
            "\"run_id\":\"run-",
        ],
    );
}

fn every_listed_topic_must_be_fetchable() {
    fails_with(
        "topic-not-found",
        GUIDE_FORMS,
        "pilotage_get_guide",
        &["topic \"steps\"", "guide intro", "not_found", "guides.topic_fetch"],
    );
}

/// Without --allow-execute the destructive execute tool gets no program: the sub-feature
/// probes of execute are skipped (saying why), program_ref alone is still probed (it names no
/// program), and a server that would run a program beside program_ref is never sent one.
fn without_allow_execute_nothing_runnable_is_sent() {
    let (status, report) = check("ref-beside-program-runs", &[]);
    assert_eq!(status, 0, "{report:#}");
    assert_eq!(status_of(&report, RUNNABLE_SELECTION), "passed", "{report:#}");
    let sub_feature = status_of(&report, UNDECLARED_SUB_FEATURE);
    assert!(
        sub_feature.starts_with("skipped") && sub_feature.contains("--allow-execute"),
        "{sub_feature}"
    );
    let (status, report) = check("ref-alone-carrier", &[]);
    assert_eq!(status, 1, "{report:#}");
    assert_eq!(status_of(&report, RUNNABLE_SELECTION), "failed", "{report:#}");
    // The question is then asked about an unknown run: not_found is accepted, ignoring it is
    // not distinguishable, a carrier error would be.
    let (_, report) = check("question-ignored", &[]);
    assert!(findings_of(&report, UNDECLARED_SUB_FEATURE).is_empty(), "{report:#}");
}

type Case = (&'static str, fn());

const CASES: &[Case] = &[
    (
        "well_behaved_server_passes_every_probe",
        well_behaved_server_passes_every_probe,
    ),
    (
        "program_ref_beside_a_program_must_not_run",
        program_ref_beside_a_program_must_not_run,
    ),
    (
        "program_ref_alone_must_not_be_a_carrier_error",
        program_ref_alone_must_not_be_a_carrier_error,
    ),
    (
        "undeclared_test_run_must_be_refused",
        undeclared_test_run_must_be_refused,
    ),
    (
        "undeclared_idempotency_key_must_be_refused",
        undeclared_idempotency_key_must_be_refused,
    ),
    (
        "undeclared_question_must_be_refused",
        undeclared_question_must_be_refused,
    ),
    (
        "every_listed_topic_must_be_fetchable",
        every_listed_topic_must_be_fetchable,
    ),
    (
        "without_allow_execute_nothing_runnable_is_sent",
        without_allow_execute_nothing_runnable_is_sent,
    ),
];

fn main() -> std::process::ExitCode {
    let args: Vec<String> = std::env::args().collect();
    if args.get(1).map(String::as_str) == Some("--stub-server") {
        stub::serve(args.get(2).map_or("good", String::as_str));
        return std::process::ExitCode::SUCCESS;
    }
    // libtest's selection: `-- NAME...` (substrings; with --exact, whole names), `--skip NAME`.
    let (mut filters, mut skips, mut exact) = (Vec::new(), Vec::new(), false);
    let mut rest = args.iter().skip(1);
    while let Some(arg) = rest.next() {
        match arg.as_str() {
            "--skip" => skips.extend(rest.next().cloned()),
            "--exact" => exact = true,
            "--list" => {
                for (name, _) in CASES {
                    println!("{name}: test");
                }
                return std::process::ExitCode::SUCCESS;
            }
            flag if flag.starts_with('-') => {}
            filter => filters.push(filter.to_owned()),
        }
    }
    let matches = |name: &str, pattern: &String| {
        if exact {
            name == pattern
        } else {
            name.contains(pattern.as_str())
        }
    };
    let selected: Vec<&Case> = CASES
        .iter()
        .filter(|(name, _)| filters.is_empty() || filters.iter().any(|f| matches(name, f)))
        .filter(|(name, _)| !skips.iter().any(|s| matches(name, s)))
        .collect();
    println!("\nrunning {} tests", selected.len());
    let mut failed = Vec::new();
    for (name, case) in selected.iter().copied() {
        let outcome = std::panic::catch_unwind(case);
        println!("test {name} ... {}", if outcome.is_ok() { "ok" } else { "FAILED" });
        if outcome.is_err() {
            failed.push(*name);
        }
    }
    println!(
        "\ntest result: {}. {} passed; {} failed\n",
        if failed.is_empty() { "ok" } else { "FAILED" },
        selected.len() - failed.len(),
        failed.len()
    );
    if failed.is_empty() {
        std::process::ExitCode::SUCCESS
    } else {
        println!("failures: {}", failed.join(", "));
        std::process::ExitCode::FAILURE
    }
}
