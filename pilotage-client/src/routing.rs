//! The machine contract of a Pilotage tool result, from the client's side (Part III 6, 7.1,
//! 7.2, 10.2-5 to 10.2-7): every call ends on exactly one of three channels, read from
//! `structuredContent` only (the text content is never parsed).
//!
//! - [`Channel::Response`]: the operation's result, `isError` false — including `valid: false`
//!   and `ok: false`, which are answers, never failures (7.1);
//! - [`Channel::RequestError`]: `isError: true` with a `RequestError`; a kind this version does
//!   not know is acted on as `internal` while the raw kind is kept (7.2);
//! - [`Channel::Carrier`]: a JSON-RPC error.
//!
//! A result that fits none of them — no `structuredContent`, or content that does not match
//! its channel's shape — is a [`ContractViolation`] naming the tool and what was missing.

use serde_json::Value;

use pilotage_types::{parse_compatible, RequestError, RequestErrorKind, SchemaDef};

/// The channel a call ended on.
#[derive(Debug, Clone, PartialEq)]
pub enum Channel<T> {
    /// The operation's result (`isError` false).
    Response(T),
    /// A request error (`isError: true`, Part III 7.2).
    RequestError(RoutedRequestError),
    /// A JSON-RPC error (Part III 7.1).
    Carrier {
        /// The JSON-RPC error code (`-32602` for invalid params, an unknown tool, ...).
        code: i32,
        /// The error message.
        message: String,
    },
}

/// A request error as a client acts on it.
#[derive(Debug, Clone, PartialEq)]
pub struct RoutedRequestError {
    /// The kind to act on: the kind itself when known, `internal` otherwise (Part III 7.2).
    pub kind: RequestErrorKind,
    /// The kind exactly as the server sent it.
    pub raw_kind: String,
    /// The whole `structuredContent` (siblings such as `catalog_version` included).
    pub error: RequestError,
}

/// A tool result that breaks the machine contract of Part III 6 and 7.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ContractViolation {
    /// The tool called.
    pub tool: String,
    /// What was missing or wrong.
    pub message: String,
}

impl std::fmt::Display for ContractViolation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {} (Part III 6, 7)", self.tool, self.message)
    }
}

impl std::error::Error for ContractViolation {}

/// A tool result as the client received it, transport aside: what `tools/call` answered.
#[derive(Debug, Clone, PartialEq)]
pub enum RawResult {
    /// A `CallToolResult`: its `isError` and `structuredContent`.
    Result {
        /// `isError` (absent means false).
        is_error: bool,
        /// `structuredContent`, if present.
        structured_content: Option<Value>,
    },
    /// A JSON-RPC error response.
    Error {
        /// Its code.
        code: i32,
        /// Its message.
        message: String,
    },
}

/// Routes the result of calling `tool` (Part III 7.1): a response is read (in the compatible
/// reading, so a later minor version's values do not break it) as `T`, the tool's response
/// shape; `T` is `serde_json::Value` when the shape is not known in advance.
pub fn route<T: SchemaDef + serde::de::DeserializeOwned>(
    tool: &str,
    raw: RawResult,
) -> Result<Channel<T>, ContractViolation> {
    let violation = |message: String| ContractViolation {
        tool: tool.to_owned(),
        message,
    };
    let (is_error, content) = match raw {
        RawResult::Error { code, message } => return Ok(Channel::Carrier { code, message }),
        RawResult::Result {
            is_error,
            structured_content,
        } => (
            is_error,
            structured_content.ok_or_else(|| {
                violation(format!(
                    "a Pilotage tool result without structuredContent (isError: {is_error})"
                ))
            })?,
        ),
    };
    if is_error {
        let error: RequestError = parse_compatible(&content).map_err(|e| {
            violation(format!(
                "isError is true but structuredContent is not a request error: {e}"
            ))
        })?;
        return Ok(Channel::RequestError(RoutedRequestError {
            kind: error.error.kind.effective(),
            raw_kind: error.error.kind.as_str().to_owned(),
            error,
        }));
    }
    if content.get("error").is_some()
        && RequestError::is_valid_compatible(&content)
        && !T::is_valid_compatible(&content)
    {
        return Err(violation(
            "structuredContent is a request error but isError is false (Part III 7.2: request errors carry isError: true)"
                .to_owned(),
        ));
    }
    parse_compatible::<T>(&content)
        .map(Channel::Response)
        .map_err(|e| violation(format!("structuredContent does not match {}: {e}", T::DEF)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use pilotage_types::{ExecuteResponse, ValidateResponse};
    use serde_json::json;

    fn result(is_error: bool, content: Value) -> RawResult {
        RawResult::Result {
            is_error,
            structured_content: Some(content),
        }
    }

    #[test]
    fn every_channel_is_routed() {
        let invalid =
            json!({"valid": false, "diagnostics": [{"severity": "error", "code": "c", "path": "", "message": "m"}]});
        assert!(matches!(
            route::<ValidateResponse>("v", result(false, invalid)),
            Ok(Channel::Response(r)) if !r.valid
        ));
        let failed = json!({"run_id": "r", "outcome": {"ok": false, "status": "failed", "error": "boom"}});
        assert!(matches!(
            route::<ExecuteResponse>("x", result(false, failed)),
            Ok(Channel::Response(r)) if !r.outcome.ok
        ));
        let later = json!({"error": {"kind": "later_kind", "message": "m"}, "catalog_version": "cv"});
        let Ok(Channel::RequestError(error)) = route::<ExecuteResponse>("x", result(true, later)) else {
            panic!("a request error")
        };
        assert_eq!(error.kind, RequestErrorKind::Internal);
        assert_eq!(error.raw_kind, "later_kind");
        assert_eq!(error.error.catalog_version.as_deref(), Some("cv"));
        let carrier = route::<ExecuteResponse>(
            "x",
            RawResult::Error {
                code: -32602,
                message: "Unknown tool: x".into(),
            },
        );
        assert_eq!(
            carrier,
            Ok(Channel::Carrier {
                code: -32602,
                message: "Unknown tool: x".into()
            })
        );
    }

    #[test]
    fn contract_violations_name_the_tool_and_what_is_wrong() {
        let missing = route::<ValidateResponse>(
            "check",
            RawResult::Result {
                is_error: false,
                structured_content: None,
            },
        )
        .unwrap_err();
        assert_eq!(missing.tool, "check");
        assert!(missing.message.contains("without structuredContent"), "{missing}");
        let not_an_error =
            route::<ValidateResponse>("check", result(true, json!({"valid": true, "diagnostics": []}))).unwrap_err();
        assert!(not_an_error.message.contains("not a request error"), "{not_an_error}");
        let wrong_channel = route::<ValidateResponse>(
            "check",
            result(false, json!({"error": {"kind": "not_found", "message": "m"}})),
        )
        .unwrap_err();
        assert!(wrong_channel.message.contains("isError is false"), "{wrong_channel}");
        let malformed = route::<ExecuteResponse>("run", result(false, json!({"run_id": 1}))).unwrap_err();
        assert!(
            malformed.message.contains("does not match ExecuteResponse"),
            "{malformed}"
        );
    }
}
