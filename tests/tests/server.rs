//! The server framework (`pilotage_server`), rule by rule: an engine of a probe Language
//! driven in-process through `Engine::call` (runs, `store`, trace levels, identities, bounds,
//! idempotency, the execute deadline, a panicking Language, guides, catalog, program faults,
//! what cannot be built) and over HTTP with the official Rust SDK's client and raw requests
//! (sessions that cannot see each other's runs, the session cap, idle expiry, Host and Origin
//! answered with a JSON-RPC body).

use std::sync::Arc;
use std::time::Duration;

use pilotage_server::prelude::*;
use pilotage_server::{BuildError, Engine as _Engine};
use pilotage_types::{CatalogChangeKind, ExecuteResponse, SchemaDef, TraceFetchResponse, ValidateResponse};
use serde_json::{json, Value};

/// The probe Language: `{"mode": "ok" | "fail" | "panic" | "hang" | "bad", "value": ...}`.
struct Probe {
    declaration: Declaration,
    catalog: Option<Catalog>,
}

#[derive(serde::Deserialize)]
struct ProbeProgram {
    mode: String,
    #[serde(default)]
    value: Value,
}

impl Language for Probe {
    type Program = ProbeProgram;

    fn declaration(&self) -> Declaration {
        self.declaration.clone()
    }

    fn guides(&self) -> std::sync::Arc<[GuideText]> {
        let guide = Guide::new(
            "intro",
            "Probing",
            GuideLevel::Core,
            ["modes".to_owned(), "values".to_owned()],
            // Empty: the serving Language's identifier is filled in (the probe serves several).
            LanguageIdentifier(String::new()),
            "1",
            0u64,
        );
        vec![GuideText::new(
            guide,
            "# Probe\n\n## modes\nok, fail, panic, hang, bad.\n\n## values\nAny JSON.\n",
        )]
        .into()
    }

    fn catalog(&self) -> Option<std::sync::Arc<Catalog>> {
        self.catalog.clone().map(std::sync::Arc::new)
    }

    async fn validate(&self, program: &ProbeProgram, _context: Option<&Value>, _cx: &StageContext) -> Validated {
        if program.mode == "bad" {
            return Validated::with_diagnostics([Diagnostic::error("bad_mode", "/mode", "mode bad never validates")]);
        }
        Validated::valid()
    }

    async fn execute(&self, run: ExecuteInput<ProbeProgram>, _cx: &StageContext) -> Result<Ran, RequestError> {
        let step = |outcome| {
            TraceStep::new("only", outcome)
                .with_input(json!({"in": 1}))
                .with_output(json!({"out": 2}))
        };
        match run.program.mode.as_str() {
            "fail" => Ok(Ran::failure(
                "failed",
                "as asked",
                [step(Outcome::failure("failed", "as asked"))],
            )),
            "panic" => panic!("the probe Language panics as asked"),
            "hang" => {
                tokio::time::sleep(Duration::from_secs(3600)).await;
                unreachable!("the deadline ends the run first")
            }
            _ => Ok(Ran::success(run.program.value, [step(Outcome::success("success"))])),
        }
    }
}

fn declaration() -> Declaration {
    Declaration::new("probe/v1", "Probe programs")
}

fn build(declaration: Declaration, tweak: impl FnOnce(EngineBuilder) -> EngineBuilder) -> Engine {
    let probe = Probe {
        declaration,
        catalog: None,
    };
    tweak(_Engine::builder("probe-engine", "1").language(probe))
        .build()
        .expect("the probe engine builds")
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
}

/// `tool(arguments)` as `identity`: (isError, structuredContent); a carrier error panics.
fn call(engine: &Engine, tool: &str, arguments: Value, identity: &str) -> (bool, Value) {
    let result = runtime()
        .block_on(engine.call(tool, &arguments, identity))
        .unwrap_or_else(|| panic!("{tool} is a Pilotage tool"))
        .unwrap_or_else(|e| panic!("{tool}: a carrier error: {e:?}"));
    (
        result.is_error.unwrap_or(false),
        result.structured_content.unwrap_or(Value::Null),
    )
}

fn run(engine: &Engine, arguments: Value, identity: &str) -> (bool, Value) {
    call(engine, "probe_v1_execute", arguments, identity)
}

fn fetch(engine: &Engine, run_id: &str, identity: &str, level: Option<&str>) -> (bool, Value) {
    let mut arguments = json!({"run_id": run_id});
    if let Some(level) = level {
        arguments["trace_level"] = level.into();
    }
    call(engine, "probe_v1_trace", arguments, identity)
}

fn ok_program() -> Value {
    json!({"mode": "ok", "value": {"answer": 42}})
}

fn kind(content: &Value) -> &str {
    content["error"]["kind"].as_str().unwrap_or_default()
}

#[test]
fn a_run_is_visible_only_to_its_identity_and_a_guess_is_not_found_alike() {
    let engine = build(declaration(), |b| b);
    let (is_error, done) = run(&engine, json!({"program": ok_program()}), "alice");
    assert!(!is_error, "{done}");
    ExecuteResponse::validate(&done).unwrap();
    let run_id = done["run_id"].as_str().unwrap().to_owned();
    assert_eq!(run_id.len(), 36, "run_ + 128 bits in hex: {run_id}");
    let (is_error, fetched) = fetch(&engine, &run_id, "alice", None);
    assert!(!is_error, "{fetched}");
    TraceFetchResponse::validate(&fetched).unwrap();
    let other = fetch(&engine, &run_id, "bob", None);
    let guessed = fetch(&engine, "run_00000000000000000000000000000001", "alice", None);
    assert!(other.0 && kind(&other.1) == "not_found", "{other:?}");
    assert_eq!(
        other, guessed,
        "another identity's run answers exactly as an unknown one"
    );
}

#[test]
fn store_follows_execute_request_store() {
    let engine = build(declaration(), |b| b);
    let (_, kept) = run(&engine, json!({"program": ok_program()}), "a");
    assert!(
        !fetch(&engine, kept["run_id"].as_str().unwrap(), "a", None).0,
        "retained by default"
    );
    let (_, dropped) = run(&engine, json!({"program": ok_program(), "store": false}), "a");
    assert!(dropped["run_id"].is_string(), "run_id in every case");
    let (is_error, gone) = fetch(&engine, dropped["run_id"].as_str().unwrap(), "a", None);
    assert!(
        is_error && kind(&gone) == "not_found",
        "store false keeps nothing: {gone}"
    );
    let (_, refused) = run(&engine, json!({"program": {"mode": "bad"}}), "a");
    assert_eq!(refused["outcome"]["status"], "validation_error", "{refused}");
    let (is_error, _) = fetch(&engine, refused["run_id"].as_str().unwrap(), "a", None);
    assert!(is_error, "a refused Run is never retained");

    let none = build(declaration().with_retention(Retention::None), |b| b);
    let (is_error, error) = run(&none, json!({"program": ok_program(), "store": true}), "a");
    assert!(
        is_error && kind(&error) == "unsupported",
        "store true under none: {error}"
    );
    assert!(
        none.tools().iter().all(|t| t.name != "probe_v1_trace"),
        "no trace tool without retention"
    );
    assert_eq!(
        none.manifest().languages[0].retention.as_ref().map(|r| r.0.as_str()),
        Some("none")
    );
}

#[test]
fn trace_levels_inline_and_at_fetch() {
    let engine = build(declaration(), |b| b);
    let (_, summary) = run(&engine, json!({"program": ok_program()}), "a");
    assert_eq!(summary["trace"]["level"], "summary", "the inline default");
    assert!(summary["trace"]["steps"][0].get("input").is_none());
    let (_, full) = run(&engine, json!({"program": ok_program(), "trace_level": "full"}), "a");
    assert_eq!(full["trace"]["steps"][0]["input"], json!({"in": 1}));
    let (_, none) = run(&engine, json!({"program": ok_program(), "trace_level": "none"}), "a");
    assert!(none.get("trace").is_none(), "{none}");
    let id = none["run_id"].as_str().unwrap();
    let (_, fetched) = fetch(&engine, id, "a", Some("summary"));
    assert_eq!(fetched["trace"]["level"], "summary");
    assert!(fetched["trace"]["steps"][0].get("output").is_none());
    let (_, fetched) = fetch(&engine, id, "a", None);
    assert_eq!(fetched["trace"]["level"], "full", "recorded full, asked nothing: full");

    let recorded_summary = build(declaration().with_trace(TraceLevel::Summary), |b| b);
    let (_, done) = run(
        &recorded_summary,
        json!({"program": ok_program(), "trace_level": "full"}),
        "a",
    );
    assert_eq!(done["trace"]["level"], "summary", "inline at most what is recorded");
    let (_, fetched) = fetch(&recorded_summary, done["run_id"].as_str().unwrap(), "a", Some("full"));
    assert_eq!(fetched["trace"]["level"], "summary", "min(requested, recorded)");
    let (is_error, error) = fetch(&engine, id, "a", Some("verbose"));
    assert!(is_error && kind(&error) == "invalid_request", "{error}");
}

#[test]
fn the_store_stays_within_its_bounds() {
    let engine = build(declaration(), |b| b.store_limits(StoreLimits::new(3, 1 << 20)));
    let ids: Vec<String> = (0..6)
        .map(|_| {
            run(&engine, json!({"program": ok_program()}), "a").1["run_id"]
                .as_str()
                .unwrap()
                .to_owned()
        })
        .collect();
    assert_eq!(runtime().block_on(engine.runs().sizes()).unwrap().runs, 3);
    assert!(fetch(&engine, &ids[0], "a", None).0, "the oldest was evicted");
    assert!(!fetch(&engine, &ids[5], "a", None).0);
}

#[test]
fn idempotency_keys_replay_and_conflict() {
    let engine = build(declaration().with_idempotency(), |b| b);
    let first = run(&engine, json!({"program": ok_program(), "idempotency_key": "k1"}), "a");
    let again = run(&engine, json!({"idempotency_key": "k1", "program": ok_program()}), "a");
    assert_eq!(first, again, "the same key and request: the same response");
    let (is_error, conflict) = run(
        &engine,
        json!({"program": {"mode": "ok", "value": 1}, "idempotency_key": "k1"}),
        "a",
    );
    assert!(is_error && kind(&conflict) == "idempotency_conflict", "{conflict}");
    let other = run(&engine, json!({"program": ok_program(), "idempotency_key": "k1"}), "b");
    assert_ne!(other.1["run_id"], first.1["run_id"], "keys are per identity");

    let without = build(declaration(), |b| b);
    let (is_error, error) = run(&without, json!({"program": ok_program(), "idempotency_key": "k"}), "a");
    assert!(is_error && kind(&error) == "unsupported", "undeclared: {error}");
}

#[test]
fn a_hanging_run_meets_the_deadline_and_a_panic_is_internal_and_the_engine_goes_on() {
    let engine = build(declaration(), |b| b.execute_deadline(Duration::from_millis(200)));
    let (is_error, error) = run(&engine, json!({"program": {"mode": "hang"}}), "a");
    assert!(is_error && kind(&error) == "bounds_exceeded", "{error}");
    let (is_error, error) = run(&engine, json!({"program": {"mode": "panic"}}), "a");
    assert!(is_error && kind(&error) == "internal", "{error}");
    let (is_error, done) = run(&engine, json!({"program": ok_program()}), "a");
    assert!(!is_error && done["outcome"]["ok"] == true, "{done}");
    let (is_error, failed) = run(&engine, json!({"program": {"mode": "fail"}}), "a");
    assert!(!is_error, "a failed Run is not an error (7.1): {failed}");
    assert!(failed.get("output").is_none() && failed["outcome"]["error"] == "as asked");
}

#[test]
fn program_faults_are_diagnostics_and_arguments_go_to_their_channels() {
    let engine = build(declaration(), |b| b);
    let (is_error, checked) = call(&engine, "probe_v1_validate", json!({"program": {"mode": 7}}), "a");
    assert!(!is_error, "{checked}");
    ValidateResponse::validate(&checked).unwrap();
    assert_eq!(checked["valid"], false);
    assert_eq!(checked["diagnostics"][0]["code"], "invalid_program");
    assert_eq!(checked["diagnostics"][0]["path"], "/mode");
    let (_, executed) = run(&engine, json!({"program": {"mode": 7}}), "a");
    assert_eq!(executed["outcome"]["status"], "validation_error", "{executed}");
    let (is_error, neither) = run(&engine, json!({}), "a");
    assert!(is_error && kind(&neither) == "invalid_request", "{neither}");
    let carrier = runtime()
        .block_on(engine.call("probe_v1_validate", &json!({"program": "a string"}), "a"))
        .unwrap();
    assert_eq!(
        carrier.unwrap_err().code.0,
        -32602,
        "a wrong JSON type is a carrier error"
    );
    let (is_error, test_run) = run(&engine, json!({"program": ok_program(), "test_run": true}), "a");
    assert!(is_error && kind(&test_run) == "unsupported", "{test_run}");
}

#[test]
fn guides_answer_every_form_and_unknowns_are_not_found() {
    let engine = build(declaration().with_topic_fetch(), |b| b);
    let guide = |arguments: Value| call(&engine, "pilotage_get_guide", arguments, "a");
    let (_, index) = guide(json!({"language": "probe/v1"}));
    assert_eq!(index["guides"][0]["id"], "intro");
    assert!(index["guides"][0].get("body").is_none());
    let (_, fetched) = guide(json!({"language": "probe/v1", "id": "intro"}));
    assert!(fetched["guide"]["body"].as_str().unwrap().contains("## values"));
    let (_, topic) = guide(json!({"language": "probe/v1", "id": "intro", "topic": "modes"}));
    assert_eq!(topic["guide"]["body"], "## modes\nok, fail, panic, hang, bad.");
    for arguments in [
        json!({"language": "nope/v1"}),
        json!({"language": "probe/v1", "id": "nope"}),
        json!({"language": "probe/v1", "id": "intro", "topic": "nope"}),
    ] {
        let (is_error, error) = guide(arguments.clone());
        assert!(is_error && kind(&error) == "not_found", "{arguments}: {error}");
    }
}

#[test]
fn the_catalog_pages_searches_and_tells_its_version_on_every_answer() {
    let entries: Vec<CatalogEntry> = (0..230)
        .map(|i| {
            CatalogEntry::new(
                format!("e{i}"),
                if i % 2 == 0 { "fn" } else { "data" },
                format!("Entry {i}"),
                "safe",
                RiskHints::new().with_read_only(true),
            )
            .with_tags([format!("t{}", i % 3)])
        })
        .collect();
    let catalog = Catalog::new("v3", entries)
        .with_previous("v1", [CatalogChange::new("e1", CatalogChangeKind::Added)])
        .with_previous("v2", [CatalogChange::new("e2", CatalogChangeKind::Modified)]);
    let probe = Probe {
        declaration: declaration().with_search().with_changed_since(),
        catalog: Some(catalog),
    };
    let engine = _Engine::builder("probe-engine", "1").language(probe).build().unwrap();
    let catalog = |arguments: Value| call(&engine, "pilotage_catalog", arguments, "a");
    let mut seen = 0;
    let mut cursor: Option<String> = None;
    loop {
        let mut arguments = json!({"language": "probe/v1", "verb": "list", "kind": "fn", "limit": 40});
        if let Some(cursor) = &cursor {
            arguments["cursor"] = cursor.clone().into();
        }
        let (_, page) = catalog(arguments);
        assert_eq!(page["catalog_version"], "v3");
        seen += page["items"].as_array().unwrap().len();
        match page["next_cursor"].as_str() {
            Some(next) => cursor = Some(next.to_owned()),
            None => break,
        }
    }
    assert_eq!(seen, 115, "every entry of the kind, once, over the pages");
    let (_, found) = catalog(json!({"language": "probe/v1", "verb": "list", "q": "entry 22", "tag": "t1"}));
    assert_eq!(
        found["items"].as_array().unwrap().len(),
        5,
        "Entry 22, 220, 223, 226, 229 (tag t1: i % 3 == 1): {found}"
    );
    let (_, got) = catalog(json!({"language": "probe/v1", "verb": "get", "id": "e7"}));
    assert_eq!(
        (got["entry"]["id"].as_str(), got["catalog_version"].as_str()),
        (Some("e7"), Some("v3"))
    );
    let (_, changes) = catalog(json!({"language": "probe/v1", "verb": "changed_since", "catalog_version": "v1"}));
    assert_eq!(changes["changes"].as_array().unwrap().len(), 2, "{changes}");
    for arguments in [
        json!({"language": "probe/v1", "verb": "get", "id": "nope"}),
        json!({"language": "probe/v1", "verb": "changed_since", "catalog_version": "v0"}),
        json!({"language": "probe/v1", "verb": "get", "id": "e1", "limit": 3}),
        json!({"language": "probe/v1", "verb": "list", "cursor": "forged"}),
    ] {
        let (is_error, error) = catalog(arguments.clone());
        assert!(is_error, "{arguments}: {error}");
        assert_eq!(
            error["catalog_version"], "v3",
            "errors carry the version too: {arguments}: {error}"
        );
    }
    let (_, baseline) = catalog(json!({"language": "probe/v1", "verb": "changed_since", "catalog_version": "v0"}));
    assert_eq!(kind(&baseline), "unknown_baseline");
    let (_, stale) = run(
        &engine,
        json!({"program": ok_program(), "expected_catalog_version": "v2"}),
        "a",
    );
    assert_eq!(stale["outcome"]["status"], "catalog_drift", "{stale}");
}

#[test]
fn what_cannot_be_served_is_a_build_error() {
    let error = |result: Result<Engine, BuildError>| result.unwrap_err().to_string();
    assert!(error(_Engine::builder("e", "1").build()).contains("at least one Language"));
    let bad_name = Probe {
        declaration: Declaration::new("no version", "x"),
        catalog: None,
    };
    assert!(error(_Engine::builder("e", "1").language(bad_name).build()).contains("not a Language identifier"));
    let twice = |name: &str| Probe {
        declaration: Declaration::new(name, "x").with_tool_names("check", "run", "trace"),
        catalog: None,
    };
    let duplicate = _Engine::builder("e", "1")
        .language(twice("a/v1"))
        .language(twice("b/v1"))
        .build();
    assert!(error(duplicate).contains("two tools are named `check`"));
    let silent = _Engine::builder("e", "1")
        .language(twice("a/v1"))
        .instructions("Hello.")
        .build();
    assert!(error(silent).contains("pilotage_manifest"));
    let session = build(declaration().with_retention(Retention::Session), |b| b);
    let refused = runtime().block_on(async { session.http_router("/mcp", HttpOptions::stateless()).map(|_| ()) });
    assert!(refused.unwrap_err().to_string().contains("session retention"));
}

#[test]
fn the_surface_is_what_the_declaration_says_and_lints_clean() {
    let engine = build(declaration().with_plan().with_test_run().with_narrate(), |b| {
        b.resources()
    });
    let tools = json!({"tools": engine.tools().iter().map(|t| t.to_value()).collect::<Vec<_>>()});
    let initialize = serde_json::to_value(engine.initialize_result()).unwrap();
    let manifest = initialize["_meta"]["io.github.jafarsa0/pilotage"]["manifest"].clone();
    pilotage_types::Manifest::validate(&manifest).unwrap();
    assert_eq!(
        manifest["languages"][0]["capabilities"]["execute"],
        json!({"test_run": true})
    );
    assert_eq!(
        manifest["languages"][0]["guides_resource"],
        "pilotage://guides/probe%2Fv1"
    );
    let instructions = initialize["instructions"].as_str().unwrap();
    assert!(instructions.contains("Pilotage") && instructions.contains("call pilotage_manifest first"));
    for stateless in [false, true] {
        let findings = pilotage_cli::lint::lint(pilotage_cli::lint::Surface {
            tools: &tools,
            manifest: &manifest,
            initialize: Some(&initialize),
            stateless,
        });
        assert!(findings.is_empty(), "{}", pilotage_cli::lint::render_text(&findings));
    }
}

/// A raw HTTP/1.1 request to `addr`: (status, headers and body as text).
fn raw(addr: &str, method: &str, headers: &[(&str, &str)], body: &str) -> (u16, String) {
    use std::io::{Read, Write};
    let mut stream = std::net::TcpStream::connect(addr).unwrap();
    stream.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    let mut request = format!(
        "{method} /mcp HTTP/1.1\r\nContent-Length: {}\r\nConnection: close\r\n",
        body.len()
    );
    for (name, value) in headers {
        request.push_str(&format!("{name}: {value}\r\n"));
    }
    request.push_str("\r\n");
    request.push_str(body);
    stream.write_all(request.as_bytes()).unwrap();
    let mut response = String::new();
    let _ = stream.read_to_string(&mut response);
    let status = response
        .split_whitespace()
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or(0);
    (status, response)
}

const INITIALIZE: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#;

/// Serves `engine` on a free loopback port with `options`: (address, shutdown).
fn serve(engine: &Engine, options: HttpOptions, runtime: &tokio::runtime::Runtime) -> String {
    let router = runtime.block_on(async { engine.http_router("/mcp", options) }).unwrap();
    let listener = runtime.block_on(tokio::net::TcpListener::bind("127.0.0.1:0")).unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    runtime.spawn(async move {
        axum::serve(
            listener,
            router.into_make_service_with_connect_info::<std::net::SocketAddr>(),
        )
        .await
    });
    addr
}

fn session_of(response: &str) -> Option<String> {
    response
        .lines()
        .find_map(|l| {
            l.strip_prefix("mcp-session-id: ")
                .or_else(|| l.strip_prefix("Mcp-Session-Id: "))
        })
        .map(|s| s.trim().to_owned())
}

#[test]
fn http_refuses_foreign_hosts_and_origins_with_a_json_rpc_body() {
    let runtime = runtime();
    let engine = build(declaration(), |b| b);
    let addr = serve(&engine, HttpOptions::stateless(), &runtime);
    let port = addr.rsplit(':').next().unwrap().to_owned();
    let json = [
        ("Content-Type", "application/json"),
        ("Accept", "application/json, text/event-stream"),
    ];
    let with = |extra: &[(&'static str, String)]| -> Vec<(&'static str, String)> {
        json.iter()
            .map(|(k, v)| (*k, (*v).to_owned()))
            .chain(extra.iter().cloned())
            .collect()
    };
    let send = |headers: Vec<(&'static str, String)>| {
        let borrowed: Vec<(&str, &str)> = headers.iter().map(|(k, v)| (*k, v.as_str())).collect();
        raw(&addr, "POST", &borrowed, INITIALIZE)
    };
    let (status, _) = send(with(&[
        ("Host", format!("localhost:{port}")),
        ("Origin", "http://127.0.0.1:5173".into()),
    ]));
    assert_eq!(status, 200, "loopback Host and Origin, any port");
    for extra in [
        vec![("Host", "evil.example".to_owned())],
        vec![
            ("Host", format!("127.0.0.1:{port}")),
            ("Origin", "https://evil.example".to_owned()),
        ],
    ] {
        let (status, response) = send(with(&extra));
        assert_eq!(status, 403, "{extra:?}");
        let body = response.split("\r\n\r\n").nth(1).unwrap_or_default();
        let error: Value = serde_json::from_str(body).unwrap_or_else(|e| panic!("a JSON body ({e}): {response}"));
        assert_eq!(
            (error["jsonrpc"].as_str(), error["error"]["code"].as_i64()),
            (Some("2.0"), Some(-32000))
        );
        assert_eq!(error["id"], Value::Null);
    }
}

#[test]
fn sessions_are_capped_and_expire_when_idle() {
    let runtime = runtime();
    let engine = build(declaration(), |b| b);
    let mut options = HttpOptions::default();
    options.max_sessions = 2;
    options.idle_timeout = Duration::from_millis(400);
    let addr = serve(&engine, options, &runtime);
    let headers = [
        ("Host", "127.0.0.1"),
        ("Content-Type", "application/json"),
        ("Accept", "application/json, text/event-stream"),
    ];
    let ping = r#"{"jsonrpc":"2.0","id":2,"method":"ping"}"#;
    let with = |session: &str| {
        let mut with_session: Vec<(String, String)> =
            headers.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
        with_session.push(("Mcp-Session-Id".into(), session.to_owned()));
        with_session.push(("Mcp-Protocol-Version".into(), "2025-11-25".into()));
        with_session
    };
    let ping_in = |session: &str| {
        let with_session = with(session);
        let borrowed: Vec<(&str, &str)> = with_session.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
        raw(&addr, "POST", &borrowed, ping).0
    };
    let first = raw(&addr, "POST", &headers, INITIALIZE);
    std::thread::sleep(Duration::from_millis(20));
    let second = raw(&addr, "POST", &headers, INITIALIZE);
    assert_eq!((first.0, second.0), (200, 200));
    let (first, second) = (session_of(&first.1).unwrap(), session_of(&second.1).unwrap());
    // The first is used again: the second is now the one idle longest.
    assert_eq!(ping_in(&first), 200);
    let (status, third) = raw(&addr, "POST", &headers, INITIALIZE);
    assert_eq!(status, 200, "at the cap the newcomer is served: {third}");
    assert_eq!(ping_in(&second), 404, "the session idle longest gave way");
    assert_eq!(ping_in(&first), 200, "the session in use stays");
    std::thread::sleep(Duration::from_millis(1200));
    assert_eq!(ping_in(&first), 404, "an expired session is gone");
}

#[test]
fn one_peer_cannot_hoard_the_sessions() {
    let runtime = runtime();
    let engine = build(declaration(), |b| b);
    let mut options = HttpOptions::default();
    options.max_sessions = 4;
    options.max_sessions_per_peer = 2;
    options.trusted_proxies = vec!["127.0.0.1".parse().unwrap()];
    let addr = serve(&engine, options, &runtime);
    let from = |client: &'static str| {
        [
            ("Host", "127.0.0.1"),
            ("Content-Type", "application/json"),
            ("Accept", "application/json, text/event-stream"),
            ("X-Forwarded-For", client),
        ]
    };
    let ping = r#"{"jsonrpc":"2.0","id":2,"method":"ping"}"#;
    let alive = |client: &'static str, session: &str| {
        let mut headers = from(client).to_vec();
        headers.push(("Mcp-Session-Id", session));
        headers.push(("Mcp-Protocol-Version", "2025-11-25"));
        raw(&addr, "POST", &headers, ping).0 == 200
    };
    let (status, body) = raw(&addr, "POST", &from("192.0.2.1"), INITIALIZE);
    assert_eq!(status, 200);
    let quiet = session_of(&body).unwrap();
    // Another peer opens three times its bound; the quiet peer's session stays.
    let mut flood = Vec::new();
    for _ in 0..6 {
        let (status, body) = raw(&addr, "POST", &from("198.51.100.7"), INITIALIZE);
        assert_eq!(status, 200, "the flooding peer's newcomer is served too");
        flood.push(session_of(&body).unwrap());
    }
    assert!(
        alive("192.0.2.1", &quiet),
        "one peer's flood never pushes out another peer's session"
    );
    let kept = flood.iter().filter(|s| alive("198.51.100.7", s)).count();
    assert_eq!(kept, 2, "the flooding peer holds at most its bound");
    // From a connection that is no trusted proxy, the header is not read: every client
    // below is the one peer 127.0.0.1, whatever it claims.
    let mut options = HttpOptions::default();
    options.max_sessions_per_peer = 2;
    let addr = serve(&engine, options, &runtime);
    let opened: Vec<String> = ["192.0.2.1", "192.0.2.2", "192.0.2.3"]
        .into_iter()
        .map(|client| session_of(&raw(&addr, "POST", &from(client), INITIALIZE).1).unwrap())
        .collect();
    let alive_at = |session: &str| {
        let mut headers = from("192.0.2.9").to_vec();
        headers.push(("Mcp-Session-Id", session));
        headers.push(("Mcp-Protocol-Version", "2025-11-25"));
        raw(&addr, "POST", &headers, ping).0 == 200
    };
    assert!(!alive_at(&opened[0]), "a forged X-Forwarded-For buys no second peer");
    assert!(alive_at(&opened[1]) && alive_at(&opened[2]));
}

#[test]
fn two_http_sessions_cannot_see_each_other_s_runs() {
    use rmcp::ServiceExt;
    let runtime = runtime();
    let engine = build(declaration(), |b| b);
    let addr = serve(&engine, HttpOptions::default(), &runtime);
    runtime.block_on(async {
        let url = format!("http://{addr}/mcp");
        let connect = || async {
            ().serve(rmcp::transport::StreamableHttpClientTransport::from_uri(url.clone()))
                .await
                .expect("a session")
        };
        let (one, two) = (connect().await, connect().await);
        let call = |client: &rmcp::service::RunningService<rmcp::RoleClient, ()>, tool: &str, arguments: Value| {
            let params = rmcp::model::CallToolRequestParams::new(tool.to_owned())
                .with_arguments(arguments.as_object().cloned().unwrap_or_default());
            let peer = client.peer().clone();
            async move { peer.call_tool(params).await.expect("an answer") }
        };
        let done = call(&one, "probe_v1_execute", json!({"program": ok_program()})).await;
        let run_id = done.structured_content.unwrap()["run_id"].as_str().unwrap().to_owned();
        let own = call(&one, "probe_v1_trace", json!({"run_id": run_id})).await;
        assert_eq!(own.is_error, Some(false), "the session that ran it sees it");
        let other = call(&two, "probe_v1_trace", json!({"run_id": run_id})).await;
        assert_eq!(other.is_error, Some(true));
        assert_eq!(other.structured_content.unwrap()["error"]["kind"], "not_found");
        one.cancel().await.unwrap();
        two.cancel().await.unwrap();
    });
}

/// A second Language for the shared loop tools: its program argument is `source`.
struct Other;

impl Language for Other {
    type Program = ProbeProgram;

    fn declaration(&self) -> Declaration {
        Declaration::new("other/v1", "Other programs")
            .with_program("source", ProgramType::Object)
            .with_test_run()
    }

    async fn validate(&self, _program: &ProbeProgram, _context: Option<&Value>, _cx: &StageContext) -> Validated {
        Validated::valid()
    }

    async fn execute(&self, run: ExecuteInput<ProbeProgram>, _cx: &StageContext) -> Result<Ran, RequestError> {
        Ok(Ran::success(
            json!({"other": run.program.value, "test_run": run.test_run}),
            [],
        ))
    }
}

fn shared_engine() -> Engine {
    let probe = Probe {
        declaration: declaration(),
        catalog: None,
    };
    _Engine::builder("shared", "1")
        .language(probe)
        .language(Other)
        .share_loop_tools("check", "run", "trace")
        .build()
        .expect("two Languages share the loop tools")
}

#[test]
fn shared_loop_tools_serve_several_languages() {
    let engine = shared_engine();
    let names: Vec<&str> = engine.tools().iter().map(|t| t.name.as_str()).collect();
    assert_eq!(
        names,
        ["pilotage_manifest", "pilotage_get_guide", "check", "run", "trace"]
    );
    let check = engine.tools().iter().find(|t| t.name == "check").unwrap().to_value();
    assert_eq!(
        check["_meta"]["io.github.jafarsa0/pilotage"],
        json!({"languages": [{"argument": "program", "language": "probe/v1"}, {"argument": "source", "language": "other/v1"}]})
    );
    assert!(
        check["inputSchema"].get("required").is_none(),
        "a shared validate tool requires no program (4.4 rule 9)"
    );
    for language in &engine.manifest().languages {
        assert_eq!(language.loop_.validate, "check");
        assert_eq!(language.loop_.execute.as_deref(), Some("run"));
    }
    let tools = json!({"tools": engine.tools().iter().map(|t| t.to_value()).collect::<Vec<_>>()});
    let initialize = serde_json::to_value(engine.initialize_result()).unwrap();
    let manifest = initialize["_meta"]["io.github.jafarsa0/pilotage"]["manifest"].clone();
    let findings = pilotage_cli::lint::lint(pilotage_cli::lint::Surface {
        tools: &tools,
        manifest: &manifest,
        initialize: Some(&initialize),
        stateless: false,
    });
    assert!(findings.is_empty(), "{}", pilotage_cli::lint::render_text(&findings));

    let (_, checked) = call(&engine, "check", json!({"source": {"mode": "ok"}}), "a");
    assert_eq!(checked["valid"], true, "{checked}");
    let (_, refused) = call(&engine, "check", json!({"program": {"mode": "bad"}}), "a");
    assert_eq!(refused["valid"], false, "probe/v1's own validate ran: {refused}");
    for arguments in [json!({}), json!({"program": {"mode": "ok"}, "source": {"mode": "ok"}})] {
        let (is_error, error) = call(&engine, "check", arguments.clone(), "a");
        assert!(is_error && kind(&error) == "invalid_request", "{arguments}: {error}");
    }
    let (_, ran) = call(
        &engine,
        "run",
        json!({"source": {"mode": "ok", "value": 7}, "test_run": true}),
        "a",
    );
    assert_eq!(ran["output"], json!({"other": 7, "test_run": true}), "{ran}");
    let (is_error, fetched) = call(&engine, "trace", json!({"run_id": ran["run_id"]}), "a");
    assert!(!is_error, "the shared trace tool finds the run's Language: {fetched}");
    let (is_error, error) = call(
        &engine,
        "run",
        json!({"program": {"mode": "ok"}, "test_run": true}),
        "a",
    );
    assert!(
        is_error && kind(&error) == "unsupported",
        "probe/v1 declares no test_run: {error}"
    );
    let (is_error, error) = call(&engine, "trace", json!({"run_id": "run_unknown"}), "a");
    assert!(is_error && kind(&error) == "not_found", "{error}");

    let twice = _Engine::builder("e", "1")
        .language(Probe {
            declaration: declaration(),
            catalog: None,
        })
        .language(Probe {
            declaration: Declaration::new("again/v1", "x"),
            catalog: None,
        })
        .share_loop_tools("check", "run", "trace")
        .build();
    assert!(twice.unwrap_err().to_string().contains("`program` is used twice"));
}

#[test]
fn pilotage_check_finds_shared_loop_tools_clean_when_served() {
    let runtime = runtime();
    let engine = shared_engine();
    let addr = serve(&engine, HttpOptions::default(), &runtime);
    let url = format!("http://{addr}/mcp");
    let write = |name: &str, value: Value| {
        let path = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
            .join(format!("pilotage-shared-{}-{name}", std::process::id()));
        std::fs::write(&path, value.to_string()).unwrap();
        path.display().to_string()
    };
    let probe = format!("probe/v1={}", write("probe.json", json!({"mode": "ok", "value": 1})));
    let other = format!("other/v1={}", write("other.json", json!({"mode": "ok"})));
    let failing = format!("probe/v1={}", write("failing.json", json!({"mode": "fail"})));
    let args = [
        "pilotage",
        "check",
        "--format",
        "json",
        "--allow-execute",
        "--program",
        &probe,
        "--program",
        &other,
        "--failing-program",
        &failing,
        "--url",
        &url,
    ];
    let (mut out, mut err) = (Vec::new(), Vec::new());
    let status = pilotage_cli::cli::run(args, &mut out, &mut err);
    let report: Value =
        serde_json::from_slice(&out).unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&err)));
    assert_eq!(status, 0, "{report:#}");
    assert!(report["findings"].as_array().unwrap().is_empty(), "{report:#}");
}

/// Part III 8.4: with an identity function, a run is visible to the authorization identity
/// that started it (across its sessions) and to no other; an anonymous request is neither.
#[test]
fn the_authorization_identity_decides_who_sees_a_run() {
    use rmcp::ServiceExt;
    let runtime = runtime();
    let engine = build(declaration(), |b| {
        b.identity(|parts| {
            parts
                .headers
                .get("authorization")
                .and_then(|v| v.to_str().ok())
                .and_then(|v| v.strip_prefix("Bearer user-"))
                .map(str::to_owned)
        })
    });
    let addr = serve(&engine, HttpOptions::default(), &runtime);
    runtime.block_on(async {
        let url = format!("http://{addr}/mcp");
        let connect = |user: Option<&str>| {
            let mut config =
                rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig::with_uri(url.clone());
            if let Some(user) = user {
                config = config.auth_header(format!("user-{user}"));
            }
            async move {
                ().serve(rmcp::transport::StreamableHttpClientTransport::from_config(config))
                    .await
                    .expect("a session")
            }
        };
        let call = |client: &rmcp::service::RunningService<rmcp::RoleClient, ()>, tool: &str, arguments: Value| {
            let params = rmcp::model::CallToolRequestParams::new(tool.to_owned())
                .with_arguments(arguments.as_object().cloned().unwrap_or_default());
            let peer = client.peer().clone();
            async move { peer.call_tool(params).await.expect("an answer") }
        };
        let alice = connect(Some("alice")).await;
        let done = call(&alice, "probe_v1_execute", json!({"program": ok_program()})).await;
        let run_id = done.structured_content.unwrap()["run_id"].as_str().unwrap().to_owned();
        let alice_again = connect(Some("alice")).await;
        let own = call(&alice_again, "probe_v1_trace", json!({"run_id": run_id})).await;
        assert_eq!(
            own.is_error,
            Some(false),
            "the same identity in another session sees its run"
        );
        for other in [connect(Some("bob")).await, connect(None).await] {
            let answer = call(&other, "probe_v1_trace", json!({"run_id": run_id})).await;
            assert_eq!(answer.is_error, Some(true));
            assert_eq!(answer.structured_content.unwrap()["error"]["kind"], "not_found");
            other.cancel().await.unwrap();
        }
        alice.cancel().await.unwrap();
        alice_again.cancel().await.unwrap();
    });
}

/// Part III 1.3 rule 1: an engine's own MCP tools live beside the Pilotage surface, listed and
/// called as rmcp serves them, and their handlers know who asks.
#[test]
fn an_engine_s_own_tools_are_served_beside_the_pilotage_ones() {
    use rmcp::handler::server::router::tool::{ToolRoute, ToolRouter};
    use rmcp::ServiceExt;
    let schema = Arc::new(
        json!({"type": "object", "properties": {}})
            .as_object()
            .cloned()
            .unwrap(),
    );
    let whoami = ToolRoute::new_dyn(
        rmcp::model::Tool::new("whoami", "Who the server thinks you are.", schema),
        |context: rmcp::handler::server::tool::ToolCallContext<'_, pilotage_server::PilotageServer>| {
            let identity = context.service.identity(&context.request_context);
            Box::pin(async move {
                Ok(rmcp::model::CallToolResult::success(vec![rmcp::model::ContentBlock::text(identity)]).into())
            })
        },
    );
    let engine = build(declaration(), |b| b.own_tools(ToolRouter::new().with_route(whoami)));
    let runtime = runtime();
    let addr = serve(&engine, HttpOptions::default(), &runtime);
    runtime.block_on(async {
        let transport = rmcp::transport::StreamableHttpClientTransport::from_uri(format!("http://{addr}/mcp"));
        let client = ().serve(transport).await.expect("a session");
        let tools = client.list_all_tools().await.unwrap();
        let names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
        assert!(
            names.contains(&"whoami") && names.contains(&"pilotage_manifest"),
            "{names:?}"
        );
        let answer = client
            .call_tool(rmcp::model::CallToolRequestParams::new("whoami").with_arguments(serde_json::Map::new()))
            .await
            .unwrap();
        let text = serde_json::to_value(&answer.content[0]).unwrap()["text"]
            .as_str()
            .unwrap()
            .to_owned();
        assert!(text.starts_with("session:"), "{text}");
        let unknown = client
            .call_tool(rmcp::model::CallToolRequestParams::new("nope").with_arguments(serde_json::Map::new()))
            .await;
        assert!(
            matches!(unknown, Err(rmcp::ServiceError::McpError(ref e)) if e.code.0 == -32602),
            "{unknown:?}"
        );
        client.cancel().await.unwrap();
    });
}

/// A run store whose database is gone: every call fails.
struct Down;

impl pilotage_server::RunStore for Down {
    fn limits(&self) -> StoreLimits {
        StoreLimits::default()
    }
    fn put<'a>(
        &'a self,
        _: &'a str,
        _: &'a str,
        _: pilotage_server::RunRecord,
        _: pilotage_server::Expiry,
    ) -> pilotage_server::StoreFuture<'a, bool> {
        Box::pin(async { Err(pilotage_server::StoreError("the database is down".into())) })
    }
    fn get<'a>(
        &'a self,
        _: &'a str,
        _: &'a str,
    ) -> pilotage_server::StoreFuture<'a, Option<pilotage_server::RunRecord>> {
        Box::pin(async { Err(pilotage_server::StoreError("the database is down".into())) })
    }
    fn forget_session<'a>(&'a self, _: &'a str) -> pilotage_server::StoreFuture<'a, ()> {
        Box::pin(async { Err(pilotage_server::StoreError("the database is down".into())) })
    }
    fn sweep(&self) -> pilotage_server::StoreFuture<'_, usize> {
        Box::pin(async { Err(pilotage_server::StoreError("the database is down".into())) })
    }
    fn idempotency<'a>(
        &'a self,
        _: &'a str,
        _: &'a str,
        _: &'a str,
    ) -> pilotage_server::StoreFuture<'a, pilotage_server::IdempotencyHit> {
        Box::pin(async { Err(pilotage_server::StoreError("the database is down".into())) })
    }
    fn remember<'a>(
        &'a self,
        _: &'a str,
        _: &'a str,
        _: &'a str,
        _: &'a ExecuteResponse,
    ) -> pilotage_server::StoreFuture<'a, ()> {
        Box::pin(async { Err(pilotage_server::StoreError("the database is down".into())) })
    }
    fn sizes(&self) -> pilotage_server::StoreFuture<'_, pilotage_server::StoreSizes> {
        Box::pin(async { Err(pilotage_server::StoreError("the database is down".into())) })
    }
}

#[test]
fn health_and_readiness_answer_outside_the_host_rules() {
    let runtime = runtime();
    let up = build(declaration(), |b| b);
    let addr = serve(&up, HttpOptions::default(), &runtime);
    // A load balancer's Host is no allowed name, and it sends no Origin rules to pass.
    let lb = [("Host", "10.0.0.5:8080")];
    let (status, body) = raw(&addr, "GET", &lb, "");
    assert_eq!(status, 403, "the MCP endpoint keeps its Host rule: {body}");
    let get = |addr: &str, path: &str| {
        let mut stream = std::net::TcpStream::connect(addr).unwrap();
        use std::io::{Read, Write};
        write!(
            stream,
            "GET {path} HTTP/1.1\r\nHost: 10.0.0.5:8080\r\nConnection: close\r\n\r\n"
        )
        .unwrap();
        let mut response = String::new();
        stream.read_to_string(&mut response).unwrap();
        response
    };
    let healthz = get(&addr, "/healthz");
    assert!(healthz.starts_with("HTTP/1.1 200"), "{healthz}");
    let readyz = get(&addr, "/readyz");
    assert!(
        readyz.starts_with("HTTP/1.1 200") && readyz.contains(r#""status":"ready""#),
        "{readyz}"
    );
    let down = build(declaration(), |b| b.run_store(Arc::new(Down)));
    let addr = serve(&down, HttpOptions::default(), &runtime);
    assert!(get(&addr, "/healthz").starts_with("HTTP/1.1 200"), "the process is up");
    let readyz = get(&addr, "/readyz");
    assert!(
        readyz.starts_with("HTTP/1.1 503") && readyz.contains("the database is down"),
        "{readyz}"
    );
}
