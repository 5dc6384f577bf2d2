//! What an operator's log holds (issue #32): under `info`, every MCP request served over HTTP
//! appears once, with its OpenTelemetry attributes, and every refusal once as a `warn`; the
//! requester only as a hash; no program body and no bearer token.

use std::io::{Read, Write};
use std::sync::{Arc, Mutex};

use pilotage_server::prelude::*;
use serde_json::{json, Value};

/// Collects everything the subscriber writes.
#[derive(Clone, Default)]
struct Captured(Arc<Mutex<Vec<u8>>>);

impl Write for Captured {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
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
fn every_request_and_refusal_is_logged_once_and_no_secret_is() {
    let captured = Captured::default();
    let writer = captured.clone();
    let subscriber = tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::new("info,rmcp=warn"))
        .json()
        .with_writer(move || writer.clone())
        .finish();
    let _default = tracing::subscriber::set_default(subscriber);

    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let engine = Engine::builder("echo-engine", "1").language(Echo).build().unwrap();
    let router = runtime
        .block_on(async { engine.http_router("/mcp", HttpOptions::stateless()) })
        .unwrap();
    let listener = runtime.block_on(tokio::net::TcpListener::bind("127.0.0.1:0")).unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    let dispatch = tracing::dispatcher::get_default(|d| d.clone());
    std::thread::spawn(move || {
        let _guard = tracing::dispatcher::set_default(&dispatch);
        runtime.block_on(async move { axum::serve(listener, router).await })
    });

    let secret_program = "a-program-body-that-must-not-be-logged";
    let token = "Bearer eyJhbGciOiJSUzI1NiJ9.secret-token-that-must-not-be-logged.sig";
    let meta = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {"extensions": {"io.github.jafarsa0/pilotage": {}}},
        "io.modelcontextprotocol/clientInfo": {"name": "log-test", "version": "1"}
    });
    let call = |id: u64, tool: &str, arguments: Value| {
        json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": tool, "arguments": arguments, "_meta": meta}})
            .to_string()
    };
    for (id, tool) in [(7, "echo_v1_execute"), (8, "echo_v1_validate")] {
        let headers = [
            ("Mcp-Protocol-Version", "2026-07-28"),
            ("Mcp-Method", "tools/call"),
            ("Mcp-Name", tool),
            ("Authorization", token),
        ];
        let (status, body) = post(
            &addr,
            &headers,
            &call(id, tool, json!({"program": {"say": secret_program}})),
        );
        assert_eq!(status, 200, "{body}");
        assert!(body.contains("structuredContent"), "{body}");
    }
    let (status, _) = post(
        &addr,
        &[("Origin", "https://evil.example"), ("Authorization", token)],
        "{}",
    );
    assert_eq!(status, 403);
    std::thread::sleep(std::time::Duration::from_millis(200));

    let log = String::from_utf8(captured.0.lock().unwrap().clone()).unwrap();
    let events: Vec<Value> = log.lines().filter_map(|l| serde_json::from_str(l).ok()).collect();
    let answered: Vec<&Value> = events
        .iter()
        .filter(|e| e["fields"]["message"] == "MCP request answered")
        .collect();
    assert_eq!(answered.len(), 2, "one event per call:\n{log}");
    let execute = answered
        .iter()
        .find(|e| e["span"]["gen_ai.tool.name"] == "echo_v1_execute")
        .unwrap_or_else(|| panic!("the execute call's event:\n{log}"));
    let span = &execute["span"];
    assert_eq!(span["otel.name"], "tools/call echo_v1_execute");
    assert_eq!(span["mcp.method.name"], "tools/call");
    assert_eq!(span["jsonrpc.request.id"], "7");
    assert_eq!(span["mcp.protocol.version"], "2026-07-28");
    assert_eq!(span["pilotage.language"], "echo/v1");
    assert_eq!(span["pilotage.stage"], "execute");
    assert!(
        span["pilotage.run_id"].as_str().is_some_and(|r| r.starts_with("run_")),
        "{span:#}"
    );
    assert_eq!(execute["fields"]["pilotage.outcome"], "ok:success");
    assert_eq!(
        span["pilotage.requester"].as_str().map(str::len),
        Some(16),
        "a hash: {span:#}"
    );
    let refusals: Vec<&Value> = events
        .iter()
        .filter(|e| e["fields"]["message"] == "HTTP request refused")
        .collect();
    assert_eq!(refusals.len(), 1, "one refusal:\n{log}");
    assert_eq!(refusals[0]["level"], "WARN");
    assert_eq!(refusals[0]["fields"]["http.response.status_code"], 403);
    assert!(!log.contains(secret_program), "no program body at info:\n{log}");
    assert!(!log.contains("secret-token"), "no token:\n{log}");
    assert!(
        !log.contains("\"stateless\""),
        "the requester appears only hashed:\n{log}"
    );
}
