//! The client side of Part III (`pilotage discover`, `pilotage call`, on
//! `pilotage_client`) against two engines: this reference engine (rmcp) and a small
//! engine on the official TypeScript SDK's server (`tests/e2e/engine.mjs`), which differs where
//! the spec allows: no inline manifest, the program argument `ruleset`, a Language without a
//! catalog. Over stdio and streamable HTTP (sessions and stateless). Each answer's channel,
//! kinds, arguments sent and exit status are checked against what Part III prescribes.

mod common;

use serde_json::{json, Value};

use common::{json_of, pilotage, write};

/// Every check against the reference engine, reached through `target` (`--url U` or `-- CMD`);
/// `shared`: a run one `pilotage call` stored is fetchable by the next (stateless HTTP, where
/// the run id alone is the capability), or not (stdio: each call starts its own engine; HTTP
/// sessions: each call is a session of its own, and runs are per session).
fn reference_engine(target: &[&str], shared: bool) {
    let args = |extra: &[&str]| -> Vec<String> { extra.iter().chain(target).map(|s| (*s).to_owned()).collect() };
    let (status, found) = json_of(&args(&["discover", "--format", "json"]));
    assert_eq!(status, 0, "{found}");
    assert_eq!(found["detected_by"], json!(["extension", "manifest_tool"]));
    let inline_source = if target.contains(&"--stateless") {
        "discover"
    } else {
        "initialize"
    };
    assert_eq!(found["manifest_source"], inline_source);
    assert_eq!(
        found["languages"][0]["loop"]["validate"],
        json!({"tool": "validate_workflow", "program_argument": "workflow"})
    );
    assert_eq!(
        found["languages"][0]["loop"]["trace"],
        json!({"tool": "trace_run", "program_argument": null})
    );

    let invalid = write(
        "invalid.json",
        &json!({"steps": [{"id": "p", "kind": "call", "capability": "cap_read_user_profil"}]}),
    );
    let (status, called) = json_of(&args(&[
        "call",
        "--language",
        "workflow/v1",
        "--stage",
        "validate",
        "--program",
        &invalid,
        "--format",
        "json",
    ]));
    assert_eq!(status, 0, "valid: false is a response (Part III 7.1): {called}");
    assert_eq!(called["channel"], "response");
    assert_eq!(called["is_error"], false);
    assert_eq!(
        called["arguments"],
        json!({"workflow": {"steps": [{"id": "p", "kind": "call", "capability": "cap_read_user_profil"}]}})
    );
    assert_eq!(called["structured_content"]["valid"], false);

    let program = write(
        "program.json",
        &json!({"steps": [{"id": "p", "kind": "call", "capability": "cap_read_user_profile",
        "with": {"user_id": "$.input.userId"}}], "output": {"name": "$.steps.p.output.name"}}),
    );
    let input = write("input.json", &json!({"userId": "42"}));
    let (status, run) = json_of(&args(&[
        "call",
        "--language",
        "workflow/v1",
        "--stage",
        "execute",
        "--program",
        &program,
        "--input",
        &input,
        "--trace-level",
        "summary",
        "--format",
        "json",
    ]));
    assert_eq!(status, 0, "{run}");
    assert_eq!(run["structured_content"]["output"]["name"], "Amira Hassan");
    assert_eq!(run["arguments"]["trace_level"], "summary");
    let run_id = run["structured_content"]["run_id"].as_str().unwrap().to_owned();
    let (status, fetched) = json_of(&args(&[
        "call",
        "--language",
        "workflow/v1",
        "--stage",
        "trace",
        "--run-id",
        &run_id,
        "--format",
        "json",
    ]));
    if shared {
        assert_eq!(status, 0, "{fetched}");
        assert_eq!(fetched["structured_content"]["run_id"], run_id.as_str());
    } else {
        // Over stdio every `pilotage call` starts its own engine, which knows no earlier run;
        // over HTTP with sessions every `pilotage call` is a session of its own, and a run is
        // visible only to the session that started it (Part III 8.4): the same not_found.
        assert_eq!((status, fetched["kind"].as_str()), (1, Some("not_found")), "{fetched}");
    }

    let (status, unknown) = json_of(&args(&[
        "call",
        "--language",
        "workflow/v1",
        "--stage",
        "trace",
        "--run-id",
        "run_none",
        "--format",
        "json",
    ]));
    assert_eq!(status, 1);
    assert_eq!(unknown["channel"], "request_error");
    assert_eq!(
        (unknown["kind"].as_str(), unknown["raw_kind"].as_str()),
        (Some("not_found"), Some("not_found"))
    );
    assert_eq!(unknown["is_error"], true);

    let (status, bad_level) = json_of(&args(&[
        "call",
        "--language",
        "workflow/v1",
        "--stage",
        "execute",
        "--program",
        &program,
        "--trace-level",
        "loud",
        "--format",
        "json",
    ]));
    assert_eq!(
        (status, bad_level["kind"].as_str()),
        (1, Some("invalid_request")),
        "an unknown trace_level is a request error"
    );

    // Refusals: nothing is sent, exit 2.
    for refused in [
        vec![
            "call",
            "--language",
            "other/v9",
            "--stage",
            "validate",
            "--program",
            &program,
        ],
        vec![
            "call",
            "--language",
            "workflow/v1",
            "--stage",
            "execute",
            "--program",
            &program,
            "--mode",
            "deploy",
        ],
        vec!["call", "--language", "workflow/v1", "--stage", "trace"],
    ] {
        let (status, _, err) = pilotage(&args(&refused));
        assert_eq!(status, 2, "{refused:?}: {err}");
        assert!(err.contains("request not constructed"), "{err}");
    }
}

#[test]
fn the_client_drives_the_reference_engine_over_stdio_and_http() {
    let engine = env!("CARGO_BIN_EXE_reference-engine");
    reference_engine(&["--", engine], false);
    let sessions = common::serve(engine, &["--http", "127.0.0.1:0"]);
    reference_engine(&["--url", &sessions.url], false);
    let stateless = common::serve(engine, &["--http", "127.0.0.1:0", "--stateless"]);
    reference_engine(&["--url", &stateless.url], true);
    reference_engine(&["--stateless", "--url", &stateless.url], true);
}

/// Every check against the TypeScript engine.
fn typescript_engine(target: &[&str]) {
    let args = |extra: &[&str]| -> Vec<String> { extra.iter().chain(target).map(|s| (*s).to_owned()).collect() };
    let (status, found) = json_of(&args(&["discover", "--format", "json"]));
    assert_eq!(status, 0, "{found}");
    assert_eq!(found["detected_by"], json!(["extension", "manifest_tool"]));
    assert_eq!(
        found["manifest_source"], "tool",
        "no inline manifest: the tool is the source"
    );
    assert_eq!(
        found["languages"][0]["loop"]["validate"],
        json!({"tool": "check_rules", "program_argument": "ruleset"})
    );
    assert!(found["manifest"]["languages"][0].get("catalog").is_none());

    let ruleset = write(
        "ruleset.json",
        &json!({"rules": [{"id": "r1", "when": "vip", "then": "upgrade"}]}),
    );
    let input = write("vip.json", &json!({"vip": true}));
    let (status, run) = json_of(&args(&[
        "call",
        "--language",
        "rules/v2",
        "--stage",
        "execute",
        "--program",
        &ruleset,
        "--input",
        &input,
        "--format",
        "json",
    ]));
    assert_eq!(status, 0, "{run}");
    assert_eq!(run["tool"], "apply_rules");
    assert!(
        run["arguments"].get("ruleset").is_some(),
        "the declared argument name: {run}"
    );
    assert_eq!(run["structured_content"]["outcome"]["ok"], true);

    let (status, neither) = json_of(&args(&[
        "call",
        "--language",
        "rules/v2",
        "--stage",
        "execute",
        "--format",
        "json",
    ]));
    assert_eq!(
        (status, neither["kind"].as_str()),
        (1, Some("invalid_request")),
        "{neither}"
    );

    // The tool declares no expected_catalog_version: refused, nothing sent.
    let (status, _, err) = pilotage(&args(&[
        "call",
        "--language",
        "rules/v2",
        "--stage",
        "execute",
        "--program",
        &ruleset,
        "--expected-catalog-version",
        "cv",
    ]));
    assert_eq!(status, 2, "{err}");
    assert!(err.contains("does not declare `expected_catalog_version`"), "{err}");
}

#[test]
fn the_client_drives_a_typescript_engine_over_stdio_and_http() {
    if !common::node_available() {
        return;
    }
    let script = common::e2e_dir().join("engine.mjs").display().to_string();
    typescript_engine(&["--", "node", &script]);
    let sessions = common::serve("node", &[&script, "--http", "0"]);
    typescript_engine(&["--url", &sessions.url]);
    let stateless = common::serve("node", &[&script, "--http", "0", "--stateless"]);
    typescript_engine(&["--url", &stateless.url]);
}

#[test]
fn a_server_that_is_not_pilotage_exits_1_and_an_unreachable_one_2() {
    let engine = env!("CARGO_BIN_EXE_reference-engine");
    if common::node_available() {
        // No extension, and a `pilotage_manifest` that answers no manifest (Part III 1.3).
        let plain = common::e2e_dir().join("plain.mjs").display().to_string();
        let (status, out, err) = pilotage(&["discover", "--format", "json", "--", "node", &plain]);
        assert_eq!(status, 1, "{out}{err}");
        assert!(err.contains("not a Pilotage server"), "{err}");
        assert_eq!(serde_json::from_str::<Value>(&out).unwrap()["pilotage"], false);
        let (status, _, err) = pilotage(&["call", "--language", "a/b", "--stage", "validate", "--", "node", &plain]);
        assert_eq!(status, 2, "call on a server that is not Pilotage: {err}");
    }
    let (status, _, err) = pilotage(&["discover", "--timeout", "5", "--url", "http://127.0.0.1:9/mcp"]);
    assert_eq!(status, 2, "{err}");
    assert!(err.contains("error:"), "{err}");
    let (status, _, err) = pilotage(&[
        "call",
        "--language",
        "x/y",
        "--stage",
        "validate",
        "--",
        "/nonexistent/engine",
    ]);
    assert_eq!(status, 2, "{err}");
    assert!(err.contains("cannot start"), "{err}");
    let (status, _, err) = pilotage(&["discover", "--timeout", "0", "--", engine]);
    assert_eq!(status, 2, "{err}");
}

#[test]
fn pilotage_check_finds_the_reference_engine_clean_over_stdio_and_http() {
    let engine = env!("CARGO_BIN_EXE_reference-engine");
    let program = write(
        "check-program.json",
        &json!({"steps": [{"id": "p", "kind": "call", "capability": "cap_read_user_profile",
            "with": {"user_id": "$.input.userId"}}], "output": {"name": "$.steps.p.output.name"}}),
    );
    let input = write("check-input.json", &json!({"userId": "42"}));
    let program_arg = format!("workflow/v1={program}");
    let input_arg = format!("workflow/v1={input}");
    let run = ["--allow-execute", "--program", &program_arg, "--input", &input_arg];
    let stdio: Vec<&str> = ["check", "--format", "json"]
        .into_iter()
        .chain(run)
        .chain(["--", engine, "--resources"])
        .collect();
    let (status, report) = json_of(&stdio);
    assert_eq!(status, 0, "{report:#}");
    let results = report["results"].as_array().unwrap();
    let status_of = |rule: &str| {
        results
            .iter()
            .find(|r| r["rule"] == rule)
            .map(|r| r["status"].as_str().unwrap_or_default().to_owned())
            .unwrap_or_default()
    };
    for rule in [
        "3.1/manifest-tool-answers",
        "4.1/unknown-not-found",
        "4.2/unknown-entry-not-found",
        "4.3/run-and-trace",
        "7.1/unknown-trace-level",
        "7.1/invalid-program-diagnostics",
        "9.5/unknown-run-not-found",
        "10.1-8/structured-content",
        "10.1-9/request-error-channel",
        "10.1-12/resources-equal",
    ] {
        assert_eq!(status_of(rule), "passed", "{rule}: {report:#}");
    }
    assert!(report["findings"].as_array().unwrap().is_empty(), "{report:#}");

    // Over HTTP, stateless, without --allow-execute: nothing runs; the run probes say why.
    let server = common::serve(engine, &["--http", "127.0.0.1:0", "--stateless"]);
    let (status, report) = json_of(&["check", "--format", "json", "--stateless", "--url", &server.url]);
    assert_eq!(status, 0, "{report:#}");
    let skipped = report["results"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["rule"] == "4.3/run-and-trace")
        .unwrap();
    assert_eq!(skipped["status"], "skipped");
    assert!(
        skipped["reason"].as_str().unwrap().contains("--allow-execute"),
        "{skipped}"
    );
    // The stateless revision with --allow-execute, and HTTP with sessions: a Run and its trace
    // fetch pass too (on stateless HTTP the run id is the capability; in a session, the
    // session that ran it fetches it).
    let sessions = common::serve(engine, &["--http", "127.0.0.1:0", "--resources"]);
    for target in [
        vec!["--stateless", "--url", server.url.as_str()],
        vec!["--url", sessions.url.as_str()],
    ] {
        let args: Vec<&str> = ["check", "--format", "json"]
            .into_iter()
            .chain(run)
            .chain(target.clone())
            .collect();
        let (status, report) = json_of(&args);
        assert_eq!(status, 0, "{target:?}: {report:#}");
        assert!(
            report["findings"].as_array().unwrap().is_empty(),
            "{target:?}: {report:#}"
        );
        let run_and_trace = report["results"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["rule"] == "4.3/run-and-trace")
            .unwrap();
        assert_eq!(run_and_trace["status"], "passed", "{target:?}: {report:#}");
    }

    // JUnit: one test case per rule checked, and it parses as XML.
    let (status, xml, _) = pilotage(&["check", "--format", "junit", "--url", &server.url]);
    assert_eq!(status, 0);
    let mut reader = quick_xml::Reader::from_str(&xml);
    let (mut cases, mut skips) = (0, 0);
    loop {
        match reader.read_event().expect("well-formed XML") {
            quick_xml::events::Event::Start(e) | quick_xml::events::Event::Empty(e) => match e.name().as_ref() {
                b"testcase" => cases += 1,
                b"skipped" => skips += 1,
                _ => {}
            },
            quick_xml::events::Event::Eof => break,
            _ => {}
        }
    }
    let rules = pilotage_cli::lint::RULES.len() + pilotage_cli::check::PROBES.len();
    assert_eq!(cases, rules, "{xml}");
    assert!(skips >= 1, "{xml}");

    // A baseline entry for a rule that passes is reported stale.
    let baseline = write(
        "baseline.json",
        &json!({"expected_failures": [{"rule": "9.5/unknown-run-not-found", "reason": "tracked in #1"}]}),
    );
    let (status, _, err) = pilotage(&["check", "--baseline", &baseline, "--url", &server.url]);
    assert_eq!(status, 0);
    assert!(
        err.contains("baseline entry 9.5/unknown-run-not-found is stale"),
        "{err}"
    );
}

#[test]
fn pilotage_check_catches_each_broken_rule() {
    if !common::node_available() {
        return;
    }
    let script = common::e2e_dir().join("engine.mjs").display().to_string();
    let ruleset = write(
        "check-ruleset.json",
        &json!({"rules": [{"id": "r1", "when": "vip", "then": "upgrade"}]}),
    );
    let program = format!("rules/v2={ruleset}");
    // (switch of tests/e2e/engine.mjs, the rule that must fail, the section it must cite)
    let cases = [
        ("no-structured-content", "10.1-8/structured-content", "6"),
        ("invalid-program-is-error", "7.1/invalid-program-diagnostics", "7.1"),
        ("trace-level-32602", "7.1/unknown-trace-level", "7.1"),
        ("request-error-is-error-false", "10.1-9/request-error-channel", "7.2"),
        ("unknown-kind", "10.1-9/request-error-channel", "7.2"),
        ("malformed-execute", "10.1-8/structured-content", "6"),
        ("trace-level-enum", "4.6/reserved-member-constrained", "4.6"),
        ("no-program-declaration", "5/program-declaration-missing", "5"),
        ("unknown-language-success", "4.1/unknown-not-found", "4.1"),
        ("no-welcome", "3.4/welcome-text", "3.4"),
        // No outputSchema anywhere, and results that break the envelope: judged against the
        // union of each tool's kind all the same (Part III 6).
        ("foreign-envelope", "10.1-8/structured-content", "6"),
    ];
    // Conformant first: the same command exits 0.
    let base = ["check", "--format", "json", "--allow-execute", "--program", &program];
    let (status, report) = json_of(&[&base[..], &["--", "node", &script]].concat());
    assert_eq!(status, 0, "the TypeScript engine is conformant: {report:#}");
    for (switch, rule, section) in cases {
        let (status, report) = json_of(&[&base[..], &["--", "node", &script, "--break", switch]].concat());
        assert_eq!(status, 1, "--break {switch}: {report:#}");
        let result = report["results"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["rule"] == rule)
            .unwrap_or_else(|| panic!("{rule} is in the table"));
        assert_eq!(
            result["status"], "failed",
            "--break {switch}: {rule} must fail: {report:#}"
        );
        assert_eq!(result["section"], section, "{rule}");
        assert!(
            report["findings"].as_array().unwrap().iter().any(|f| f["rule"] == rule),
            "--break {switch}: a finding of {rule}: {report:#}"
        );
    }
}

/// The rules the TypeScript engine's faults leave: each `--break` of the reference engine (see
/// src/main.rs) breaks one, and `pilotage check` must report that rule failed, citing its
/// section, with a finding; exit 1 for a rule of severity error, 0 for a warning (a SHOULD:
/// warnings do not fail the command, but they fail their rule).
#[test]
fn pilotage_check_catches_each_broken_rule_of_the_reference_engine() {
    let engine = env!("CARGO_BIN_EXE_reference-engine");
    let program = write(
        "break-program.json",
        &json!({"steps": [{"id": "p", "kind": "call", "capability": "cap_read_user_profile",
            "with": {"user_id": "$.input.userId"}}], "output": {"name": "$.steps.p.output.name"}}),
    );
    // Valid, but its Run fails: the address is refused by cap_send_email.
    let failing = write(
        "break-failing.json",
        &json!({"steps": [{"id": "m", "kind": "call", "capability": "cap_send_email",
            "with": {"to": "nobody", "subject": "hello"}}], "output": {"sent": "$.steps.m.output.sent"}}),
    );
    let input = write("break-input.json", &json!({"userId": "42"}));
    let (program, failing, input) = (
        format!("workflow/v1={program}"),
        format!("workflow/v1={failing}"),
        format!("workflow/v1={input}"),
    );
    let base = [
        "check",
        "--format",
        "json",
        "--allow-execute",
        "--program",
        &program,
        "--failing-program",
        &failing,
        "--input",
        &input,
        "--",
        engine,
        // What some faults need to show; conformant as they are.
        "--resources",
        "--execution-both",
    ];
    let status_of = |report: &Value, rule: &str| -> Value {
        report["results"]
            .as_array()
            .and_then(|results| results.iter().find(|r| r["rule"] == rule))
            .unwrap_or_else(|| panic!("{rule} is in the results: {report:#}"))
            .clone()
    };

    // Conformant first: exit 0, no finding, and every probe checked and passed (4.4 too: the
    // Language's execution is "both").
    let (status, report) = json_of(&base);
    assert_eq!(status, 0, "the reference engine is conformant: {report:#}");
    assert_eq!(report["findings"], json!([]), "{report:#}");
    for probe in pilotage_cli::check::PROBES {
        assert_eq!(
            status_of(&report, probe.id)["status"],
            "passed",
            "{}: {report:#}",
            probe.id
        );
    }

    // (--break switch of the reference engine, the rule that must fail, the section it cites)
    let cases = [
        ("guide-fetch-index-form", "4.1/guide-forms", "4.1"),
        ("catalog-list-no-version", "4.2/catalog-list", "4.2"),
        ("not-found-no-catalog-version", "4.2/unknown-entry-not-found", "7.2"),
        ("mode-ignored", "4.4/mode-request-error", "4.4"),
        ("destructive-hint-false", "4.5/destructive-hint-risk", "4.5"),
        ("both-runnables-run", "4.6/runnable-selection", "4.6"),
        ("neither-runnable-runs", "4.6/runnable-selection", "4.6"),
        ("unknown-run-invalid-request", "9.5/unknown-run-not-found", "9.5"),
        ("stale-catalog-resource", "10.1-12/resources-equal", "8.3"),
        ("trace-fetch-full", "4.3/run-and-trace", "4.3"),
        ("failed-run-is-error", "7.1/failed-run-outcome", "7.1"),
    ];
    for (switch, rule, section) in cases {
        let severity = pilotage_cli::check::PROBES
            .iter()
            .find(|probe| probe.id == rule)
            .unwrap_or_else(|| panic!("{rule} is a probe rule"))
            .severity;
        let (status, report) = json_of(&[&base[..], &["--break", switch]].concat());
        let expected = if severity == pilotage_cli::lint::Severity::Error {
            1
        } else {
            0
        };
        assert_eq!(status, expected, "--break {switch} ({severity}): {report:#}");
        let result = status_of(&report, rule);
        assert_eq!(
            result["status"], "failed",
            "--break {switch}: {rule} must fail: {report:#}"
        );
        assert_eq!(result["section"], section, "{rule}");
        let findings = report["findings"].as_array().unwrap();
        assert!(
            findings
                .iter()
                .any(|f| f["rule"] == rule && f["severity"] == severity.to_string()),
            "--break {switch}: a {severity} finding of {rule}: {report:#}"
        );
    }

    // Usage errors exit 2: an unknown fault, and a fault without the option it needs.
    for args in [
        &["--break", "no-such-fault"][..],
        &["--break", "mode-ignored"][..],
        &["--break", "stale-catalog-resource", "--execution-both"][..],
    ] {
        let output = std::process::Command::new(engine)
            .args(args)
            .stdin(std::process::Stdio::null())
            .output()
            .expect("the engine starts");
        assert_eq!(output.status.code(), Some(2), "{args:?}: {output:?}");
    }
}

/// `pilotage call --stage validate` of the TypeScript engine answering `count` diagnostics
/// (about 1 KB each) through `target`: (exit status, stdout, stderr).
fn validate_with_diagnostics(target: &[&str], extra: &[&str]) -> (u8, String, String) {
    let ruleset = write("large-ruleset.json", &json!({"rules": []}));
    let args: Vec<&str> = [
        "call",
        "--language",
        "rules/v2",
        "--stage",
        "validate",
        "--program",
        &ruleset,
    ]
    .into_iter()
    .chain(["--format", "json", "--timeout", "120"])
    .chain(extra.iter().copied())
    .chain(target.iter().copied())
    .collect();
    pilotage(&args)
}

/// A large answer is read, and one over `--max-result-bytes` is refused at once with the limit
/// named, never waited for until the timeout: over stdio (where rmcp alone drops a line over
/// 16 MiB and keeps waiting), HTTP with sessions (SSE) and stateless HTTP (a JSON body).
#[test]
fn large_answers_are_read_or_refused_with_the_limit_named() {
    if !common::node_available() {
        return;
    }
    let script = common::e2e_dir().join("engine.mjs").display().to_string();
    for (count, label) in [("20000", "20 MB"), ("100000", "100 MB")] {
        let stdio = ["--", "node", &script, "--diagnostics", count];
        let sessions = common::serve("node", &[&script, "--http", "0", "--diagnostics", count]);
        let stateless = common::serve("node", &[&script, "--http", "0", "--stateless", "--diagnostics", count]);
        let targets: [(&str, Vec<&str>); 3] = [
            ("stdio", stdio.to_vec()),
            ("http", vec!["--url", &sessions.url]),
            ("stateless http", vec!["--url", &stateless.url]),
        ];
        for (transport, target) in &targets {
            let started = std::time::Instant::now();
            // The default limit (128 MiB) reads the 20 MB answer; 32 MiB refuses the 100 MB one.
            let limit: &[&str] = if count == "20000" {
                &[]
            } else {
                &["--max-result-bytes", "32M"]
            };
            let (status, out, err) = validate_with_diagnostics(target, limit);
            if count == "20000" {
                assert_eq!(status, 0, "{label} over {transport}: {err}");
                let answer: Value = serde_json::from_str(&out).expect("a JSON report");
                assert_eq!(
                    answer["structured_content"]["diagnostics"].as_array().map(Vec::len),
                    Some(20000),
                    "{label} over {transport}"
                );
            } else {
                assert_eq!(status, 2, "{label} over {transport}: {out}{err}");
                assert!(
                    err.contains("33554432 bytes") && err.contains("--max-result-bytes"),
                    "{label} over {transport}: the limit is named: {err}"
                );
                assert!(!err.contains("no answer within"), "never taken for silence: {err}");
            }
            assert!(
                started.elapsed() < std::time::Duration::from_secs(100),
                "{label} over {transport} took {:?}",
                started.elapsed()
            );
        }
    }
}
