//! MCP tool definitions: [`ToolDefinition`] serialises to an MCP `Tool` object, and the three
//! fixed access tools of Part III 4 (`pilotage_manifest`, `pilotage_get_guide`,
//! `pilotage_catalog`) are ready-made, with the inputSchemas of 3.1, 4.1 and 4.2, the cold-start
//! signposts of 3.4 in their descriptions, `readOnlyHint: true` (4.5) and their outputSchema
//! unions (6).

use std::sync::LazyLock;

use serde::Serialize;
use serde_json::{json, Map, Value};

use crate::output_schema::{Flavour, ToolKind};
use crate::{CATALOG_TOOL, GET_GUIDE_TOOL, MANIFEST_TOOL};

/// MCP tool annotations (hints; unverified server claims, Part III 4.5).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolAnnotations {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub read_only_hint: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub destructive_hint: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub idempotent_hint: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub open_world_hint: Option<bool>,
}

/// An MCP tool definition, as listed by `tools/list`. Serialises to an MCP `Tool` object.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ToolDefinition {
    /// The tool's name.
    pub name: String,
    /// Human-readable display name.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// What the tool does; carries the Part III 3.4 signposts for Pilotage tools.
    pub description: String,
    /// JSON Schema of the arguments (`"type": "object"` at the root).
    #[serde(rename = "inputSchema")]
    pub input_schema: Value,
    /// JSON Schema of `structuredContent` (Part III 6: the tool's union).
    #[serde(rename = "outputSchema", skip_serializing_if = "Option::is_none")]
    pub output_schema: Option<Value>,
    /// MCP annotations.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub annotations: Option<ToolAnnotations>,
    /// `_meta`; on validate and execute tools it carries the Part III 5 program declaration
    /// under the full key `io.github.jafarsa0/pilotage`.
    #[serde(rename = "_meta", skip_serializing_if = "Option::is_none")]
    pub meta: Option<Map<String, Value>>,
}

impl ToolDefinition {
    /// The definition as a JSON value (an MCP `Tool` object).
    pub fn to_value(&self) -> Value {
        serde_json::to_value(self).expect("a ToolDefinition always serialises")
    }

    /// The same definition with the outputSchema of `kind` in another flavour.
    pub fn with_output_flavour(&self, kind: ToolKind, flavour: Flavour) -> Self {
        Self {
            output_schema: Some(kind.output_schema(flavour).clone()),
            ..self.clone()
        }
    }
}

/// The fixed-name access tools of Part III 4.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum AccessTool {
    /// `pilotage_manifest`: discovery, the entry point (3.1, 3.4).
    Manifest,
    /// `pilotage_get_guide`: the learn stage (4.1).
    GetGuide,
    /// `pilotage_catalog`: the lookup stage (4.2); exposed exactly when a Language declares catalog.
    Catalog,
}

/// The manifest tool's description: the entry-point signpost of Part III 3.4.
pub const MANIFEST_DESCRIPTION: &str = "Start here: call this first. Returns this server's Pilotage manifest \
(Pilotage, io.github.jafarsa0/pilotage): the program Languages it accepts and, for each, how to use them: \
learn with pilotage_get_guide, look up names with pilotage_catalog, then validate, execute and inspect traces \
with the loop tools the manifest names.";

/// The guide tool's description: the learn-stage signpost of Part III 3.4.
pub const GET_GUIDE_DESCRIPTION: &str = "Learn stage: the guides. Give `language` to list the guides of a \
Pilotage Language (index form); add `id` to fetch one guide with its body, and `topic` to fetch one topic of it. \
Read the guides before writing a program.";

/// The catalog tool's description: the lookup-stage signpost of Part III 3.4.
pub const CATALOG_DESCRIPTION: &str = "Lookup stage: the catalog. The environment-bound names a Pilotage \
Language's programs may use: `verb: list` (filter by `kind`, `tag`, `q`; page with `cursor`, `limit`), \
`verb: get` with `id`, or `verb: changed_since` with `catalog_version`.";

impl AccessTool {
    /// Every access tool.
    pub const ALL: [AccessTool; 3] = [Self::Manifest, Self::GetGuide, Self::Catalog];

    /// The fixed tool name.
    pub const fn name(self) -> &'static str {
        match self {
            Self::Manifest => MANIFEST_TOOL,
            Self::GetGuide => GET_GUIDE_TOOL,
            Self::Catalog => CATALOG_TOOL,
        }
    }

    /// The outputSchema union this tool uses.
    pub const fn kind(self) -> ToolKind {
        match self {
            Self::Manifest => ToolKind::Manifest,
            Self::GetGuide => ToolKind::GetGuide,
            Self::Catalog => ToolKind::Catalog,
        }
    }

    /// The inputSchema, exactly as Part III prints it (3.1: an object with no required
    /// members; 4.1; 4.2). These schemas are intentionally strict (7.1): a violation is a
    /// structural, carrier-level fault.
    pub fn input_schema(self) -> Value {
        match self {
            Self::Manifest => json!({"type": "object", "properties": {}}),
            Self::GetGuide => json!({
                "type": "object",
                "properties": {
                    "language": { "type": "string" },
                    "id": { "type": "string" },
                    "topic": { "type": "string" }
                },
                "required": ["language"]
            }),
            Self::Catalog => json!({
                "type": "object",
                "properties": {
                    "language": { "type": "string" },
                    "verb": { "type": "string", "enum": ["list", "get", "changed_since"] },
                    "kind": { "type": "string" },
                    "tag": { "type": "string" },
                    "q": { "type": "string" },
                    "cursor": { "type": "string" },
                    "limit": { "type": "integer", "minimum": 1 },
                    "id": { "type": "string" },
                    "catalog_version": { "type": "string" }
                },
                "required": ["language", "verb"]
            }),
        }
    }

    /// The description, carrying the Part III 3.4 signpost of this tool.
    pub const fn description(self) -> &'static str {
        match self {
            Self::Manifest => MANIFEST_DESCRIPTION,
            Self::GetGuide => GET_GUIDE_DESCRIPTION,
            Self::Catalog => CATALOG_DESCRIPTION,
        }
    }

    /// The complete definition with an outputSchema of `flavour`.
    pub fn definition_with(self, flavour: Flavour) -> ToolDefinition {
        ToolDefinition {
            name: self.name().to_owned(),
            title: None,
            description: self.description().to_owned(),
            input_schema: self.input_schema(),
            output_schema: Some(self.kind().output_schema(flavour).clone()),
            annotations: Some(ToolAnnotations {
                read_only_hint: Some(true),
                ..ToolAnnotations::default()
            }),
            meta: None,
        }
    }

    /// The complete definition, with the inlined outputSchema (built once).
    pub fn definition(self) -> &'static ToolDefinition {
        static DEFINITIONS: LazyLock<[ToolDefinition; 3]> =
            LazyLock::new(|| AccessTool::ALL.map(|tool| tool.definition_with(Flavour::Inlined)));
        &DEFINITIONS[self as usize]
    }
}
