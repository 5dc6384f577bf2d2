//! The conformance linter: checks a whole Pilotage server surface (the `tools/list` result,
//! the manifest, optionally the initialize result) against the server requirements of
//! Part III 10.1 that these documents can show. Every [`Finding`] names its rule with a stable
//! id that cites Part III (`<section>/<slug>`), the tool and the JSON Pointer concerned, what
//! is wrong, and what to do.
//!
//! Checks by section (search for the rule id to find each):
//! - 1.2 extension declared in `capabilities.extensions` (warning), 2 full `_meta` key only;
//! - 3.2 initialize `_meta` value; 3.4 cold-start signposts (text heuristics, said so);
//! - 4, 10.1-2 access tools present, with the 4.1/4.2 input schemas; 10.1-3 manifest valid,
//!   `guides`/`catalog` bound to the fixed names; Part II 4.2 capability declarations;
//! - 4.3, 10.1-4 loop names exist and match the effective capability map, no `plan` member,
//!   shared tools only through `languages[]`;
//! - 4.4, 10.1-5 reserved-name obligations; 4.5 annotations (warnings);
//! - 4.6, 10.1-6 permissive loop schemas; 5, 10.1-7 program declarations;
//! - 6 outputSchema present (warning) and accepting every shape of its tool's union;
//! - 8.1, 10.1-11 no `session` retention on a stateless deployment.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

use crate::escape_pointer_token;
use serde::Serialize;
use serde_json::{json, Map, Value};

use crate::output_schema::ToolKind;
use crate::tool::AccessTool;
use crate::validate::pilotage;
use crate::{CATALOG_TOOL, EXTENSION_ID, GET_GUIDE_TOOL, MANIFEST_TOOL, META_KEY};

/// How bad a finding is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// A MUST of Part III is broken.
    Error,
    /// A SHOULD is not followed, or a heuristic is unsure.
    Warning,
}

impl fmt::Display for Severity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Error => "error",
            Self::Warning => "warning",
        })
    }
}

/// One way the surface breaks Part III.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Finding {
    /// Stable id citing Part III, e.g. `10.1-4/loop-tool-missing`.
    pub rule: &'static str,
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
    /// What to do.
    pub remedy: String,
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

struct Linter<'a> {
    surface: Surface<'a>,
    /// The manifest's Language entries (empty when it has none).
    languages: &'a [Value],
    tools: BTreeMap<String, (usize, &'a Value)>,
    findings: Vec<Finding>,
}

/// Lints `surface`; findings are sorted by tool, then rule.
pub fn lint(surface: Surface<'_>) -> Vec<Finding> {
    let list: &[Value] = match surface.tools {
        Value::Array(items) => items,
        other => other
            .get("tools")
            .and_then(Value::as_array)
            .map(Vec::as_slice)
            .unwrap_or(&[]),
    };
    let mut tools = BTreeMap::new();
    for (index, tool) in list.iter().enumerate() {
        if let Some(name) = tool.get("name").and_then(Value::as_str) {
            tools.entry(name.to_owned()).or_insert((index, tool));
        }
    }
    let languages = surface
        .manifest
        .get("languages")
        .and_then(Value::as_array)
        .map_or(&[][..], Vec::as_slice);
    let mut linter = Linter {
        surface,
        languages,
        tools,
        findings: Vec::new(),
    };
    linter.initialize();
    let manifest_ok = linter.manifest();
    linter.access_tools();
    if manifest_ok {
        linter.loop_tools();
    }
    linter.annotations_and_outputs();
    let mut findings = linter.findings;
    findings.sort_by(|a, b| (&a.tool, a.severity, a.rule, &a.pointer).cmp(&(&b.tool, b.severity, b.rule, &b.pointer)));
    findings.dedup();
    findings
}

/// Whether `findings` has any error.
pub fn has_errors(findings: &[Finding]) -> bool {
    findings.iter().any(|f| f.severity == Severity::Error)
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

impl<'a> Linter<'a> {
    #[allow(clippy::too_many_arguments)]
    fn push(
        &mut self,
        rule: &'static str,
        severity: Severity,
        tool: Option<&str>,
        pointer: Option<String>,
        message: String,
        remedy: impl Into<String>,
    ) {
        self.findings.push(Finding {
            rule,
            severity,
            tool: tool.map(str::to_owned),
            pointer,
            message,
            remedy: remedy.into(),
        });
    }

    fn tool_pointer(&self, name: &str, rest: &str) -> Option<String> {
        self.tools.get(name).map(|(index, _)| format!("/tools/{index}{rest}"))
    }

    // 1.2, 2, 3.2, 3.4 (welcome text): the initialize result.
    fn initialize(&mut self) {
        let Some(initialize) = self.surface.initialize else {
            return;
        };
        let extensions = initialize.pointer("/capabilities/extensions");
        if extensions
            .and_then(|e| e.get(EXTENSION_ID))
            .is_none_or(|settings| !settings.is_object())
        {
            self.push(
                "1.2/extension-undeclared",
                Severity::Warning,
                None,
                Some("/capabilities/extensions".into()),
                format!("the initialize result does not declare `{EXTENSION_ID}` in capabilities.extensions"),
                "declare {\"capabilities\": {\"extensions\": {\"io.github.jafarsa0/pilotage\": {}}}}; pilotage_manifest stays the guaranteed detection path",
            );
        }
        if let Some(Value::Object(meta)) = initialize.get("_meta") {
            self.shorthand_meta_keys(meta, None, "/_meta");
            if let Some(value) = meta.get(META_KEY) {
                let violations = pilotage()
                    .validate("InitializeMetaValue", value)
                    .expect("InitializeMetaValue exists");
                // The inline manifest is the one linted below: its problems are reported once, there.
                let inline_is_linted = value.get("manifest") == Some(self.surface.manifest);
                if let Err(errors) = violations {
                    for violation in errors.violations {
                        if inline_is_linted && violation.instance_pointer.starts_with("/manifest") {
                            continue;
                        }
                        self.push(
                            "3.2/initialize-meta-invalid",
                            Severity::Error,
                            None,
                            Some(format!("/_meta/{}{}", escape_pointer_token(META_KEY), violation.instance_pointer)),
                            format!("the initialize _meta value is invalid: {}", violation.message),
                            "carry {\"manifest\": <valid manifest>} and/or {\"manifest_uri\": \"pilotage://manifest\"} (Part III 3.2)",
                        );
                    }
                }
            }
        }
        let instructions = initialize
            .get("instructions")
            .and_then(Value::as_str)
            .unwrap_or_default();
        // "Pilotage" must be named in its own right, not only inside a tool name.
        let lower = instructions.to_lowercase();
        let without_tool_names = [MANIFEST_TOOL, GET_GUIDE_TOOL, CATALOG_TOOL]
            .iter()
            .fold(lower.clone(), |text, name| text.replace(name, ""));
        if !(without_tool_names.contains("pilotage") && lower.contains(MANIFEST_TOOL)) {
            self.push(
                "3.4/welcome-text",
                Severity::Error,
                None,
                Some("/instructions".into()),
                "the initialize instructions must name Pilotage and direct the agent to call pilotage_manifest first (heuristic: the text contains \"Pilotage\" or the extension identifier, and \"pilotage_manifest\")".into(),
                "add instructions such as \"This server speaks Pilotage: call pilotage_manifest first.\"",
            );
        }
    }

    fn shorthand_meta_keys(&mut self, meta: &Map<String, Value>, tool: Option<&str>, at: &str) {
        for key in meta.keys() {
            let lower = key.to_lowercase();
            // The shorthands Part III 2 forbids, and the dotted identifier of earlier documents
            // (1.1, compatibility note); other vendors' keys are none of Pilotage's business.
            if key != META_KEY && SHORTHAND_KEYS.contains(&lower.as_str()) {
                self.push(
                    "2/shorthand-meta-key",
                    Severity::Error,
                    tool,
                    Some(format!("{at}/{}", escape_pointer_token(key))),
                    format!("`_meta` key \"{key}\" is a shorthand; receivers must not read it as Pilotage metadata"),
                    "use the full key \"io.github.jafarsa0/pilotage\" only (Part III 2)",
                );
            }
        }
    }

    // 10.1-3, Part II 4.2, 4 bindings, 8.1: the manifest.
    fn manifest(&mut self) -> bool {
        let manifest = self.surface.manifest;
        let mut valid = true;
        if let Err(errors) = pilotage().validate("Manifest", manifest).expect("Manifest exists") {
            valid = false;
            for violation in errors.violations {
                // Reported below by their specific rules.
                let binding =
                    violation.instance_pointer.ends_with("/guides") || violation.instance_pointer.ends_with("/catalog");
                let capability = violation.schema_pointer.starts_with("/$defs/Manifest/anyOf")
                    && violation.instance_pointer.is_empty();
                if binding || capability {
                    continue;
                }
                self.push(
                    "10.1-3/manifest-invalid",
                    Severity::Error,
                    None,
                    Some(format!("/manifest{}", violation.instance_pointer)),
                    format!("the manifest violates the schema: {}", violation.message),
                    "return a manifest that validates against $defs/Manifest of the Pilotage 1.1 schema",
                );
            }
        }
        let languages = self.languages;
        for (index, language) in languages.iter().enumerate() {
            let at = format!("/manifest/languages/{index}");
            let name = language.get("name").and_then(Value::as_str).unwrap_or("?");
            if language.get("capabilities").is_none() && manifest.get("capabilities").is_none() {
                self.push(
                    "4.2/capability-declaration-missing",
                    Severity::Error,
                    None,
                    Some(at.clone()),
                    format!(
                        "Language {name} has no capability declaration, and the manifest declares none at server level"
                    ),
                    "declare `capabilities` on the Language or on the manifest (Part II 4.2)",
                );
            }
            if language.get("guides") != Some(&json!(GET_GUIDE_TOOL)) {
                self.push(
                    "4/guides-binding",
                    Severity::Error,
                    None,
                    Some(format!("{at}/guides")),
                    format!("Language {name}: `guides` must be \"{GET_GUIDE_TOOL}\" in the MCP binding"),
                    "set \"guides\": \"pilotage_get_guide\" (Part III 4)",
                );
            }
            let catalog_declared = declared(manifest, language, "catalog");
            match language.get("catalog") {
                Some(value) if value != &json!(CATALOG_TOOL) => self.push(
                    "4/catalog-binding",
                    Severity::Error,
                    None,
                    Some(format!("{at}/catalog")),
                    format!("Language {name}: `catalog` must be \"{CATALOG_TOOL}\" in the MCP binding"),
                    "set \"catalog\": \"pilotage_catalog\" (Part III 4)",
                ),
                None if catalog_declared => self.push(
                    "4/catalog-binding",
                    Severity::Error,
                    None,
                    Some(format!("{at}/catalog")),
                    format!("Language {name} declares catalog but has no `catalog` member"),
                    "set \"catalog\": \"pilotage_catalog\" (present iff catalog is declared)",
                ),
                _ => {}
            }
            if self.surface.stateless && language.get("retention") == Some(&json!("session")) {
                self.push(
                    "8.1/session-retention-stateless",
                    Severity::Error,
                    None,
                    Some(format!("{at}/retention")),
                    format!("Language {name} declares retention \"session\" on a stateless deployment, which has no session"),
                    "declare an ISO 8601 duration (e.g. \"PT1H\") or \"none\" (Part III 8.1)",
                );
            }
        }
        valid || !languages.is_empty()
    }

    // 4, 10.1-2: the fixed access tools.
    fn access_tools(&mut self) {
        let manifest = self.surface.manifest;
        let languages = self.languages;
        let any_catalog = languages.iter().any(|language| declared(manifest, language, "catalog"));
        for access in AccessTool::ALL {
            let name = access.name();
            let Some((_, tool)) = self.tools.get(name).copied() else {
                let required = access != AccessTool::Catalog || any_catalog;
                if required {
                    self.push(
                        "10.1-2/access-tool-missing",
                        Severity::Error,
                        Some(name),
                        None,
                        format!("tools/list has no `{name}`"),
                        "expose the fixed access tool (pilotage_types::AccessTool)",
                    );
                }
                continue;
            };
            if access == AccessTool::Catalog && !any_catalog {
                self.push(
                    "4.2/catalog-tool-unexpected",
                    Severity::Error,
                    Some(name),
                    self.tool_pointer(name, ""),
                    "pilotage_catalog is exposed but no Language declares catalog".into(),
                    "expose pilotage_catalog exactly when some Language declares catalog (Part III 4.2)",
                );
            }
            let input = tool.get("inputSchema").cloned().unwrap_or(Value::Null);
            let matches = match access {
                AccessTool::Manifest => {
                    input.get("type") == Some(&json!("object")) && required_members(&input).is_empty()
                }
                _ => without_annotations(&input) == without_annotations(&access.input_schema()),
            };
            if !matches {
                self.push(
                    "10.1-2/access-input-schema",
                    Severity::Error,
                    Some(name),
                    self.tool_pointer(name, "/inputSchema"),
                    format!("the inputSchema of {name} is not the one Part III defines"),
                    match access {
                        AccessTool::Manifest => "use an object schema with no required members (Part III 3.1)",
                        AccessTool::GetGuide => "use the inputSchema printed in Part III 4.1 exactly",
                        AccessTool::Catalog => "use the inputSchema printed in Part III 4.2 exactly",
                    },
                );
            }
            let description = tool
                .get("description")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_lowercase();
            let (ok, rule, remedy) = match access {
                AccessTool::Manifest => (
                    ["first", "start", "begin", "entry point"].iter().any(|word| description.contains(word)),
                    "3.4/entry-point-description",
                    "say that this tool is the starting point: call it first (heuristic: \"first\", \"start\", \"begin\" or \"entry point\")",
                ),
                AccessTool::GetGuide => (
                    description.contains("learn") && description.contains("guide"),
                    "3.4/stage-description",
                    "say that it serves the learn stage, the guides (heuristic: \"learn\" and \"guide\")",
                ),
                AccessTool::Catalog => (
                    (description.contains("lookup") || description.contains("look up"))
                        && description.contains("catalog"),
                    "3.4/stage-description",
                    "say that it serves the lookup stage, the catalog (heuristic: \"lookup\" and \"catalog\")",
                ),
            };
            if !ok {
                self.push(
                    rule,
                    Severity::Error,
                    Some(name),
                    self.tool_pointer(name, "/description"),
                    format!("the description of {name} lacks its Part III 3.4 signpost"),
                    remedy,
                );
            }
        }
    }

    // 4.3 to 4.6, 5: loop tools.
    fn loop_tools(&mut self) {
        let manifest = self.surface.manifest;
        let languages = self.languages;
        let known_languages: BTreeSet<&str> = languages
            .iter()
            .filter_map(|l| l.get("name").and_then(Value::as_str))
            .collect();
        // tool name -> (stage, languages using it)
        let mut uses: BTreeMap<String, (&'static str, Vec<usize>)> = BTreeMap::new();
        for (index, language) in languages.iter().enumerate() {
            let name = language.get("name").and_then(Value::as_str).unwrap_or("?");
            let at = format!("/manifest/languages/{index}/loop");
            let Some(Value::Object(loop_object)) = language.get("loop") else {
                continue;
            };
            if loop_object.contains_key("plan") {
                self.push(
                    "4.3/plan-loop-member",
                    Severity::Error,
                    None,
                    Some(format!("{at}/plan")),
                    format!("Language {name}: the loop object has a `plan` member; the plan is returned by the validate tool"),
                    "remove `plan` from the loop object (Part III 4.3)",
                );
            }
            for (stage, capability) in [
                ("validate", "validate"),
                ("execute", "execute"),
                ("trace", "trace_fetch"),
            ] {
                let has_member = loop_object.contains_key(stage);
                let has_capability = stage == "validate" || declared(manifest, language, capability);
                if has_member != has_capability {
                    self.push(
                        "4.3/loop-capability-mismatch",
                        Severity::Error,
                        None,
                        Some(format!("{at}/{stage}")),
                        if has_member {
                            format!("Language {name} names a {stage} tool but does not declare {capability}")
                        } else {
                            format!("Language {name} declares {capability} but its loop object names no {stage} tool")
                        },
                        "make the loop object's members correspond exactly to the effective capability map (Part III 4.3)",
                    );
                }
                let Some(tool_name) = loop_object.get(stage).and_then(Value::as_str) else {
                    continue;
                };
                if !self.tools.contains_key(tool_name) {
                    self.push(
                        "10.1-4/loop-tool-missing",
                        Severity::Error,
                        Some(tool_name),
                        Some(format!("{at}/{stage}")),
                        format!("Language {name} declares {stage} tool `{tool_name}`, which is not in tools/list"),
                        "expose the tool, or correct the name in the loop object (Part III 4.3)",
                    );
                    continue;
                }
                let entry = uses.entry(tool_name.to_owned()).or_insert((stage, Vec::new()));
                entry.1.push(index);
            }
        }
        for (tool_name, (stage, users)) in uses {
            let (_, tool) = self.tools[&tool_name];
            self.loop_tool(&tool_name, tool, stage, &users, languages, &known_languages);
        }
    }

    fn loop_tool(
        &mut self,
        name: &str,
        tool: &Value,
        stage: &'static str,
        users: &[usize],
        languages: &[Value],
        known: &BTreeSet<&str>,
    ) {
        let manifest = self.surface.manifest;
        let schema = tool.get("inputSchema").cloned().unwrap_or(Value::Null);
        let properties = schema
            .get("properties")
            .and_then(Value::as_object)
            .cloned()
            .unwrap_or_default();
        let required = required_members(&schema);
        let serves: Vec<&Value> = users.iter().map(|i| &languages[*i]).collect();
        let serve_names: Vec<&str> = serves
            .iter()
            .filter_map(|l| l.get("name").and_then(Value::as_str))
            .collect();
        let base = self.tool_pointer(name, "");
        let pointer = |rest: &str| base.as_ref().map(|b| format!("{b}{rest}"));

        // 4.6: no additionalProperties: false at any depth.
        let mut closed = Vec::new();
        find_closed(&schema, "/inputSchema".to_owned(), &mut closed);
        for at in closed {
            self.push(
                "4.6/additional-properties-false",
                Severity::Error,
                Some(name),
                pointer(&at),
                "a loop-tool schema sets additionalProperties: false".into(),
                "remove it: receivers ignore unknown members, and schema rejection would turn value faults into carrier errors (Part III 4.6)",
            );
        }
        // 4.6: reserved members constrained by JSON type only.
        for (member, member_schema) in &properties {
            if !crate::names::is_reserved_name(member) {
                continue;
            }
            let extra: Vec<&String> = member_schema
                .as_object()
                .map(|o| {
                    o.keys()
                        .filter(|k| !matches!(k.as_str(), "type" | "description" | "title" | "$comment"))
                        .collect()
                })
                .unwrap_or_default();
            if !extra.is_empty() {
                self.push(
                    "4.6/reserved-member-constrained",
                    Severity::Error,
                    Some(name),
                    pointer(&format!("/inputSchema/properties/{}", escape_pointer_token(member))),
                    format!(
                        "reserved member `{member}` is constrained beyond its JSON type ({})",
                        extra.iter().map(|k| k.as_str()).collect::<Vec<_>>().join(", ")
                    ),
                    "constrain reserved members by `type` only, e.g. {\"type\": \"string\"} (Part III 4.6)",
                );
            }
        }

        // 5: the program declaration (validate and execute tools).
        let mut program_arguments: Vec<(String, String)> = Vec::new();
        if stage != "trace" {
            let meta = tool.get("_meta").and_then(Value::as_object);
            if let Some(meta) = meta {
                self.shorthand_meta_keys(meta, Some(name), &pointer("/_meta").unwrap_or_default());
            }
            match meta.and_then(|m| m.get(META_KEY)) {
                None => self.push(
                    "5/program-declaration-missing",
                    Severity::Error,
                    Some(name),
                    pointer("/_meta"),
                    format!("{stage} tool `{name}` has no _meta[\"{META_KEY}\"] program declaration"),
                    "declare {\"argument\": ..., \"language\": ...} (or languages[]) under the full key (Part III 5)",
                ),
                Some(declaration) => {
                    if let Err(errors) = pilotage()
                        .validate("ProgramDeclaration", declaration)
                        .expect("ProgramDeclaration exists")
                    {
                        self.push(
                            "5/program-declaration-invalid",
                            Severity::Error,
                            Some(name),
                            pointer(&format!("/_meta/{}", escape_pointer_token(META_KEY))),
                            format!(
                                "the program declaration is invalid: {}",
                                errors
                                    .violations
                                    .iter()
                                    .map(|v| v.message.clone())
                                    .collect::<Vec<_>>()
                                    .join("; ")
                            ),
                            "use {\"argument\", \"language\"} or {\"languages\": [two or more]} (Part III 5)",
                        );
                    }
                    if let Some(entries) = declaration.get("languages").and_then(Value::as_array) {
                        for entry in entries {
                            if let (Some(a), Some(l)) = (
                                entry.get("argument").and_then(Value::as_str),
                                entry.get("language").and_then(Value::as_str),
                            ) {
                                program_arguments.push((a.to_owned(), l.to_owned()));
                            }
                        }
                    } else if let (Some(a), Some(l)) = (
                        declaration.get("argument").and_then(Value::as_str),
                        declaration.get("language").and_then(Value::as_str),
                    ) {
                        program_arguments.push((a.to_owned(), l.to_owned()));
                    }
                }
            }
            let mut seen = BTreeSet::new();
            for (argument, language) in &program_arguments {
                if !seen.insert(argument.clone()) {
                    self.push(
                        "5/duplicate-program-argument",
                        Severity::Error,
                        Some(name),
                        pointer(&format!("/_meta/{}", escape_pointer_token(META_KEY))),
                        format!("argument `{argument}` is declared for more than one Language"),
                        "give each Language its own program argument (Part III 4.3, 5)",
                    );
                }
                if !properties.contains_key(argument) {
                    self.push(
                        "5/program-argument-undeclared",
                        Severity::Error,
                        Some(name),
                        pointer("/inputSchema/properties"),
                        format!("program argument `{argument}` is not in the inputSchema"),
                        "declare the program argument in inputSchema.properties (Part III 4.4, 5)",
                    );
                }
                if !known.contains(language.as_str()) {
                    self.push(
                        "5/language-unknown",
                        Severity::Error,
                        Some(name),
                        pointer(&format!("/_meta/{}", escape_pointer_token(META_KEY))),
                        format!("declared Language {language} is not in the manifest"),
                        "declare only Languages the manifest lists (Part III 5)",
                    );
                }
            }
            // 4.3: a tool shared by several Languages only through languages[].
            if serves.len() > 1 {
                let covered = serve_names
                    .iter()
                    .all(|l| program_arguments.iter().any(|(_, declared)| declared == l));
                if program_arguments.len() < 2 || !covered {
                    self.push(
                        "4.3/shared-tool-without-languages",
                        Severity::Error,
                        Some(name),
                        pointer(&format!("/_meta/{}", escape_pointer_token(META_KEY))),
                        format!("`{name}` serves {} but does not map a distinct program argument to each in languages[]", serve_names.join(", ")),
                        "share a loop tool only through distinct program arguments declared in languages[] (Part III 4.3, 5)",
                    );
                }
            }
        }
        let shared = program_arguments.len() > 1;

        // 4.4: reserved-name obligations, per stage.
        let missing = |member: &str| !properties.contains_key(member);
        match stage {
            "execute" => {
                if missing("trace_level") {
                    self.push(
                        "10.1-5/trace-level-missing",
                        Severity::Error,
                        Some(name),
                        pointer("/inputSchema/properties"),
                        "the execute tool does not declare `trace_level`".into(),
                        "declare \"trace_level\": {\"type\": \"string\"} (Part III 4.4 rule 5)",
                    );
                }
                if serves.iter().any(|l| declared(manifest, l, "catalog")) && missing("expected_catalog_version") {
                    self.push(
                        "10.1-5/expected-catalog-version-missing",
                        Severity::Error,
                        Some(name),
                        pointer("/inputSchema/properties"),
                        "the execute tool of a catalog-bearing Language does not declare `expected_catalog_version`"
                            .into(),
                        "declare \"expected_catalog_version\": {\"type\": \"string\"} (Part III 4.4 rule 6)",
                    );
                }
                let both = serves.iter().any(|l| l.get("execution") == Some(&json!("both")));
                if both && missing("mode") {
                    self.push(
                        "4.4/mode-missing",
                        Severity::Error,
                        Some(name),
                        pointer("/inputSchema/properties"),
                        "a Language with execution \"both\" must accept `mode`".into(),
                        "declare \"mode\": {\"type\": \"string\"} (Part III 4.4)",
                    );
                }
                if !both && !missing("mode") {
                    self.push(
                        "4.4/mode-unexpected",
                        Severity::Error,
                        Some(name),
                        pointer("/inputSchema/properties/mode"),
                        "`mode` is declared but no Language served has execution \"both\"".into(),
                        "remove `mode`, or declare execution \"both\" (Part III 4.4)",
                    );
                }
                let promotes = serves.iter().any(|l| {
                    l.get("promotion_authority").is_some()
                        || matches!(l.get("execution").and_then(Value::as_str), Some("deploy" | "both"))
                });
                if promotes && missing("program_ref") {
                    self.push("4.6/program-ref-undeclared", Severity::Warning, Some(name), pointer("/inputSchema/properties"),
                        "the Language appears to support promoted programs (promotion_authority or deploy execution) but the execute tool does not declare `program_ref`".into(),
                        "declare \"program_ref\": {\"type\": \"string\"} if promoted programs can be executed (Part III 4.6)");
                }
                for runnable in program_arguments.iter().map(|(a, _)| a.as_str()).chain(["program_ref"]) {
                    if required.contains(runnable) {
                        self.push("4.6/runnable-required", Severity::Error, Some(name), pointer("/inputSchema/required"),
                            format!("the execute tool marks `{runnable}` required"),
                            "require neither the program argument nor program_ref: runnable selection happens after schema validation (Part III 4.6)");
                    }
                }
            }
            "validate" => {
                for (argument, _) in &program_arguments {
                    match (shared, required.contains(argument.as_str())) {
                        (false, false) => self.push(
                            "10.1-5/program-argument-not-required",
                            Severity::Error,
                            Some(name),
                            pointer("/inputSchema/required"),
                            format!("the single-Language validate tool does not mark `{argument}` required"),
                            "add the program argument to `required` (Part III 4.4 rule 8)",
                        ),
                        (true, true) => self.push(
                            "10.1-5/shared-program-argument-required",
                            Severity::Error,
                            Some(name),
                            pointer("/inputSchema/required"),
                            format!("the shared validate tool marks program argument `{argument}` required"),
                            "mark none of a shared tool's program arguments required (Part III 4.4 rule 9)",
                        ),
                        _ => {}
                    }
                }
            }
            _ => {
                if missing("run_id") || !required.contains("run_id") {
                    self.push(
                        "10.1-5/run-id-missing",
                        Severity::Error,
                        Some(name),
                        pointer("/inputSchema"),
                        "the trace-fetch tool does not declare `run_id` as a required member".into(),
                        "declare \"run_id\": {\"type\": \"string\"} and list it in `required` (Part III 4.4 rule 7)",
                    );
                }
            }
        }

        // 3.4: the description names the stage and every Language.
        let description = tool.get("description").and_then(Value::as_str).unwrap_or_default();
        let stage_kind = match stage {
            "validate" => crate::Stage::Validate,
            "execute" => crate::Stage::Execute,
            _ => crate::Stage::Trace,
        };
        let missing_languages: Vec<&&str> = serve_names.iter().filter(|l| !description.contains(**l)).collect();
        if !crate::names::names_stage(description, stage_kind) || !missing_languages.is_empty() {
            self.push(
                "3.4/stage-description",
                Severity::Error,
                Some(name),
                pointer("/description"),
                format!(
                    "the description must state the {} stage and the Language(s) {} (heuristic: the stage's verb and each Language identifier appear verbatim)",
                    stage_kind.label(),
                    serve_names.join(", ")
                ),
                format!("state the stage and every Language served, e.g. \"Pilotage {} tool for {}.\"", stage_kind.label(), serve_names.join(", ")),
            );
        }
        // 4.5: read-only hints on validate and trace tools.
        if stage != "execute" && tool.pointer("/annotations/readOnlyHint") != Some(&json!(true)) {
            self.push(
                "4.5/read-only-hint",
                Severity::Warning,
                Some(name),
                pointer("/annotations"),
                format!("the {} tool does not declare readOnlyHint: true", stage_kind.label()),
                "declare {\"readOnlyHint\": true} (Part III 4.5)",
            );
        }
        self.output_schema(name, tool, ToolKind::from(stage_kind));
    }

    // 4.5 for the access tools; 6 for them too.
    fn annotations_and_outputs(&mut self) {
        for access in AccessTool::ALL {
            let Some((_, tool)) = self.tools.get(access.name()).copied() else {
                continue;
            };
            if tool.pointer("/annotations/readOnlyHint") != Some(&json!(true)) {
                self.push(
                    "4.5/read-only-hint",
                    Severity::Warning,
                    Some(access.name()),
                    self.tool_pointer(access.name(), "/annotations"),
                    format!("{} does not declare readOnlyHint: true", access.name()),
                    "declare {\"readOnlyHint\": true} (Part III 4.5)",
                );
            }
            self.output_schema(access.name(), tool, access.kind());
        }
    }

    // 6: outputSchema present, and accepting every shape of the tool's union.
    fn output_schema(&mut self, name: &str, tool: &Value, kind: ToolKind) {
        let Some(schema) = tool.get("outputSchema") else {
            self.push(
                "6/output-schema-missing",
                Severity::Warning,
                Some(name),
                self.tool_pointer(name, ""),
                format!("`{name}` declares no outputSchema"),
                "declare the tool's union, e.g. pilotage_types::ToolKind::output_schema (Part III 6)",
            );
            return;
        };
        let validator = match jsonschema::validator_for(schema) {
            Ok(validator) => validator,
            Err(error) => {
                self.push(
                    "6/output-schema-incomplete",
                    Severity::Error,
                    Some(name),
                    self.tool_pointer(name, "/outputSchema"),
                    format!("the outputSchema does not compile: {error}"),
                    "declare the tool's union (Part III 6)",
                );
                return;
            }
        };
        let mut samples = shape_samples(kind);
        // The server's own manifest is a shape this tool returns (when it is valid at all;
        // an invalid manifest is reported by the manifest rules).
        if kind == ToolKind::Manifest && pilotage().is_valid("Manifest", self.surface.manifest).unwrap_or(false) {
            samples.push(("the manifest itself", self.surface.manifest.clone()));
        }
        let rejected: Vec<&str> = samples
            .iter()
            .filter(|(_, sample)| !validator.is_valid(sample))
            .map(|(shape, _)| *shape)
            .collect();
        if !rejected.is_empty() {
            self.push(
                "6/output-schema-incomplete",
                Severity::Error,
                Some(name),
                self.tool_pointer(name, "/outputSchema"),
                format!("the outputSchema rejects shapes this tool can return: {}", rejected.join(", ")),
                "make it an anyOf of every response shape and the request error (pilotage_types::ToolKind::output_schema, Part III 6)",
            );
        }
    }
}

/// `_meta` keys that a sender must not use for Pilotage metadata (Part III 1.1, 2).
const SHORTHAND_KEYS: &[&str] = &[
    "pilotage",
    "io.github.jafarsa0.pilotage",
    "jafarsa0/pilotage",
    "jafarsa0.pilotage",
];

/// `schema` without annotation keywords (`description`, `title`, `$comment`, `examples`,
/// `$schema`) at any depth: an access tool's inputSchema may document its members and still be
/// the one Part III 4.1/4.2 defines.
fn without_annotations(schema: &Value) -> Value {
    match schema {
        Value::Object(object) => Value::Object(
            object
                .iter()
                .filter(|(key, _)| {
                    !matches!(
                        key.as_str(),
                        "description" | "title" | "$comment" | "examples" | "$schema"
                    )
                })
                .map(|(key, value)| {
                    let value = if matches!(key.as_str(), "enum" | "const" | "default") {
                        value.clone()
                    } else {
                        without_annotations(value)
                    };
                    (key.clone(), value)
                })
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.iter().map(without_annotations).collect()),
        other => other.clone(),
    }
}

fn find_closed(schema: &Value, at: String, out: &mut Vec<String>) {
    match schema {
        Value::Object(object) => {
            for (key, value) in object {
                let child = format!("{at}/{}", escape_pointer_token(key));
                if matches!(key.as_str(), "additionalProperties" | "unevaluatedProperties")
                    && value == &Value::Bool(false)
                {
                    out.push(child.clone());
                }
                if !matches!(key.as_str(), "const" | "enum" | "default" | "examples") {
                    find_closed(value, child, out);
                }
            }
        }
        Value::Array(items) => {
            for (index, item) in items.iter().enumerate() {
                find_closed(item, format!("{at}/{index}"), out);
            }
        }
        _ => {}
    }
}

/// One valid instance of every shape a tool of `kind` can return (Part III 6).
fn shape_samples(kind: ToolKind) -> Vec<(&'static str, Value)> {
    let hints = json!({"readOnly": true, "destructive": false, "openWorld": false});
    let outcome = json!({"ok": true, "status": "success", "error": null});
    let trace = json!({"run_id": "r", "level": "summary", "steps": [{"id": "s", "outcome": outcome}]});
    let guide = json!({"id": "g", "title": "t", "level": "core", "topics": [], "language": "a/b", "version": "1", "size_bytes": 1});
    let mut fetched = guide.clone();
    fetched["body"] = json!("text");
    let entry = json!({"id": "c", "kind": "capability", "name": "n", "risk": "safe", "risk_hints": hints});
    let error = (
        "a request error",
        json!({"error": {"kind": "not_found", "message": "m"}, "catalog_version": "cv"}),
    );
    let mut samples = match kind {
        ToolKind::Manifest => vec![(
            "a manifest",
            json!({"pilotage": "1.1", "capabilities": {"validate": true},
            "languages": [{"name": "a/b", "title": "t", "guides": "pilotage_get_guide", "loop": {"validate": "v"}, "locator": "json-pointer"}]}),
        )],
        ToolKind::GetGuide => vec![
            ("a guide index", json!({"guides": [guide]})),
            ("a fetched guide", json!({"guide": fetched})),
        ],
        ToolKind::Catalog => vec![
            ("a catalog list", json!({"items": [entry], "catalog_version": "cv"})),
            ("a catalog get", json!({"entry": entry, "catalog_version": "cv"})),
            (
                "a catalog changed_since",
                json!({"catalog_version": "cv", "changes": [{"id": "c", "change": "added"}]}),
            ),
        ],
        ToolKind::Validate => vec![
            (
                "a valid result",
                json!({"valid": true, "diagnostics": [], "catalog_version": "cv",
                    "plan": {"steps": [], "max_risk": "safe", "max_risk_hints": hints}}),
            ),
            (
                "diagnostics",
                json!({"valid": false, "catalog_version": "cv",
                    "diagnostics": [{"severity": "error", "code": "c", "path": "/x", "message": "m"}]}),
            ),
        ],
        ToolKind::Execute => vec![
            (
                "a run outcome",
                json!({"run_id": "r", "outcome": outcome, "output": {}, "trace": trace}),
            ),
            (
                "a failed run",
                json!({"run_id": "r", "outcome": {"ok": false, "status": "validation_error", "error": "e"}, "diagnostics": []}),
            ),
        ],
        ToolKind::Trace => vec![(
            "a fetched trace",
            json!({"run_id": "r", "outcome": outcome, "trace": trace}),
        )],
    };
    samples.push(error);
    samples
}

/// Renders findings as text grouped by tool, ending with a count line.
pub fn render_text(findings: &[Finding]) -> String {
    use std::fmt::Write as _;
    let mut out = String::new();
    let mut current: Option<Option<&str>> = None;
    for finding in findings {
        let tool = finding.tool.as_deref();
        if current != Some(tool) {
            let _ = writeln!(
                out,
                "{}:",
                tool.map_or_else(|| "surface (manifest, initialize)".to_owned(), |t| format!("tool {t}"))
            );
            current = Some(tool);
        }
        let at = finding
            .pointer
            .as_deref()
            .map(|p| format!(" at {p}"))
            .unwrap_or_default();
        let _ = writeln!(
            out,
            "  {} [{}]{at}: {}\n    fix: {}",
            finding.severity, finding.rule, finding.message, finding.remedy
        );
    }
    let errors = findings.iter().filter(|f| f.severity == Severity::Error).count();
    let warnings = findings.len() - errors;
    let _ = writeln!(out, "{errors} error(s), {warnings} warning(s)");
    out
}
