//! What an operator sees (`tracing`): one span per MCP request, named and attributed as
//! OpenTelemetry's semantic conventions for MCP say (span name `{mcp.method.name}
//! {gen_ai.tool.name}` through `otel.name`; `mcp.method.name`, `gen_ai.tool.name`,
//! `mcp.session.id`, `mcp.protocol.version`, `jsonrpc.request.id`, `error.type`), with the
//! Pilotage Language, stage, run id and outcome or error kind, the requester only as a stable
//! hash, and the duration; one `info` event per answered request; `warn` and `error` events
//! for refusals, panics, deadlines and store failures (emitted where they happen). Never a
//! token, never a program, input or output body above `debug`.
//!
//! With no subscriber installed all of it costs a few relaxed atomic loads per request.
//!
//! With the `metrics` feature, every answered request is also recorded in the
//! `mcp.server.operation.duration` histogram (seconds) of the same conventions, through the
//! [`metrics`](https://docs.rs/metrics) facade: labels `mcp.method.name`, `gen_ai.tool.name`
//! (for `tools/call`), `mcp.protocol.version` and, when the answer is an error, `error.type`
//! (a JSON-RPC code as `jsonrpc.-32602`, or a Pilotage error kind). Every label comes from a
//! bounded set (the methods the server answers, its own tool names (a call of an unknown tool
//! has none), the error kinds, the published protocol versions or `other`), never from an
//! identity, a run id or a body. The binary
//! installs whichever recorder it exports with (Prometheus, OpenTelemetry, StatsD); with none
//! installed a record is a no-op.

use std::time::Instant;

use rmcp::model::{CallToolResult, ErrorData};
use rmcp::service::RequestContext;
use rmcp::RoleServer;
use serde_json::Value;
use tracing::field::Empty;

/// A stable, non-reversible short name of a requester identity for logs: 16 hexadecimal
/// digits of FNV-1a over it (the same identity always logs the same way; the identity itself,
/// a session id or an OAuth subject, never reaches a log).
pub fn identity_hash(identity: &str) -> String {
    let digest = identity.bytes().fold(0xcbf2_9ce4_8422_2325_u64, |hash, byte| {
        (hash ^ u64::from(byte)).wrapping_mul(0x0100_0000_01b3)
    });
    format!("{digest:016x}")
}

/// The session id and protocol version an HTTP request carried, when it came over HTTP.
fn http_headers(context: &RequestContext<RoleServer>) -> (Option<String>, Option<String>) {
    let Some(parts) = context.extensions.get::<http::request::Parts>() else {
        return (None, None);
    };
    let header = |name: &str| parts.headers.get(name).and_then(|v| v.to_str().ok()).map(str::to_owned);
    (header("mcp-session-id"), header("mcp-protocol-version"))
}

/// The span of one MCP request of `method` (and `tool` for `tools/call`).
pub(crate) fn request_span(method: &'static str, tool: Option<&str>, context: &RequestContext<RoleServer>) -> Request {
    let (session, version) = http_headers(context);
    let version = version.or_else(|| context.peer.peer_info().map(|info| info.protocol_version.to_string()));
    let name = match tool {
        Some(tool) => format!("{method} {tool}"),
        None => method.to_owned(),
    };
    let span = tracing::info_span!(
        "mcp.request",
        otel.name = %name,
        otel.kind = "server",
        mcp.method.name = method,
        gen_ai.tool.name = tool,
        gen_ai.operation.name = tool.map(|_| "execute_tool"),
        mcp.session.id = session,
        mcp.protocol.version = version,
        jsonrpc.request.id = %context.id,
        pilotage.language = Empty,
        pilotage.stage = Empty,
        pilotage.run_id = Empty,
        pilotage.outcome = Empty,
        pilotage.requester = Empty,
        error.type = Empty,
        duration_ms = Empty,
    );
    #[cfg(feature = "metrics")]
    let labels = {
        let mut labels = Vec::with_capacity(2);
        if let Some(tool) = tool {
            labels.push(("gen_ai.tool.name", tool.to_owned()));
        }
        // A client writes the header: only the revisions MCP has published are a label value.
        let version = version
            .as_deref()
            .map(|v| if KNOWN_VERSIONS.contains(&v) { v } else { "other" });
        if let Some(version) = version {
            labels.push(("mcp.protocol.version", version.to_owned()));
        }
        labels
    };
    Request {
        span,
        started: Instant::now(),
        method,
        #[cfg(feature = "metrics")]
        labels,
    }
}

/// One request's span and when it started.
pub(crate) struct Request {
    pub span: tracing::Span,
    started: Instant,
    method: &'static str,
    #[cfg(feature = "metrics")]
    labels: Vec<(&'static str, String)>,
}

/// The MCP revisions a `mcp.protocol.version` label names; any other value a client sends is
/// labelled `other`, so that no client can grow the histogram's label set.
#[cfg(feature = "metrics")]
const KNOWN_VERSIONS: &[&str] = &["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25", "2026-07-28"];

/// The name of the duration histogram (OpenTelemetry's semantic conventions for MCP).
#[cfg(feature = "metrics")]
pub const OPERATION_DURATION: &str = "mcp.server.operation.duration";

/// Records one answered request in [`OPERATION_DURATION`], in seconds.
#[cfg(feature = "metrics")]
fn record_duration(request: &Request, elapsed: std::time::Duration, error_type: Option<&str>) {
    static DESCRIBED: std::sync::Once = std::sync::Once::new();
    DESCRIBED.call_once(|| {
        metrics::describe_histogram!(
            OPERATION_DURATION,
            metrics::Unit::Seconds,
            "MCP request duration as observed on the server, from receipt until the result is sent."
        );
    });
    let mut labels: Vec<metrics::Label> = Vec::with_capacity(request.labels.len() + 2);
    labels.push(metrics::Label::from_static_parts("mcp.method.name", request.method));
    for (key, value) in &request.labels {
        labels.push(metrics::Label::new(*key, value.clone()));
    }
    if let Some(error_type) = error_type {
        labels.push(metrics::Label::new("error.type", error_type.to_owned()));
    }
    metrics::histogram!(OPERATION_DURATION, labels).record(elapsed.as_secs_f64());
}

impl Request {
    /// A `tools/call` of a tool this server does not have: its name, the client's text, is
    /// no label of the histogram (the span keeps it).
    pub(crate) fn unknown_tool(&mut self) {
        #[cfg(feature = "metrics")]
        self.labels.retain(|(key, _)| *key != "gen_ai.tool.name");
    }

    /// Records who asks (hashed) and, for a loop or access tool, the Language and stage.
    pub(crate) fn describe(&self, identity: &str, language: Option<&str>, stage: Option<&str>) {
        self.span.record("pilotage.requester", identity_hash(identity));
        if let Some(language) = language {
            self.span.record("pilotage.language", language);
        }
        if let Some(stage) = stage {
            self.span.record("pilotage.stage", stage);
        }
    }

    /// Records the answer of a `tools/call` and emits the request's event.
    pub(crate) fn finish_call(&self, answer: &Result<CallToolResult, ErrorData>) {
        let _entered = self.span.enter();
        let elapsed = self.started.elapsed();
        self.span.record("duration_ms", elapsed.as_secs_f64() * 1000.0);
        match answer {
            Err(error) => {
                let kind = format!("jsonrpc.{}", error.code.0);
                self.span.record("error.type", kind.as_str());
                #[cfg(feature = "metrics")]
                record_duration(self, elapsed, Some(&kind));
                tracing::info!(
                    mcp.method.name = self.method,
                    error.type = %kind,
                    duration_ms = elapsed.as_secs_f64() * 1000.0,
                    "MCP request answered with a JSON-RPC error"
                );
            }
            Ok(result) => {
                let content = result.structured_content.as_ref().unwrap_or(&Value::Null);
                if let Some(run_id) = content.get("run_id").and_then(Value::as_str) {
                    self.span.record("pilotage.run_id", run_id);
                }
                let kind = content.pointer("/error/kind").and_then(Value::as_str);
                let outcome = if let Some(kind) = kind {
                    self.span.record("error.type", kind);
                    format!("error:{kind}")
                } else if let Some(outcome) = content.get("outcome") {
                    let status = outcome.get("status").and_then(Value::as_str).unwrap_or("unknown");
                    format!("{}:{status}", if outcome["ok"] == true { "ok" } else { "failed" })
                } else if let Some(valid) = content.get("valid").and_then(Value::as_bool) {
                    (if valid { "valid" } else { "invalid" }).to_owned()
                } else {
                    "answered".to_owned()
                };
                self.span.record("pilotage.outcome", outcome.as_str());
                #[cfg(feature = "metrics")]
                record_duration(self, elapsed, kind);
                tracing::info!(
                    mcp.method.name = self.method,
                    pilotage.outcome = %outcome,
                    duration_ms = elapsed.as_secs_f64() * 1000.0,
                    "MCP request answered"
                );
                tracing::debug!(content = %content, "structuredContent of the answer");
            }
        }
    }

    /// Emits the event of a request other than `tools/call`.
    pub(crate) fn finish(&self, error: Option<&ErrorData>) {
        let _entered = self.span.enter();
        let elapsed = self.started.elapsed();
        self.span.record("duration_ms", elapsed.as_secs_f64() * 1000.0);
        match error {
            Some(error) => {
                let kind = format!("jsonrpc.{}", error.code.0);
                self.span.record("error.type", kind.as_str());
                #[cfg(feature = "metrics")]
                record_duration(self, elapsed, Some(&kind));
                tracing::info!(mcp.method.name = self.method, error.type = %kind, "MCP request answered with a JSON-RPC error");
            }
            None => {
                #[cfg(feature = "metrics")]
                record_duration(self, elapsed, None);
                tracing::info!(
                    mcp.method.name = self.method,
                    duration_ms = elapsed.as_secs_f64() * 1000.0,
                    "MCP request answered"
                );
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identity_hashes_are_stable_and_hide_the_identity() {
        let hash = identity_hash("auth:https://issuer.example#alice");
        assert_eq!(hash, identity_hash("auth:https://issuer.example#alice"));
        assert_ne!(hash, identity_hash("auth:https://issuer.example#bob"));
        assert_eq!(hash.len(), 16);
        assert!(!hash.contains("alice"));
    }
}
