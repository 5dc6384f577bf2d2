//! The rule table: every rule the linter checks, with its stable id, the Part III section
//! whose text it enforces, its severity, what it requires and what to do about a breach.
//!
//! An id is `<citation>/<slug>`. The citation is the section of the rule's text (`4.6`), or
//! `10.1-N`, the server-conformance requirement N of Part III 10.1, when the rule was filed
//! under that requirement; `section` then names the place of the text that 10.1-N refers to
//! (`10.1-5/trace-level-missing` enforces `4.4 rule 5`). One id, `4.2/capability-declaration-
//! missing`, cites Part II 4.2 (the capability map), and its `section` says so. Ids never
//! change: tests and users filter on them.
//!
//! [`RULES`] lists every rule, in section order: a report of "every rule checked" (passed or
//! not) is a walk over it.

use std::fmt;

use serde::Serialize;

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

/// One rule of the linter.
#[derive(Debug, PartialEq, Eq)]
pub struct Rule {
    /// Stable id citing Part III, e.g. `10.1-4/loop-tool-missing`.
    pub id: &'static str,
    /// Where the rule's text is, e.g. `4.4 rule 5` or `4.6`.
    pub section: &'static str,
    /// The severity of every finding of this rule.
    pub severity: Severity,
    /// What the rule requires, in one sentence.
    pub summary: &'static str,
    /// What to do about a finding; a finding may add a specific hint after it.
    pub remedy: &'static str,
}

// 1.2 Negotiation
/// The initialize result declares the extension.
pub const EXTENSION_UNDECLARED: Rule = Rule {
    id: "1.2/extension-undeclared",
    section: "1.2",
    severity: Severity::Warning,
    summary: "The initialize result declares the extension identifier in capabilities.extensions.",
    remedy: "declare {\"capabilities\": {\"extensions\": {\"io.github.jafarsa0/pilotage\": {}}}}; pilotage_manifest stays the guaranteed detection path",
};

// 2 The _meta namespace
/// No shorthand `_meta` key.
pub const SHORTHAND_META_KEY: Rule = Rule {
    id: "2/shorthand-meta-key",
    section: "2",
    severity: Severity::Error,
    summary: "Pilotage metadata is carried under the full `_meta` key only, never a shorthand.",
    remedy: "use the full key \"io.github.jafarsa0/pilotage\" only (Part III 2)",
};

// 3.2 Optional discovery accelerators
/// The initialize `_meta` value is valid.
pub const INITIALIZE_META_INVALID: Rule = Rule {
    id: "3.2/initialize-meta-invalid",
    section: "3.2",
    severity: Severity::Error,
    summary: "The initialize result's `_meta` value carries a valid inline manifest and/or the manifest URI.",
    remedy: "carry {\"manifest\": <valid manifest>} and/or {\"manifest_uri\": \"pilotage://manifest\"} (Part III 3.2)",
};

// 3.4 Cold start
/// The welcome text.
pub const WELCOME_TEXT: Rule = Rule {
    id: "3.4/welcome-text",
    section: "3.4",
    severity: Severity::Error,
    summary:
        "The initialize instructions name Pilotage and direct the agent to call pilotage_manifest first (heuristic).",
    remedy: "add instructions such as \"This server speaks Pilotage: call pilotage_manifest first.\"",
};

/// The entry-point description of pilotage_manifest.
pub const ENTRY_POINT_DESCRIPTION: Rule = Rule {
    id: "3.4/entry-point-description",
    section: "3.4",
    severity: Severity::Error,
    summary: "pilotage_manifest's description says it is the starting point (heuristic).",
    remedy: "say that this tool is the starting point: call it first (heuristic: \"first\", \"start\", \"begin\" or \"entry point\")",
};

/// The stage descriptions of the other tools.
pub const STAGE_DESCRIPTION: Rule = Rule {
    id: "3.4/stage-description",
    section: "3.4",
    severity: Severity::Error,
    summary: "Every other Pilotage tool's description states its stage, and a loop tool's every Language it serves (heuristic).",
    remedy: "state the tool's stage in its description (Part III 3.4)",
};

// 4 Tool surface
/// Tool names are unique.
pub const DUPLICATE_TOOL_NAME: Rule = Rule {
    id: "4/duplicate-tool-name",
    section: "4",
    severity: Severity::Error,
    summary: "Every tool of tools/list has its own name: MCP requires unique names, and every Pilotage tool is invoked by its name through tools/call.",
    remedy: "rename or remove the later tool: a client calls one of them, and which one is not defined (Part III 4; MCP tools/list)",
};

/// The `guides` reference field binding.
pub const GUIDES_BINDING: Rule = Rule {
    id: "4/guides-binding",
    section: "4",
    severity: Severity::Error,
    summary: "A Language's `guides` field is \"pilotage_get_guide\" in the MCP binding.",
    remedy: "set \"guides\": \"pilotage_get_guide\" (Part III 4)",
};

/// The `catalog` reference field binding.
pub const CATALOG_BINDING: Rule = Rule {
    id: "4/catalog-binding",
    section: "4",
    severity: Severity::Error,
    summary: "A Language's `catalog` field is \"pilotage_catalog\", present iff it declares catalog.",
    remedy: "set \"catalog\": \"pilotage_catalog\" (Part III 4)",
};

// 4.2 pilotage_catalog; Part II 4.2 capability declarations
/// pilotage_catalog exposed only when a Language declares catalog.
pub const CATALOG_TOOL_UNEXPECTED: Rule = Rule {
    id: "4.2/catalog-tool-unexpected",
    section: "4.2",
    severity: Severity::Error,
    summary: "pilotage_catalog is exposed exactly when at least one Language declares catalog.",
    remedy: "expose pilotage_catalog exactly when some Language declares catalog (Part III 4.2)",
};

/// Every Language has an effective capability map.
pub const CAPABILITY_DECLARATION_MISSING: Rule = Rule {
    id: "4.2/capability-declaration-missing",
    section: "Part II 4.2",
    severity: Severity::Error,
    summary: "Every Language has a capability declaration, its own or the manifest's.",
    remedy: "declare `capabilities` on the Language or on the manifest (Part II 4.2)",
};

// 4.3 Loop tools
/// No `plan` loop member.
pub const PLAN_LOOP_MEMBER: Rule = Rule {
    id: "4.3/plan-loop-member",
    section: "4.3",
    severity: Severity::Error,
    summary: "The loop object has no `plan` member: the plan is returned by the validate tool.",
    remedy: "remove `plan` from the loop object (Part III 4.3)",
};

/// Loop members match the effective capability map.
pub const LOOP_CAPABILITY_MISMATCH: Rule = Rule {
    id: "4.3/loop-capability-mismatch",
    section: "4.3",
    severity: Severity::Error,
    summary: "The loop object's members correspond exactly to the Language's effective capability map.",
    remedy: "make the loop object's members correspond exactly to the effective capability map (Part III 4.3)",
};

/// A shared loop tool maps a distinct argument to each Language.
pub const SHARED_TOOL_WITHOUT_LANGUAGES: Rule = Rule {
    id: "4.3/shared-tool-without-languages",
    section: "4.3",
    severity: Severity::Error,
    summary: "A loop tool shared by several Languages maps a distinct program argument to each in languages[].",
    remedy: "share a loop tool only through distinct program arguments declared in languages[] (Part III 4.3, 5)",
};

// 4.4 Reserved argument names
/// `mode` where execution is "both".
pub const MODE_MISSING: Rule = Rule {
    id: "4.4/mode-missing",
    section: "4.4",
    severity: Severity::Error,
    summary: "The execute tool of a Language with execution \"both\" accepts `mode`.",
    remedy: "declare \"mode\": {\"type\": \"string\"} (Part III 4.4)",
};

/// No `mode` where no Language has execution "both".
pub const MODE_UNEXPECTED: Rule = Rule {
    id: "4.4/mode-unexpected",
    section: "4.4",
    severity: Severity::Error,
    summary: "`mode` is declared only where a Language served has execution \"both\".",
    remedy: "remove `mode`, or declare execution \"both\" (Part III 4.4)",
};

/// A reserved member has its reserved JSON type.
pub const RESERVED_MEMBER_TYPE: Rule = Rule {
    id: "4.4/reserved-member-type",
    section: "4.4 rule 3",
    severity: Severity::Error,
    summary: "A declared reserved member has the JSON type of its Part II member (optionally also \"null\"), or no `type` at all: a reserved name is not used for another purpose (4.4 rule 3; 4.6 constrains it by that JSON type only).",
    remedy: "declare the reserved member with its JSON type, e.g. \"trace_level\": {\"type\": \"string\"}, \"test_run\": {\"type\": \"boolean\"} (Part III 4.4, 4.6)",
};

/// Every execute tool declares `trace_level`.
pub const TRACE_LEVEL_MISSING: Rule = Rule {
    id: "10.1-5/trace-level-missing",
    section: "4.4 rule 5",
    severity: Severity::Error,
    summary: "Every execute tool declares `trace_level`.",
    remedy: "declare \"trace_level\": {\"type\": \"string\"} (Part III 4.4 rule 5)",
};

/// A catalog-bearing Language's execute tool declares `expected_catalog_version`.
pub const EXPECTED_CATALOG_VERSION_MISSING: Rule = Rule {
    id: "10.1-5/expected-catalog-version-missing",
    section: "4.4 rule 6",
    severity: Severity::Error,
    summary: "The execute tool of a catalog-bearing Language declares `expected_catalog_version`.",
    remedy: "declare \"expected_catalog_version\": {\"type\": \"string\"} (Part III 4.4 rule 6)",
};

/// Every trace-fetch tool requires `run_id`.
pub const RUN_ID_MISSING: Rule = Rule {
    id: "10.1-5/run-id-missing",
    section: "4.4 rule 7",
    severity: Severity::Error,
    summary: "Every trace-fetch tool declares `run_id` and marks it required.",
    remedy: "declare \"run_id\": {\"type\": \"string\"} and list it in `required` (Part III 4.4 rule 7)",
};

/// A single-Language validate tool requires its program argument.
pub const PROGRAM_ARGUMENT_NOT_REQUIRED: Rule = Rule {
    id: "10.1-5/program-argument-not-required",
    section: "4.4 rule 8",
    severity: Severity::Error,
    summary: "A validate tool serving one Language marks its program-bearing argument required.",
    remedy: "add the program argument to `required` (Part III 4.4 rule 8)",
};

/// A shared validate tool requires none of its program arguments.
pub const SHARED_PROGRAM_ARGUMENT_REQUIRED: Rule = Rule {
    id: "10.1-5/shared-program-argument-required",
    section: "4.4 rule 9",
    severity: Severity::Error,
    summary: "A shared validate tool marks none of its program-bearing arguments required.",
    remedy: "mark none of a shared tool's program arguments required (Part III 4.4 rule 9)",
};

// 4.5 Tool annotations
/// readOnlyHint on the access, validate and trace-fetch tools.
pub const READ_ONLY_HINT: Rule = Rule {
    id: "4.5/read-only-hint",
    section: "4.5",
    severity: Severity::Warning,
    summary: "The access tools, validate tools and trace-fetch tools declare readOnlyHint: true.",
    remedy: "declare {\"readOnlyHint\": true} (Part III 4.5)",
};

// 4.6 Loop-tool schema authoring
/// No `additionalProperties: false`.
pub const ADDITIONAL_PROPERTIES_FALSE: Rule = Rule {
    id: "4.6/additional-properties-false",
    section: "4.6",
    severity: Severity::Error,
    summary: "A loop-tool schema does not set additionalProperties (or unevaluatedProperties): false, at any depth.",
    remedy: "remove it: receivers ignore unknown members, and schema rejection would turn value faults into carrier errors (Part III 4.6)",
};

/// Reserved members constrained by JSON type only.
pub const RESERVED_MEMBER_CONSTRAINED: Rule = Rule {
    id: "4.6/reserved-member-constrained",
    section: "4.6",
    severity: Severity::Error,
    summary: "A loop tool constrains reserved members by their JSON type only.",
    remedy: "constrain reserved members by `type` only, e.g. {\"type\": \"string\"} (Part III 4.6)",
};

/// No value keyword on an ordinary member.
pub const VALUE_CONSTRAINT: Rule = Rule {
    id: "4.6/value-constraint",
    section: "4.6",
    severity: Severity::Error,
    summary: "A loop-tool schema expresses structural faults only (a missing required member, a wrong JSON type): no value keyword (enum, const, pattern, bounds, lengths, counts, multipleOf, uniqueItems, contains, propertyNames, not, if/then/else, dependentRequired, dependentSchemas) on an ordinary member or across members.",
    remedy: "remove the keyword and check the value after schema validation, reporting a diagnostic (Part III 4.6: only structural faults may be expressed by the schema)",
};

/// `format` on an ordinary member.
pub const FORMAT_CONSTRAINT: Rule = Rule {
    id: "4.6/format-constraint",
    section: "4.6",
    severity: Severity::Warning,
    summary: "A loop-tool member carries no `format`: an annotation in JSON Schema 2020-12, but a value fault wherever the server's validator asserts formats.",
    remedy: "remove `format`, or make sure the server's argument validator treats it as an annotation (Part III 4.6)",
};

/// Runnables are not required.
pub const RUNNABLE_REQUIRED: Rule = Rule {
    id: "4.6/runnable-required",
    section: "4.6",
    severity: Severity::Error,
    summary: "An execute tool marks neither the program argument nor program_ref required.",
    remedy: "require neither the program argument nor program_ref: runnable selection happens after schema validation (Part III 4.6)",
};

/// program_ref declared where promoted programs can run.
pub const PROGRAM_REF_UNDECLARED: Rule = Rule {
    id: "4.6/program-ref-undeclared",
    section: "4.6",
    severity: Severity::Warning,
    summary: "An execute tool supporting promoted programs declares program_ref (heuristic: promotion_authority or deploy execution).",
    remedy: "declare \"program_ref\": {\"type\": \"string\"} if promoted programs can be executed (Part III 4.6)",
};

// 5 Program-valued tool declaration
/// validate and execute tools carry the declaration.
pub const PROGRAM_DECLARATION_MISSING: Rule = Rule {
    id: "5/program-declaration-missing",
    section: "5",
    severity: Severity::Error,
    summary: "Every validate and execute tool carries the program declaration under the full `_meta` key.",
    remedy: "declare {\"argument\": ..., \"language\": ...} (or languages[]) under the full key (Part III 5)",
};

/// The declaration is valid.
pub const PROGRAM_DECLARATION_INVALID: Rule = Rule {
    id: "5/program-declaration-invalid",
    section: "5",
    severity: Severity::Error,
    summary: "The program declaration validates against $defs/ProgramDeclaration.",
    remedy: "use {\"argument\", \"language\"} or {\"languages\": [two or more]} (Part III 5)",
};

/// One argument per Language.
pub const DUPLICATE_PROGRAM_ARGUMENT: Rule = Rule {
    id: "5/duplicate-program-argument",
    section: "5",
    severity: Severity::Error,
    summary: "Each Language of a declaration has its own program argument.",
    remedy: "give each Language its own program argument (Part III 4.3, 5)",
};

/// The program argument is in the inputSchema.
pub const PROGRAM_ARGUMENT_UNDECLARED: Rule = Rule {
    id: "5/program-argument-undeclared",
    section: "5",
    severity: Severity::Error,
    summary: "Every declared program argument is a member of the inputSchema.",
    remedy: "declare the program argument in inputSchema.properties (Part III 4.4, 5)",
};

/// The declared Language is in the manifest.
pub const LANGUAGE_UNKNOWN: Rule = Rule {
    id: "5/language-unknown",
    section: "5",
    severity: Severity::Error,
    summary: "Every declared Language is listed in the manifest.",
    remedy: "declare only Languages the manifest lists (Part III 5)",
};

// 6 Result envelope
/// An outputSchema is declared.
pub const OUTPUT_SCHEMA_MISSING: Rule = Rule {
    id: "6/output-schema-missing",
    section: "6",
    severity: Severity::Warning,
    summary: "Every Pilotage tool declares an outputSchema.",
    remedy: "declare the tool's union, e.g. pilotage_types::ToolKind::output_schema (Part III 6)",
};

/// The outputSchema accepts every shape of the tool's union.
pub const OUTPUT_SCHEMA_INCOMPLETE: Rule = Rule {
    id: "6/output-schema-incomplete",
    section: "6",
    severity: Severity::Error,
    summary:
        "A declared outputSchema accepts every structuredContent shape the tool can return, the request error included.",
    remedy: "declare the tool's union (pilotage_types::ToolKind::output_schema, Part III 6)",
};

// 8.1 Session binding
/// No session retention on a stateless deployment.
pub const SESSION_RETENTION_STATELESS: Rule = Rule {
    id: "8.1/session-retention-stateless",
    section: "8.1",
    severity: Severity::Error,
    summary: "A stateless deployment does not declare retention \"session\".",
    remedy: "declare an ISO 8601 duration (e.g. \"PT1H\") or \"none\" (Part III 8.1)",
};

// 10.1 Server conformance, requirements whose text is their own
/// The fixed access tools are exposed.
pub const ACCESS_TOOL_MISSING: Rule = Rule {
    id: "10.1-2/access-tool-missing",
    section: "10.1 rule 2",
    severity: Severity::Error,
    summary:
        "tools/list has pilotage_manifest, pilotage_get_guide, and pilotage_catalog when any Language declares catalog.",
    remedy: "expose the fixed access tool (pilotage_types::AccessTool)",
};

/// The access tools use the Section 4 schemas.
pub const ACCESS_INPUT_SCHEMA: Rule = Rule {
    id: "10.1-2/access-input-schema",
    section: "10.1 rule 2",
    severity: Severity::Error,
    summary: "The access tools use the input schemas of Part III 3.1, 4.1 and 4.2 (annotations aside).",
    remedy: "use the inputSchema Part III defines",
};

/// The manifest is valid.
pub const MANIFEST_INVALID: Rule = Rule {
    id: "10.1-3/manifest-invalid",
    section: "10.1 rule 3",
    severity: Severity::Error,
    summary:
        "The manifest validates against $defs/Manifest (binding and capability faults are reported by their own rules).",
    remedy: "return a manifest that validates against $defs/Manifest of the Pilotage 1.1 schema",
};

/// Every loop tool named exists.
pub const LOOP_TOOL_MISSING: Rule = Rule {
    id: "10.1-4/loop-tool-missing",
    section: "4.3",
    severity: Severity::Error,
    summary: "Every tool named in a loop object exists in tools/list.",
    remedy: "expose the tool, or correct the name in the loop object (Part III 4.3)",
};

/// Every rule the linter checks, in section order.
pub const RULES: &[&Rule] = &[
    &EXTENSION_UNDECLARED,
    &SHORTHAND_META_KEY,
    &INITIALIZE_META_INVALID,
    &WELCOME_TEXT,
    &ENTRY_POINT_DESCRIPTION,
    &STAGE_DESCRIPTION,
    &DUPLICATE_TOOL_NAME,
    &GUIDES_BINDING,
    &CATALOG_BINDING,
    &CATALOG_TOOL_UNEXPECTED,
    &CAPABILITY_DECLARATION_MISSING,
    &PLAN_LOOP_MEMBER,
    &LOOP_CAPABILITY_MISMATCH,
    &SHARED_TOOL_WITHOUT_LANGUAGES,
    &LOOP_TOOL_MISSING,
    &MODE_MISSING,
    &MODE_UNEXPECTED,
    &RESERVED_MEMBER_TYPE,
    &TRACE_LEVEL_MISSING,
    &EXPECTED_CATALOG_VERSION_MISSING,
    &RUN_ID_MISSING,
    &PROGRAM_ARGUMENT_NOT_REQUIRED,
    &SHARED_PROGRAM_ARGUMENT_REQUIRED,
    &READ_ONLY_HINT,
    &ADDITIONAL_PROPERTIES_FALSE,
    &RESERVED_MEMBER_CONSTRAINED,
    &VALUE_CONSTRAINT,
    &FORMAT_CONSTRAINT,
    &RUNNABLE_REQUIRED,
    &PROGRAM_REF_UNDECLARED,
    &PROGRAM_DECLARATION_MISSING,
    &PROGRAM_DECLARATION_INVALID,
    &DUPLICATE_PROGRAM_ARGUMENT,
    &PROGRAM_ARGUMENT_UNDECLARED,
    &LANGUAGE_UNKNOWN,
    &OUTPUT_SCHEMA_MISSING,
    &OUTPUT_SCHEMA_INCOMPLETE,
    &SESSION_RETENTION_STATELESS,
    &ACCESS_TOOL_MISSING,
    &ACCESS_INPUT_SCHEMA,
    &MANIFEST_INVALID,
];

/// The rule with this id, if any.
pub fn rule(id: &str) -> Option<&'static Rule> {
    RULES.iter().copied().find(|rule| rule.id == id)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeSet;

    /// The sections each requirement of Part III 10.1 points to ("It uses the reserved argument
    /// names and satisfies all declaration obligations in Section 4.4", ...).
    const REQUIREMENT_SECTIONS: &[(&str, &[&str])] = &[
        ("10.1-2", &["10.1 rule 2", "4", "4.1", "4.2"]),
        ("10.1-3", &["10.1 rule 3", "4"]),
        ("10.1-4", &["10.1 rule 4", "4.3"]),
        ("10.1-5", &["10.1 rule 5", "4.4"]),
        ("10.1-6", &["10.1 rule 6", "4.6"]),
        ("10.1-7", &["10.1 rule 7", "5"]),
        ("10.1-11", &["10.1 rule 11", "8.1"]),
    ];

    /// The section number `section` starts with (`4.4` of `4.4 rule 5`, `4.2` of `Part II 4.2`).
    fn section_number(section: &str) -> &str {
        let section = section.strip_prefix("Part II ").unwrap_or(section);
        section.split(' ').next().unwrap_or_default()
    }

    #[test]
    fn ids_are_unique_and_the_table_is_consistent() {
        let mut seen = BTreeSet::new();
        for rule in RULES {
            assert!(seen.insert(rule.id), "duplicate rule id {}", rule.id);
            assert!(!rule.summary.is_empty() && !rule.remedy.is_empty(), "{}", rule.id);
            let slug = rule.id.split_once('/').expect("id is <citation>/<slug>").1;
            assert!(
                !slug.is_empty() && slug.chars().all(|c| c.is_ascii_lowercase() || c == '-'),
                "{}: slug",
                rule.id
            );
            assert_eq!(super::rule(rule.id), Some(*rule));
        }
        assert_eq!(super::rule("4.6/no-such-rule"), None);
    }

    #[test]
    fn every_id_starts_with_the_section_it_cites() {
        for rule in RULES {
            let citation = rule.id.split_once('/').unwrap().0;
            let number = section_number(rule.section);
            let cites = match REQUIREMENT_SECTIONS.iter().find(|(req, _)| *req == citation) {
                // 10.1-N: the section is requirement N itself or one it refers to.
                Some((_, sections)) => sections.contains(&rule.section) || sections.contains(&number),
                None => citation == number,
            };
            assert!(cites, "{} does not cite its section `{}`", rule.id, rule.section);
        }
    }

    #[test]
    fn the_section_check_can_fail() {
        assert_eq!(section_number("4.4 rule 5"), "4.4");
        assert_eq!(section_number("Part II 4.2"), "4.2");
        assert_ne!(section_number("4.6"), "4.4");
    }
}
