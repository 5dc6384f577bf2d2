//! The conformance linter: checks a whole Pilotage server surface (the `tools/list` result,
//! the manifest, optionally the initialize result) against the server requirements of
//! Part III 10.1 that these documents can show. Every [`Finding`] names its rule (a [`Rule`]
//! of the table in [`rules`], with a stable id `<section>/<slug>`), the tool and the JSON
//! Pointer concerned, what is wrong, and what to do.
//!
//! One module per Part III section; search for a section number to find its checks:
//! - `extension`: 1.2 extension declared (warning), 2 full `_meta` key only, 3.2 initialize
//!   `_meta` value;
//! - `signposts`: 3.4 cold-start signposts (text heuristics, said so);
//! - `access`: 4 unique tool names and the manifest's reference-field binding, 4.1/4.2 and
//!   10.1-2 the access tools and their input schemas, 10.1-3 the manifest, Part II 4.2
//!   capability declarations;
//! - `loop_names`: 4.3, 10.1-4 loop names exist and match the effective capability map, no
//!   `plan` member, shared tools only through `languages[]`;
//! - `reserved`: 4.4, 10.1-5 reserved-name obligations and reserved JSON types;
//! - `annotations`: 4.5 (warnings);
//! - `schema`: 4.6, 10.1-6 permissive loop schemas;
//! - `program`: 5, 10.1-7 program declarations;
//! - `output`: 6 outputSchema present (warning) and accepting every shape of its tool's union;
//! - `stateless`: 8.1, 10.1-11 no `session` retention on a stateless deployment.

mod access;
mod annotations;
mod extension;
mod loop_names;
mod output;
mod program;
mod render;
mod reserved;
pub mod rules;
mod schema;
mod signposts;
mod stateless;

use std::collections::{BTreeMap, BTreeSet};

use pilotage_types::Stage;
use serde::Serialize;
use serde_json::{Map, Value};

pub use render::render_text;
pub use rules::{Rule, Severity, RULES};

/// One way the surface breaks Part III.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Finding {
    /// Stable id citing Part III, e.g. `10.1-4/loop-tool-missing` (the [`Rule::id`]).
    pub rule: &'static str,
    /// The rule's severity.
    pub severity: Severity,
    /// The tool concerned, if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool: Option<String>,
    /// JSON Pointer into the document concerned (the tool's listing entry, the manifest or
    /// the initialize result, as the message says).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pointer: Option<String>,
    /// What is wrong.
    pub message: String,
    /// What to do: the rule's remedy, sometimes followed by a hint specific to the finding.
    pub remedy: String,
}

impl Finding {
    /// A finding of `rule` with the rule's remedy.
    pub(crate) fn new(rule: &'static Rule, message: impl Into<String>) -> Self {
        Self {
            rule: rule.id,
            severity: rule.severity,
            tool: None,
            pointer: None,
            message: message.into(),
            remedy: rule.remedy.to_owned(),
        }
    }

    pub(crate) fn tool(mut self, tool: &str) -> Self {
        self.tool = Some(tool.to_owned());
        self
    }

    pub(crate) fn at(mut self, pointer: Option<String>) -> Self {
        self.pointer = pointer;
        self
    }

    /// Extends the rule's remedy with a hint for this finding.
    pub(crate) fn hint(mut self, hint: &str) -> Self {
        self.remedy = format!("{}: {hint}", self.remedy);
        self
    }
}

/// The documents of one server surface.
#[derive(Debug, Clone, Copy)]
pub struct Surface<'a> {
    /// The `tools/list` result: `{"tools": [...]}` or the array itself.
    pub tools: &'a Value,
    /// The manifest (Part II 5.1).
    pub manifest: &'a Value,
    /// The initialize result, when the revision has one.
    pub initialize: Option<&'a Value>,
    /// The deployment is stateless (MCP 2026-07-28 without sessions).
    pub stateless: bool,
}

/// The state of one run: the surface, its indexes, and the findings so far.
struct Linter<'a> {
    surface: Surface<'a>,
    /// The listed tools, in order.
    list: &'a [Value],
    /// The manifest's Language entries (empty when it has none).
    languages: &'a [Value],
    /// Each tool name with the first listing entry of that name (4/duplicate-tool-name
    /// reports the others).
    tools: BTreeMap<&'a str, (usize, &'a Value)>,
    findings: Vec<Finding>,
}

/// Lints `surface`; findings are sorted by tool, then severity, rule and pointer.
pub fn lint(surface: Surface<'_>) -> Vec<Finding> {
    let mut linter = Linter::new(surface);
    if let Some(initialize) = surface.initialize {
        extension::initialize(&mut linter, initialize);
        signposts::welcome_text(&mut linter, initialize);
    }
    access::duplicate_tool_names(&mut linter);
    let manifest_ok = access::manifest(&mut linter);
    stateless::session_retention(&mut linter);
    access::access_tools(&mut linter);
    annotations::access_tools(&mut linter);
    output::access_tools(&mut linter);
    if manifest_ok {
        loop_names::loop_tools(&mut linter);
    }
    let mut findings = linter.findings;
    findings.sort_by(|a, b| (&a.tool, a.severity, a.rule, &a.pointer).cmp(&(&b.tool, b.severity, b.rule, &b.pointer)));
    findings.dedup();
    findings
}

/// Whether `findings` has any error.
pub fn has_errors(findings: &[Finding]) -> bool {
    findings.iter().any(|f| f.severity == Severity::Error)
}

impl<'a> Linter<'a> {
    fn new(surface: Surface<'a>) -> Self {
        let list: &[Value] = match surface.tools {
            Value::Array(items) => items,
            other => other.get("tools").and_then(Value::as_array).map_or(&[], Vec::as_slice),
        };
        let mut tools = BTreeMap::new();
        for (index, tool) in list.iter().enumerate() {
            if let Some(name) = tool.get("name").and_then(Value::as_str) {
                tools.entry(name).or_insert((index, tool));
            }
        }
        let languages = surface
            .manifest
            .get("languages")
            .and_then(Value::as_array)
            .map_or(&[][..], Vec::as_slice);
        Self {
            surface,
            list,
            languages,
            tools,
            findings: Vec::new(),
        }
    }

    fn push(&mut self, finding: Finding) {
        self.findings.push(finding);
    }

    /// `/tools/<index><rest>` for the listed tool `name`.
    fn tool_pointer(&self, name: &str, rest: &str) -> Option<String> {
        self.tools.get(name).map(|(index, _)| format!("/tools/{index}{rest}"))
    }
}

/// The effective capability map of a Language: its own declaration, else the server's
/// (Part II 4.2). `true` or an object means declared.
fn declared(manifest: &Value, language: &Value, capability: &str) -> bool {
    let value = language
        .get("capabilities")
        .or_else(|| manifest.get("capabilities"))
        .and_then(|caps| caps.get(capability));
    matches!(value, Some(Value::Bool(true)) | Some(Value::Object(_)))
}

fn required_members(schema: &Value) -> BTreeSet<&str> {
    schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default()
}

/// A loop tool named by at least one Language, with what its checks share.
struct LoopTool<'a> {
    name: &'a str,
    tool: &'a Value,
    stage: Stage,
    /// The Languages whose loop object names it.
    serves: Vec<&'a Value>,
    serve_names: Vec<&'a str>,
    /// The inputSchema (`null` when absent).
    schema: &'a Value,
    properties: Map<String, Value>,
    required: BTreeSet<&'a str>,
    /// `/tools/<index>`.
    base: Option<String>,
    /// The program declaration's (argument, Language) pairs (validate and execute tools).
    program_arguments: Vec<(String, String)>,
}

impl LoopTool<'_> {
    /// A pointer into this tool's listing entry.
    fn pointer(&self, rest: &str) -> Option<String> {
        self.base.as_ref().map(|base| format!("{base}{rest}"))
    }

    /// Whether the inputSchema declares `member`.
    fn declares(&self, member: &str) -> bool {
        self.properties.contains_key(member)
    }

    /// Whether `member` is a program argument of the declaration.
    fn is_program_argument(&self, member: &str) -> bool {
        self.program_arguments.iter().any(|(argument, _)| argument == member)
    }

    /// Whether the declaration maps several program arguments (a shared tool, 4.3).
    fn shared(&self) -> bool {
        self.program_arguments.len() > 1
    }
}
