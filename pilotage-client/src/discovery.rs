//! Detection and discovery from the client's side (Part III 1.2, 1.3, 3.1 to 3.3, 10.2-2):
//!
//! - a server is a Pilotage server when it declares the extension (initialize or
//!   `server/discover`) **or** its `pilotage_manifest` tool answers a valid manifest; with
//!   neither, nothing is inferred from tools with similar names (1.3 rule 4);
//! - precedence (3.3): the inline manifest of the initialize / discover `_meta` for the
//!   session, else the manifest tool; when both are read and differ, the tool is
//!   authoritative;
//! - manifests are read in the compatible reading: a later minor version's enum values do not
//!   break discovery.
//!
//! [`decide`] is pure: it takes what the connection showed and returns the [`Discovery`], so
//! precedence is tested on recorded results.

use serde::Serialize;
use serde_json::Value;

use super::routing::{route, Channel, RawResult};
use pilotage_types::{parse_compatible, InitializeMetaValue, Manifest, EXTENSION_ID, MANIFEST_TOOL, META_KEY};

/// How the server was recognised as a Pilotage server.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum DetectedBy {
    /// The extension declared in `capabilities.extensions` (initialize or `server/discover`).
    Extension,
    /// `pilotage_manifest` answered a valid manifest (3.1).
    ManifestTool,
}

/// Where the manifest in use came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ManifestSource {
    /// The initialize result's `_meta` (3.2).
    Initialize,
    /// The `server/discover` result's `_meta` (3.3, stateless revision).
    Discover,
    /// The `pilotage_manifest` tool (3.1).
    Tool,
}

/// What discovery found.
#[derive(Debug, Clone, PartialEq)]
pub struct Discovery {
    /// The negotiated MCP revision.
    pub protocol_version: String,
    /// Whether the revision is the stateless one (no initialize).
    pub stateless: bool,
    /// How Pilotage was detected (one or both).
    pub detected_by: Vec<DetectedBy>,
    /// Where [`Discovery::manifest`] came from.
    pub manifest_source: ManifestSource,
    /// The manifest in use.
    pub manifest: Manifest,
    /// The `tools/list` entries, as listed.
    pub tools: Vec<Value>,
}

impl Discovery {
    /// The listed tool named `name`.
    pub fn tool(&self, name: &str) -> Option<&Value> {
        self.tools
            .iter()
            .find(|t| t.get("name").and_then(Value::as_str) == Some(name))
    }

    /// What kind of Pilotage tool `name` is, from the binding's fixed names and the manifest's
    /// `loop` objects (Part III 4, 4.3): the union its results must follow (Part III 6),
    /// whatever `outputSchema` the server declares. `None` for a tool that is not Pilotage's.
    pub fn tool_kind(&self, name: &str) -> Option<pilotage_types::ToolKind> {
        use pilotage_types::ToolKind;
        match name {
            pilotage_types::MANIFEST_TOOL => return Some(ToolKind::Manifest),
            pilotage_types::GET_GUIDE_TOOL => return Some(ToolKind::GetGuide),
            pilotage_types::CATALOG_TOOL => return Some(ToolKind::Catalog),
            _ => {}
        }
        self.manifest.languages.iter().find_map(|language| {
            let tools = &language.loop_;
            if tools.validate == name {
                Some(ToolKind::Validate)
            } else if tools.execute.as_deref() == Some(name) {
                Some(ToolKind::Execute)
            } else if tools.trace.as_deref() == Some(name) {
                Some(ToolKind::Trace)
            } else {
                None
            }
        })
    }
}

/// Why a server is not (usable as) a Pilotage server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NotPilotage {
    /// What was looked at and not found.
    pub reason: String,
}

impl std::fmt::Display for NotPilotage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "not a Pilotage server: {}", self.reason)
    }
}

impl std::error::Error for NotPilotage {}

/// What a connection showed, for [`decide`].
#[derive(Debug, Clone)]
pub struct Observed<'a> {
    /// The negotiated revision.
    pub protocol_version: &'a str,
    /// No initialize on this revision (2026-07-28).
    pub stateless: bool,
    /// `capabilities.extensions` of the initialize / discover result, if any.
    pub extensions: Option<&'a Value>,
    /// `_meta` of the initialize / discover result, if any.
    pub meta: Option<&'a Value>,
    /// The `tools/list` entries.
    pub tools: &'a [Value],
    /// What `pilotage_manifest` answered, when it is listed and was called.
    pub manifest_tool: Option<RawResult>,
}

/// Whether `tools` lists `pilotage_manifest`.
pub fn lists_manifest_tool(tools: &[Value]) -> bool {
    tools
        .iter()
        .any(|t| t.get("name").and_then(Value::as_str) == Some(MANIFEST_TOOL))
}

/// Decides detection, precedence and the manifest from what a connection showed.
pub fn decide(observed: Observed<'_>) -> Result<Discovery, NotPilotage> {
    let declared = observed
        .extensions
        .and_then(Value::as_object)
        .is_some_and(|extensions| extensions.contains_key(EXTENSION_ID));
    let inline: Option<Manifest> = observed
        .meta
        .and_then(|meta| meta.get(META_KEY))
        .and_then(|value| parse_compatible::<InitializeMetaValue>(value).ok())
        .and_then(|value| value.manifest);
    let (from_tool, tool_problem) = match observed.manifest_tool {
        None => (None, "pilotage_manifest is not listed".to_owned()),
        Some(raw) => match route::<Manifest>(MANIFEST_TOOL, raw) {
            Ok(Channel::Response(manifest)) => (Some(manifest), String::new()),
            Ok(Channel::RequestError(error)) => (
                None,
                format!("pilotage_manifest answered a request error ({})", error.raw_kind),
            ),
            Ok(Channel::Carrier { code, message }) => (
                None,
                format!("pilotage_manifest answered a JSON-RPC error {code}: {message}"),
            ),
            Err(violation) => (
                None,
                format!(
                    "pilotage_manifest did not answer a valid manifest: {}",
                    violation.message
                ),
            ),
        },
    };
    let mut detected_by = Vec::new();
    if declared {
        detected_by.push(DetectedBy::Extension);
    }
    if from_tool.is_some() {
        detected_by.push(DetectedBy::ManifestTool);
    }
    if detected_by.is_empty() {
        return Err(NotPilotage {
            reason: format!("the extension {EXTENSION_ID} is not declared and {tool_problem} (Part III 1.3)"),
        });
    }
    let inline_source = if observed.stateless {
        ManifestSource::Discover
    } else {
        ManifestSource::Initialize
    };
    let (manifest, manifest_source) = match (inline, from_tool) {
        (Some(inline), Some(tool)) if inline != tool => (tool, ManifestSource::Tool),
        (Some(inline), _) => (inline, inline_source),
        (None, Some(tool)) => (tool, ManifestSource::Tool),
        (None, None) => {
            return Err(NotPilotage {
                reason: format!(
                    "the extension is declared but no manifest can be read: no inline manifest, and {tool_problem}"
                ),
            })
        }
    };
    Ok(Discovery {
        protocol_version: observed.protocol_version.to_owned(),
        stateless: observed.stateless,
        detected_by,
        manifest_source,
        manifest,
        tools: observed.tools.to_vec(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn manifest(title: &str) -> Value {
        json!({"pilotage": "1.1", "capabilities": {"guides": true, "validate": true},
            "languages": [{"name": "a/b", "title": title, "guides": "pilotage_get_guide",
                "loop": {"validate": "check"}, "locator": "json-pointer"}]})
    }

    fn tool_answer(content: Value) -> Option<RawResult> {
        Some(RawResult::Result {
            is_error: false,
            structured_content: Some(content),
        })
    }

    fn observed<'a>(extensions: Option<&'a Value>, meta: Option<&'a Value>, tool: Option<RawResult>) -> Observed<'a> {
        Observed {
            protocol_version: "2025-11-25",
            stateless: false,
            extensions,
            meta,
            tools: &[],
            manifest_tool: tool,
        }
    }

    #[test]
    fn precedence_inline_then_tool_and_the_tool_wins_when_they_differ() {
        let extensions = json!({EXTENSION_ID: {}});
        let meta = json!({META_KEY: {"manifest": manifest("inline")}});
        let same = decide(observed(
            Some(&extensions),
            Some(&meta),
            tool_answer(manifest("inline")),
        ))
        .unwrap();
        assert_eq!(same.manifest_source, ManifestSource::Initialize);
        assert_eq!(same.detected_by, [DetectedBy::Extension, DetectedBy::ManifestTool]);
        let differ = decide(observed(Some(&extensions), Some(&meta), tool_answer(manifest("tool")))).unwrap();
        assert_eq!(differ.manifest_source, ManifestSource::Tool);
        assert_eq!(differ.manifest.languages[0].title, "tool");
        let inline_only = decide(observed(Some(&extensions), Some(&meta), None)).unwrap();
        assert_eq!(inline_only.manifest_source, ManifestSource::Initialize);
        assert_eq!(inline_only.detected_by, [DetectedBy::Extension]);
        let mut stateless = observed(Some(&extensions), Some(&meta), None);
        stateless.stateless = true;
        assert_eq!(decide(stateless).unwrap().manifest_source, ManifestSource::Discover);
    }

    #[test]
    fn detection_needs_the_declaration_or_a_valid_manifest_from_the_tool() {
        let tool_only = decide(observed(None, None, tool_answer(manifest("t")))).unwrap();
        assert_eq!(tool_only.detected_by, [DetectedBy::ManifestTool]);
        assert_eq!(tool_only.manifest_source, ManifestSource::Tool);
        let not_a_manifest = decide(observed(None, None, tool_answer(json!({"hello": "world"})))).unwrap_err();
        assert!(
            not_a_manifest.reason.contains("did not answer a valid manifest"),
            "{not_a_manifest}"
        );
        let nothing = decide(observed(None, None, None)).unwrap_err();
        assert!(nothing.reason.contains("is not listed"), "{nothing}");
        // An inline manifest without the declaration is not a detection (Part III 1.3).
        let meta = json!({META_KEY: {"manifest": manifest("inline")}});
        assert!(decide(observed(None, Some(&meta), None)).is_err());
        // Declared, but no manifest anywhere.
        let extensions = json!({EXTENSION_ID: {}});
        let empty = decide(observed(Some(&extensions), None, None)).unwrap_err();
        assert!(empty.reason.contains("no manifest can be read"), "{empty}");
        // A later minor version's values do not break discovery.
        let mut later = manifest("later");
        later["languages"][0]["locator"] = json!("x-later-locator");
        assert!(decide(observed(None, None, tool_answer(later))).is_ok());
    }
}
