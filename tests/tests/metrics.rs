//! The `mcp.server.operation.duration` histogram (pilotage-server's feature `metrics`, issue
//! #32): one record per answered request, in seconds, labelled as OpenTelemetry's semantic
//! conventions for MCP say, with bounded labels only (no identity, run id or body).

use std::io::{Read, Write};
use std::sync::{Arc, Mutex};

use metrics::{Counter, Gauge, Histogram, HistogramFn, Key, KeyName, Metadata, Recorder, SharedString, Unit};
use pilotage_server::prelude::*;
use serde_json::{json, Value};

/// One histogram record: its name, labels and value.
type Record = (String, Vec<(String, String)>, f64);

/// Every histogram record, and every description.
#[derive(Default)]
struct Recorded {
    records: Mutex<Vec<Record>>,
    described: Mutex<Vec<(String, Option<Unit>)>>,
}

struct Handle {
    key: Key,
    recorded: Arc<Recorded>,
}

impl HistogramFn for Handle {
    fn record(&self, value: f64) {
        let labels = self
            .key
            .labels()
            .map(|l| (l.key().to_owned(), l.value().to_owned()))
            .collect();
        self.recorded
            .records
            .lock()
            .unwrap()
            .push((self.key.name().to_owned(), labels, value));
    }
}

struct TestRecorder(Arc<Recorded>);

impl Recorder for TestRecorder {
    fn describe_counter(&self, _: KeyName, _: Option<Unit>, _: SharedString) {}
    fn describe_gauge(&self, _: KeyName, _: Option<Unit>, _: SharedString) {}
    fn describe_histogram(&self, key: KeyName, unit: Option<Unit>, _: SharedString) {
        self.0.described.lock().unwrap().push((key.as_str().to_owned(), unit));
    }
    fn register_counter(&self, _: &Key, _: &Metadata<'_>) -> Counter {
        Counter::noop()
    }
    fn register_gauge(&self, _: &Key, _: &Metadata<'_>) -> Gauge {
        Gauge::noop()
    }
    fn register_histogram(&self, key: &Key, _: &Metadata<'_>) -> Histogram {
        Histogram::from_arc(Arc::new(Handle {
            key: key.clone(),
            recorded: self.0.clone(),
        }))
    }
}

struct Echo;

impl Language for Echo {
    type Program = Value;
    fn declaration(&self) -> Declaration {
        Declaration::new("echo/v1", "Echo").with_destructive(false)
    }
    async fn validate(&self, _: &Value, _: Option<&Value>, _: &StageContext) -> Validated {
        Validated::valid()
    }
    async fn execute(&self, run: ExecuteInput<Value>, _: &StageContext) -> Result<Ran, RequestError> {
        Ok(Ran::success(run.program, []))
    }
}

fn post(addr: &str, headers: &[(&str, &str)], body: &str) -> (u16, String) {
    let mut stream = std::net::TcpStream::connect(addr).unwrap();
    let mut request = format!(
        "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: {}\r\nConnection: close\r\n",
        body.len()
    );
    for (name, value) in headers {
        request.push_str(&format!("{name}: {value}\r\n"));
    }
    request.push_str("\r\n");
    request.push_str(body);
    stream.write_all(request.as_bytes()).unwrap();
    let mut response = String::new();
    stream.read_to_string(&mut response).unwrap();
    let status = response
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    (status, response)
}

#[test]
fn every_answered_request_is_one_duration_record_with_bounded_labels() {
    let recorded = Arc::new(Recorded::default());
    metrics::set_global_recorder(TestRecorder(recorded.clone())).expect("the only recorder of this test binary");

    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let engine = Engine::builder("echo-engine", "1").language(Echo).build().unwrap();
    let router = runtime
        .block_on(async { engine.http_router("/mcp", HttpOptions::stateless()) })
        .unwrap();
    let listener = runtime.block_on(tokio::net::TcpListener::bind("127.0.0.1:0")).unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    runtime.spawn(async move { axum::serve(listener, router).await });

    let meta = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {"extensions": {"io.github.jafarsa0/pilotage": {}}},
        "io.modelcontextprotocol/clientInfo": {"name": "metrics-test", "version": "1"}
    });
    let call = |id: u64, tool: &str, arguments: Value| {
        json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": tool, "arguments": arguments, "_meta": meta}})
            .to_string()
    };
    let headers = |tool: &'static str| {
        [
            ("Mcp-Protocol-Version", "2026-07-28"),
            ("Mcp-Method", "tools/call"),
            ("Mcp-Name", tool),
        ]
    };
    // An execute that runs, a validate, and a trace of a run nobody started (a Pilotage error).
    let (status, body) = post(
        &addr,
        &headers("echo_v1_execute"),
        &call(1, "echo_v1_execute", json!({"program": {"n": 1}})),
    );
    assert_eq!(status, 200, "{body}");
    let (status, body) = post(
        &addr,
        &headers("echo_v1_validate"),
        &call(2, "echo_v1_validate", json!({"program": {"n": 1}})),
    );
    assert_eq!(status, 200, "{body}");
    let (status, body) = post(
        &addr,
        &headers("echo_v1_trace"),
        &call(
            3,
            "echo_v1_trace",
            json!({"run_id": "run_0000000000000000000000000000"}),
        ),
    );
    assert_eq!(status, 200, "{body}");
    // A call of a tool the server does not have: a JSON-RPC error.
    let (status, body) = post(&addr, &headers("no_such_tool"), &call(4, "no_such_tool", json!({})));
    assert!(status == 200 || status == 400, "{status} {body}");
    // A protocol version the client made up is labelled `other`, if the transport lets it by.
    let (status, body) = post(
        &addr,
        &[("Mcp-Protocol-Version", "1999-01-01"), ("Mcp-Method", "tools/list")],
        &json!({"jsonrpc": "2.0", "id": 5, "method": "tools/list", "params": {"_meta": meta}}).to_string(),
    );
    assert!(status == 200 || status == 400, "{status} {body}");
    std::thread::sleep(std::time::Duration::from_millis(200));

    let records = recorded.records.lock().unwrap().clone();
    let ours: Vec<_> = records
        .iter()
        .filter(|(name, _, _)| name == pilotage_server::telemetry::OPERATION_DURATION)
        .collect();
    let label =
        |labels: &Vec<(String, String)>, key: &str| labels.iter().find(|(k, _)| k == key).map(|(_, v)| v.clone());
    let of_tool = |tool: &str| {
        ours.iter()
            .filter(|(_, labels, _)| label(labels, "gen_ai.tool.name").as_deref() == Some(tool))
            .collect::<Vec<_>>()
    };
    let execute = of_tool("echo_v1_execute");
    assert_eq!(execute.len(), 1, "one record for the execute call: {records:#?}");
    let (_, labels, seconds) = execute[0];
    assert_eq!(label(labels, "mcp.method.name").as_deref(), Some("tools/call"));
    assert_eq!(label(labels, "mcp.protocol.version").as_deref(), Some("2026-07-28"));
    assert_eq!(
        label(labels, "error.type"),
        None,
        "a run that succeeded has no error.type"
    );
    assert!(*seconds > 0.0 && *seconds < 10.0, "a duration in seconds: {seconds}");
    assert_eq!(of_tool("echo_v1_validate").len(), 1, "{records:#?}");
    let trace = of_tool("echo_v1_trace");
    assert_eq!(trace.len(), 1, "{records:#?}");
    assert!(
        label(&trace[0].1, "error.type").is_some_and(|kind| !kind.is_empty()),
        "a Pilotage error is the record's error.type: {records:#?}"
    );
    // An unknown tool's name is the client's text: no label (the label set stays bounded).
    assert!(of_tool("no_such_tool").is_empty(), "{records:#?}");
    let unknown: Vec<_> = ours
        .iter()
        .filter(|(_, labels, _)| label(labels, "error.type").as_deref() == Some("jsonrpc.-32602"))
        .collect();
    assert_eq!(unknown.len(), 1, "{records:#?}");
    assert_eq!(label(&unknown[0].1, "gen_ai.tool.name"), None, "{records:#?}");
    for (_, labels, _) in &ours {
        for (key, value) in labels {
            assert!(
                matches!(
                    key.as_str(),
                    "mcp.method.name" | "gen_ai.tool.name" | "mcp.protocol.version" | "error.type"
                ),
                "an unexpected label {key}={value}"
            );
            assert!(!value.starts_with("run_"), "no run id as a label: {key}={value}");
        }
    }
    assert!(
        !ours
            .iter()
            .any(|(_, labels, _)| label(labels, "mcp.protocol.version").as_deref() == Some("1999-01-01")),
        "{records:#?}"
    );
    let described = recorded.described.lock().unwrap().clone();
    assert!(
        described
            .iter()
            .any(|(name, unit)| name == "mcp.server.operation.duration" && *unit == Some(Unit::Seconds)),
        "the histogram is described in seconds: {described:?}"
    );
}
