//! The `rmcp` feature: Pilotage on the official Rust MCP SDK.
//!
//! - [`tool`] / [`tools_list`]: a [`ToolDefinition`] as an `rmcp::model::Tool`;
//! - [`call_tool_result`]: a Pilotage response as a `CallToolResult` with `structuredContent`,
//!   one text block (a short summary, Part III 6, worded as Part III 9.3 to 9.5 word it) and `isError` routed per Part III 6 and 7:
//!   a request error is `isError: true`; diagnostics and run outcomes, even `valid: false` and
//!   `ok: false`, are `isError: false`;
//! - [`carrier_error`]: an [`ArgumentFault::Carrier`](crate::ArgumentFault) as the JSON-RPC
//!   `-32602` (Invalid params) error of Part III 7.1 (and 9.6 for an unknown tool).

use rmcp::model::{CallToolResult, ContentBlock, ErrorData, ListToolsResult, Tool};
use serde::Serialize;
use serde_json::Value;

use crate::tool::ToolDefinition;
use crate::RequestError;

/// `definition` as an rmcp `Tool` (every member kept: title, annotations, outputSchema, `_meta`).
pub fn tool(definition: &ToolDefinition) -> Tool {
    serde_json::from_value(definition.to_value())
        .expect("a ToolDefinition is an MCP Tool (checked against the MCP schemas by the tests)")
}

impl From<&ToolDefinition> for Tool {
    fn from(definition: &ToolDefinition) -> Self {
        tool(definition)
    }
}

/// A complete, unpaginated `tools/list` result.
pub fn tools_list<'a>(definitions: impl IntoIterator<Item = &'a ToolDefinition>) -> ListToolsResult {
    ListToolsResult::with_all_items(definitions.into_iter().map(tool).collect())
}

/// A short human-readable summary of a Pilotage `structuredContent` (Part III 6: "valid: max
/// risk safe", "invalid: 2 diagnostics"). Clients must not parse it; it is for hosts that show
/// only `content`.
pub fn summary(content: &Value) -> String {
    if let Some(error) = content.get("error") {
        // The message's first clause, as in Part III 9.5 ("unknown run: it may have expired"
        // is summarised "unknown run"); the kind when there is no message.
        let message = error.get("message").and_then(Value::as_str).unwrap_or_default();
        let clause = message.split(": ").next().unwrap_or_default().trim();
        return if clause.is_empty() {
            format!(
                "request error {}",
                error.get("kind").and_then(Value::as_str).unwrap_or("internal")
            )
        } else {
            clause.to_owned()
        };
    }
    if let Some(valid) = content.get("valid").and_then(Value::as_bool) {
        let count = content.get("diagnostics").and_then(Value::as_array).map_or(0, Vec::len);
        let plural = if count == 1 { "" } else { "s" };
        return match (valid, content.pointer("/plan/max_risk").and_then(Value::as_str)) {
            (true, Some(risk)) => format!("valid: max risk {risk}"),
            (true, None) => format!("valid: {count} diagnostic{plural}"),
            (false, _) => format!("invalid: {count} diagnostic{plural}"),
        };
    }
    if let Some(outcome) = content.get("outcome") {
        let status = outcome.get("status").and_then(Value::as_str).unwrap_or("unknown");
        return match outcome.get("error").and_then(Value::as_str) {
            Some(error) => format!("{status}: {error}"),
            None => status.to_owned(),
        };
    }
    if let Some(guides) = content.get("guides").and_then(Value::as_array) {
        return format!("{} guide(s)", guides.len());
    }
    if let Some(id) = content.pointer("/guide/id").and_then(Value::as_str) {
        return format!("guide {id}");
    }
    if let Some(items) = content.get("items").and_then(Value::as_array) {
        return format!(
            "{} catalog entr{}",
            items.len(),
            if items.len() == 1 { "y" } else { "ies" }
        );
    }
    if let Some(id) = content.pointer("/entry/id").and_then(Value::as_str) {
        return format!("catalog entry {id}");
    }
    if let Some(changes) = content.get("changes").and_then(Value::as_array) {
        return format!("{} catalog change(s)", changes.len());
    }
    if let Some(languages) = content.get("languages").and_then(Value::as_array) {
        return format!(
            "Pilotage {} manifest: {} Language(s)",
            content["pilotage"].as_str().unwrap_or("?"),
            languages.len()
        );
    }
    content.to_string()
}

/// A Pilotage response as a `CallToolResult`: `Ok` is a successful tool result
/// (`isError: false`, even for `valid: false` or `ok: false`, Part III 6), `Err` a request
/// error (`isError: true`, Part III 7.2).
pub fn call_tool_result<T: Serialize>(response: Result<T, RequestError>) -> CallToolResult {
    let (content, is_error) = match response {
        Ok(body) => (serde_json::to_value(body).expect("Pilotage responses serialise"), false),
        Err(error) => (serde_json::to_value(error).expect("request errors serialise"), true),
    };
    let mut result = if is_error {
        CallToolResult::structured_error(content.clone())
    } else {
        CallToolResult::structured(content.clone())
    };
    result.content = vec![ContentBlock::text(summary(&content))];
    result.is_error = Some(is_error);
    result
}

/// A structural argument fault (Part III 7.1) or an unknown tool (9.6): JSON-RPC `-32602`.
pub fn carrier_error(message: impl Into<String>) -> ErrorData {
    ErrorData::invalid_params(message.into(), None)
}

/// An [`ArgumentFault`](crate::ArgumentFault) on its Part III 7.1 channel: a carrier fault as
/// the JSON-RPC `-32602` error, a request error as a tool result with `isError: true`, a
/// program fault as a response with `isError: false` (4.6): `valid: false` on a validate tool,
/// a `validation_error` outcome on an execute tool, whose `run_id` comes from `run_id`.
#[cfg(feature = "derive")]
pub fn argument_fault(
    fault: crate::ArgumentFault,
    stage: crate::Stage,
    run_id: impl FnOnce() -> String,
) -> Result<CallToolResult, ErrorData> {
    match fault {
        crate::ArgumentFault::Carrier { message } => Err(carrier_error(message)),
        crate::ArgumentFault::Request(error) => Ok(call_tool_result::<Value>(Err(error))),
        crate::ArgumentFault::Program(diagnostics) => Ok(call_tool_result::<Value>(Ok(match stage {
            crate::Stage::Execute => {
                serde_json::to_value(crate::ExecuteResponse::validation_error(run_id(), diagnostics))
            }
            _ => serde_json::to_value(crate::ValidateResponse::invalid(diagnostics)),
        }
        .expect("a generated response serializes")))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn is_error_follows_part_iii() {
        let invalid = call_tool_result::<Value>(Ok(json!({"valid": false, "diagnostics": [{}, {}]})));
        assert_eq!(invalid.is_error, Some(false));
        assert_eq!(
            serde_json::to_value(&invalid.content[0]).unwrap()["text"],
            "invalid: 2 diagnostics"
        );
        let failed = call_tool_result::<Value>(Ok(
            json!({"run_id": "r", "outcome": {"ok": false, "status": "failed", "error": "boom"}}),
        ));
        assert_eq!(failed.is_error, Some(false));
        let error = call_tool_result::<Value>(Err(RequestError::not_found("unknown run: it may have expired")));
        assert_eq!(error.is_error, Some(true));
        assert_eq!(error.structured_content.unwrap()["error"]["kind"], "not_found");
        assert_eq!(carrier_error("Unknown tool: x").code.0, -32602);
        #[cfg(all(feature = "derive", feature = "validate"))]
        {
            use crate::Stage;
            let run_id = || "run-1".to_owned();
            let carrier = argument_fault(
                crate::ArgumentFault::Carrier {
                    message: "missing run_id".into(),
                },
                Stage::Trace,
                run_id,
            );
            assert_eq!(carrier.unwrap_err().code.0, -32602);
            let request = argument_fault(
                crate::ArgumentFault::Request(RequestError::invalid_request("both runnables")),
                Stage::Execute,
                run_id,
            );
            assert_eq!(request.unwrap().is_error, Some(true));
            let diagnostic: crate::Diagnostic = serde_json::from_value(
                json!({"severity": "error", "code": "invalid_program", "path": "/steps", "message": "m"}),
            )
            .unwrap();
            let validate = argument_fault(
                crate::ArgumentFault::Program(vec![diagnostic.clone()]),
                Stage::Validate,
                run_id,
            )
            .unwrap();
            assert_eq!(validate.is_error, Some(false));
            let content = validate.structured_content.unwrap();
            assert_eq!(content["valid"], false);
            assert!(<crate::ValidateResponse as crate::SchemaDef>::is_valid(&content));
            let execute =
                argument_fault(crate::ArgumentFault::Program(vec![diagnostic]), Stage::Execute, run_id).unwrap();
            assert_eq!(execute.is_error, Some(false));
            let content = execute.structured_content.unwrap();
            assert_eq!(content["outcome"]["status"], "validation_error");
            assert_eq!(content["run_id"], "run-1");
            assert!(
                <crate::ExecuteResponse as crate::SchemaDef>::is_valid(&content),
                "{content}"
            );
        }
    }

    #[test]
    fn tools_keep_every_member() {
        let definition = crate::AccessTool::Manifest.definition();
        let converted = serde_json::to_value(Tool::from(definition)).unwrap();
        assert_eq!(converted["name"], "pilotage_manifest");
        assert_eq!(converted["annotations"]["readOnlyHint"], true);
        assert_eq!(converted["outputSchema"], definition.output_schema.clone().unwrap());
    }
}
