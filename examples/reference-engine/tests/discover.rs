//! The stateless MCP revision 2026-07-28, driven by the official Rust SDK's client in its
//! `server/discover` lifecycle, over stdio and over stateless streamable HTTP: discovery
//! declares the extension and carries the inline manifest and the welcome text (Part III 1.2,
//! 3.3, 3.4); every request carries the client's capabilities in its `_meta`, which the engine
//! reads (1.2; with `--hide-from-undeclared`, 1.3 rule 3); retention is a duration, never
//! `session` (8.1, 10.1-11); the loop answers as on the handshake revisions. And, on the
//! handshake revision, `--hide-from-undeclared` hiding the tools and the welcome text together.

mod common;

use std::time::Duration;

use pilotage_types::{parse_compatible, Manifest, EXTENSION_ID, META_KEY};
use rmcp::model::{
    CallToolRequestParams, ClientCapabilities, ClientConfig, ExtensionCapabilities, Implementation, JsonObject,
    ProtocolVersion,
};
use rmcp::transport::{StreamableHttpClientTransport, TokioChildProcess};
use rmcp::{ClientLifecycleMode, ClientServiceExt, RoleClient};
use serde_json::{json, Value};

fn config(declare: bool) -> ClientConfig {
    let mut capabilities = ClientCapabilities::default();
    if declare {
        capabilities.extensions = Some(ExtensionCapabilities::from([(
            EXTENSION_ID.to_owned(),
            JsonObject::new(),
        )]));
    }
    ClientConfig::new(capabilities, Implementation::new("pilotage-discover-test", "1.0"))
}

fn discover_mode() -> ClientLifecycleMode {
    ClientLifecycleMode::Discover {
        preferred_versions: vec![ProtocolVersion::V_2026_07_28],
    }
}

/// Checks one connected client end to end; `declared` says whether it declared Pilotage.
async fn check(client: &rmcp::service::RunningService<RoleClient, ClientConfig>, hidden_when_undeclared: bool) {
    let info = client.peer_info().expect("discovered");
    assert_eq!(info.protocol_version, ProtocolVersion::V_2026_07_28);
    let extensions = info.capabilities.extensions.clone().unwrap_or_default();
    assert!(
        extensions.contains_key(EXTENSION_ID),
        "server/discover declares the extension"
    );
    let instructions = info.instructions.clone().unwrap_or_default();
    if hidden_when_undeclared {
        // The tools are hidden from this client: no welcome text names them (1.3 rule 3, 3.4).
        assert!(
            !instructions.contains("pilotage_manifest"),
            "no welcome text for a client the tools are hidden from: {instructions}"
        );
    } else {
        assert!(
            instructions.contains("Pilotage") && instructions.contains("pilotage_manifest"),
            "the welcome text travels with server/discover (Part III 3.4): {instructions}"
        );
    }
    let meta = info.meta.clone().expect("server/discover carries _meta");
    let inline = meta.0.get(META_KEY).expect("the Pilotage _meta key, in full");
    let manifest: Manifest = parse_compatible(&inline["manifest"]).expect("a valid manifest");
    for language in &manifest.languages {
        let retention = language.retention.as_ref().map(|r| r.0.as_str());
        assert_ne!(
            retention,
            Some("session"),
            "no session retention on a stateless revision (8.1)"
        );
    }
    let tools = client.list_all_tools().await.expect("tools/list");
    if hidden_when_undeclared {
        assert!(tools.is_empty(), "hidden from a client that did not declare Pilotage");
        return;
    }
    assert!(tools.iter().any(|t| t.name == "pilotage_manifest"));
    let call = |name: &str, arguments: Value| {
        let params =
            CallToolRequestParams::new(name.to_owned()).with_arguments(arguments.as_object().cloned().unwrap());
        client.call_tool(params)
    };
    let from_tool = call("pilotage_manifest", json!({})).await.unwrap();
    assert_eq!(
        from_tool.structured_content.unwrap(),
        inline["manifest"],
        "the tool and discover agree"
    );
    let program = json!({"steps": [{"id": "p", "kind": "call", "capability": "cap_read_user_profile",
        "with": {"user_id": "$.input.userId"}}], "output": {"name": "$.steps.p.output.name"}});
    let run = call(
        "run_workflow",
        json!({"workflow": program, "input": {"userId": "42"}, "trace_level": "none"}),
    )
    .await
    .unwrap();
    assert_eq!(run.is_error, Some(false));
    let run = run.structured_content.unwrap();
    assert_eq!(run["output"]["name"], "Amira Hassan");
    // The run is retained across requests even without a session (PT1H).
    let fetched = call("trace_run", json!({"run_id": run["run_id"]})).await.unwrap();
    assert_eq!(fetched.is_error, Some(false), "{fetched:?}");
    assert_eq!(fetched.structured_content.unwrap()["trace"]["level"], "full");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stdio_on_the_stateless_revision() {
    for (declare, args, hidden) in [
        (true, vec![], false),
        (false, vec![], false),
        (false, vec!["--hide-from-undeclared"], true),
        (true, vec!["--hide-from-undeclared"], false),
    ] {
        let mut command = tokio::process::Command::new(env!("CARGO_BIN_EXE_reference-engine"));
        command.args(&args);
        let transport = TokioChildProcess::new(command).expect("the engine starts");
        let client = tokio::time::timeout(
            Duration::from_secs(30),
            config(declare).serve_with_lifecycle(transport, discover_mode()),
        )
        .await
        .expect("discovery within 30 s")
        .expect("discovery");
        check(&client, hidden).await;
        client.cancel().await.unwrap();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stateless_http_on_the_stateless_revision() {
    for (declare, args, hidden) in [
        (true, vec!["--stateless"], false),
        (true, vec![], false),
        (false, vec!["--stateless", "--hide-from-undeclared"], true),
    ] {
        let engine = common::engine_http(&args);
        let transport = StreamableHttpClientTransport::from_uri(engine.url.clone());
        let client = tokio::time::timeout(
            Duration::from_secs(30),
            config(declare).serve_with_lifecycle(transport, discover_mode()),
        )
        .await
        .expect("discovery within 30 s")
        .expect("discovery");
        check(&client, hidden).await;
        client.cancel().await.unwrap();
    }
}

#[test]
fn http_serves_loopback_and_refuses_foreign_hosts_and_origins_and_large_bodies() {
    let engine = common::engine_http(&["--stateless", "--max-body-bytes", "1024"]);
    let addr = engine
        .url
        .trim_start_matches("http://")
        .trim_end_matches("/mcp")
        .to_owned();
    let post = |host: &str, origin: Option<&str>, body: &str| -> u16 {
        use std::io::{Read, Write};
        let mut stream = std::net::TcpStream::connect(&addr).unwrap();
        stream.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        let origin = origin.map(|o| format!("Origin: {o}\r\n")).unwrap_or_default();
        let request = format!(
            "POST /mcp HTTP/1.1\r\nHost: {host}\r\n{origin}Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
            body.len()
        );
        stream.write_all(request.as_bytes()).unwrap();
        let mut response = String::new();
        let _ = stream.read_to_string(&mut response);
        response
            .split_whitespace()
            .nth(1)
            .and_then(|code| code.parse().ok())
            .unwrap_or(0)
    };
    let ping = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#;
    assert_eq!(post(&addr, None, ping), 200, "a loopback Host without Origin is served");
    assert_eq!(
        post("evil.example:80", None, ping),
        403,
        "DNS rebinding: a foreign Host is refused"
    );
    assert_eq!(
        post(&addr, Some("http://evil.example"), ping),
        403,
        "a browser Origin is refused unless allowed"
    );
    // The MCP transport rules refuse *foreign* Origins: a loopback Origin, with its own port
    // or any other, is served (the conformance suite's dns-rebinding-protection scenario).
    let port = addr.rsplit(':').next().unwrap();
    for (host, origin) in [
        (addr.clone(), format!("http://127.0.0.1:{port}")),
        (format!("localhost:{port}"), format!("http://localhost:{port}")),
        (format!("localhost:{port}"), "http://localhost:3000".to_owned()),
        (format!("[::1]:{port}"), "https://[::1]:8443".to_owned()),
        (addr.clone(), "http://127.0.0.1".to_owned()),
    ] {
        assert_eq!(post(&host, Some(&origin), ping), 200, "Host {host}, Origin {origin}");
    }
    for origin in [
        "http://127.0.0.1.evil.example",
        "http://localhost.evil.example:80",
        "null",
    ] {
        assert_eq!(post(&addr, Some(origin), ping), 403, "Origin {origin} is foreign");
    }
    let large = format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"ping","params":{{"pad":"{}"}}}}"#,
        "x".repeat(4096)
    );
    assert_eq!(
        post(&addr, None, &large),
        413,
        "a body over --max-body-bytes is refused"
    );
}

/// The handshake revision with `--hide-from-undeclared`: a client that did not declare Pilotage
/// in `initialize` sees no tools and no welcome text naming them; one that did sees both
/// (Part III 1.3 rule 3, 3.4).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_handshake_hides_tools_and_welcome_text_from_an_undeclared_client() {
    for declare in [false, true] {
        let mut command = tokio::process::Command::new(env!("CARGO_BIN_EXE_reference-engine"));
        command.arg("--hide-from-undeclared");
        let transport = TokioChildProcess::new(command).expect("the engine starts");
        let client = tokio::time::timeout(
            Duration::from_secs(30),
            config(declare).serve_with_lifecycle(transport, ClientLifecycleMode::Initialize),
        )
        .await
        .expect("initialize within 30 s")
        .expect("initialize");
        let instructions = client.peer_info().expect("initialized").instructions.clone();
        let tools = client.list_all_tools().await.expect("tools/list");
        if declare {
            assert!(
                instructions
                    .as_deref()
                    .is_some_and(|text| text.contains("pilotage_manifest")),
                "{instructions:?}"
            );
            assert!(tools.iter().any(|t| t.name == "pilotage_manifest"));
        } else {
            assert_eq!(instructions, None, "no welcome text naming hidden tools");
            assert!(tools.is_empty(), "hidden from a client that did not declare Pilotage");
        }
        client.cancel().await.unwrap();
    }
}
