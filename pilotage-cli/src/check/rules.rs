//! The probe rules of `pilotage check`: the requirements of Part III that only a running
//! server shows. Same shape and id convention as the linter's table ([`crate::lint::rules`]);
//! a report of every rule checked walks `RULES` then [`PROBES`].

use crate::lint::{Rule, Severity};

/// 3.1: the manifest tool answers.
pub const MANIFEST_TOOL_ANSWERS: Rule = Rule {
    id: "3.1/manifest-tool-answers",
    section: "3.1",
    severity: Severity::Error,
    summary: "pilotage_manifest answers a valid manifest in structuredContent, isError false.",
    remedy: "return the Part II manifest as structuredContent of pilotage_manifest (Part III 3.1, 6)",
};

/// 4.1: the guide index and a guide.
pub const GUIDE_FORMS: Rule = Rule {
    id: "4.1/guide-forms",
    section: "4.1",
    severity: Severity::Error,
    summary: "pilotage_get_guide answers the index form without bodies and the fetch form with the body; where guides.topic_fetch is declared, every topic an index entry lists is fetchable in the topic form.",
    remedy: "answer {\"guides\": [...]} without body when id is absent, {\"guide\": {..., \"body\"}} when it is given, and with topic the body of that topic only (Part III 4.1)",
};

/// 4.1, 7.2: unknown Language or guide.
pub const GUIDE_NOT_FOUND: Rule = Rule {
    id: "4.1/unknown-not-found",
    section: "4.1",
    severity: Severity::Error,
    summary: "An unknown language or guide id is a request error of kind not_found, isError true.",
    remedy: "answer {\"error\": {\"kind\": \"not_found\", ...}} with isError true (Part III 4.1 Errors, 7.2)",
};

/// 4.2: the catalog list.
pub const CATALOG_LIST: Rule = Rule {
    id: "4.2/catalog-list",
    section: "4.2",
    severity: Severity::Error,
    summary: "pilotage_catalog list answers the Part II 6.3 list shape with catalog_version.",
    remedy: "answer {\"items\": [...], \"catalog_version\": ...} (Part III 4.2, Part II 6.3)",
};

/// 4.2, 7.2: an unknown entry still carries `catalog_version`.
pub const CATALOG_NOT_FOUND: Rule = Rule {
    id: "4.2/unknown-entry-not-found",
    section: "7.2",
    severity: Severity::Error,
    summary: "A catalog get of an unknown id is a not_found request error that still carries catalog_version.",
    remedy:
        "answer {\"error\": {\"kind\": \"not_found\", ...}, \"catalog_version\": ...} with isError true (Part III 7.2)",
};

/// 4.4 mode.
pub const MODE_VALUE: Rule = Rule {
    id: "4.4/mode-request-error",
    section: "4.4",
    severity: Severity::Error,
    summary: "Where execution is both, a missing or unknown mode is an invalid_request request error.",
    remedy: "refuse a missing or unknown mode with {\"error\": {\"kind\": \"invalid_request\"}} and isError true (Part III 4.4)",
};

/// 4.5: annotations against the catalog's risk.
pub const DESTRUCTIVE_HINT: Rule = Rule {
    id: "4.5/destructive-hint-risk",
    section: "4.5",
    severity: Severity::Warning,
    summary:
        "An execute tool whose Language can call a destructive catalog entry does not claim destructiveHint false.",
    remedy: "declare {\"destructiveHint\": true} on the execute tool (Part III 4.5)",
};

/// 4.6, 7.1: runnable selection.
pub const RUNNABLE_SELECTION: Rule = Rule {
    id: "4.6/runnable-selection",
    section: "4.6",
    severity: Severity::Error,
    summary: "Neither or both runnables is an invalid_request request error, and program_ref on an execute tool that does not declare it is a request error (unsupported, or invalid_request beside a program): never a Run nor a carrier error.",
    remedy: "enforce exactly one of the program argument and program_ref after schema validation, as a request error; refuse program_ref where it is not declared, never ignore it (Part III 4.6, 7.1)",
};

/// 7.1: an argument requiring an undeclared sub-feature.
pub const UNDECLARED_SUB_FEATURE: Rule = Rule {
    id: "7.1/undeclared-sub-feature",
    section: "7.1",
    severity: Severity::Error,
    summary: "An argument requiring a sub-feature the Language does not declare (test_run: execute.test_run, idempotency_key: execute.idempotency, question: trace_fetch.narrate) is a request error (unsupported or invalid_request), never ignored (a Run, a trace) nor a carrier error.",
    remedy: "refuse the argument with {\"error\": {\"kind\": \"unsupported\", ...}} and isError true, or declare the sub-feature (Part III 7.1)",
};

/// 7.1: an unknown trace level.
pub const UNKNOWN_TRACE_LEVEL: Rule = Rule {
    id: "7.1/unknown-trace-level",
    section: "7.1",
    severity: Severity::Error,
    summary: "An unknown trace_level is an invalid_request request error, never -32602.",
    remedy: "type trace_level as {\"type\": \"string\"} only and refuse unknown values as request errors (Part III 4.6, 7.1)",
};

/// 7.1: an invalid program is diagnostics.
pub const INVALID_PROGRAM: Rule = Rule {
    id: "7.1/invalid-program-diagnostics",
    section: "7.1",
    severity: Severity::Error,
    summary:
        "Validating an invalid program answers a ValidateResponse with isError false, never a request or carrier error.",
    remedy: "report program invalidity as {\"valid\": false, \"diagnostics\": [...]} with isError false (Part III 7.1)",
};

/// 6, 10.1-8: the result envelope.
pub const STRUCTURED_CONTENT: Rule = Rule {
    id: "10.1-8/structured-content",
    section: "6",
    severity: Severity::Error,
    summary:
        "Every Pilotage tool result carries structuredContent that validates against its tool's outputSchema union.",
    remedy: "return the operation result in structuredContent, in the shape of the tool's union (Part III 6)",
};

/// 7, 10.1-9: error channels and closed kinds.
pub const REQUEST_ERROR_CHANNEL: Rule = Rule {
    id: "10.1-9/request-error-channel",
    section: "7.2",
    severity: Severity::Error,
    summary: "A request error carries isError true and a RequestError whose kind is one of this version's closed set.",
    remedy: "set isError true on request errors only, with a kind of Part III 7.2",
};

/// 8.3, 10.1-12: resources equal the tools.
pub const RESOURCES_EQUAL: Rule = Rule {
    id: "10.1-12/resources-equal",
    section: "8.3",
    severity: Severity::Error,
    summary: "The guides and catalog resources the manifest names have content equal to the tool responses.",
    remedy: "serve at guides_resource / catalog_resource exactly what the tools answer (Part III 8.3)",
};

/// 6, 7.1: a failed Run is an outcome, not an error.
pub const FAILED_RUN: Rule = Rule {
    id: "7.1/failed-run-outcome",
    section: "7.1",
    severity: Severity::Error,
    summary: "A Run that fails answers an ExecuteResponse with outcome.ok false and isError false, never a request or carrier error.",
    remedy: "report a failed Run as {\"outcome\": {\"ok\": false, ...}} with isError false (Part III 6, 7.1)",
};

/// 9.5, 7.2: an unknown run.
pub const UNKNOWN_RUN: Rule = Rule {
    id: "9.5/unknown-run-not-found",
    section: "9.5",
    severity: Severity::Error,
    summary: "A trace fetch of an unknown run_id is a not_found request error.",
    remedy: "answer {\"error\": {\"kind\": \"not_found\", ...}} with isError true, the same for unknown and expired runs (Part III 7.2, 9.5)",
};

/// Part II 6.5, 6.6 through Part III 4.3: runs and their traces.
pub const RUN_AND_TRACE: Rule = Rule {
    id: "4.3/run-and-trace",
    section: "4.3",
    severity: Severity::Error,
    summary: "Executing a valid program at each trace level answers an ExecuteResponse with the trace that level asks for; its run_id fetches the trace at min(requested, recorded).",
    remedy: "return the trace at summary and full, none at none, and serve trace fetch of a retained run_id (Part II 6.5, 6.6)",
};

/// Every probe rule, in section order.
pub const PROBES: &[&Rule] = &[
    &MANIFEST_TOOL_ANSWERS,
    &GUIDE_FORMS,
    &GUIDE_NOT_FOUND,
    &CATALOG_LIST,
    &CATALOG_NOT_FOUND,
    &RUN_AND_TRACE,
    &MODE_VALUE,
    &DESTRUCTIVE_HINT,
    &RUNNABLE_SELECTION,
    &UNKNOWN_TRACE_LEVEL,
    &UNDECLARED_SUB_FEATURE,
    &INVALID_PROGRAM,
    &FAILED_RUN,
    &UNKNOWN_RUN,
    &STRUCTURED_CONTENT,
    &REQUEST_ERROR_CHANNEL,
    &RESOURCES_EQUAL,
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn probe_ids_are_unique_and_distinct_from_lint_ids() {
        for (i, rule) in PROBES.iter().enumerate() {
            assert!(PROBES[i + 1..].iter().all(|other| other.id != rule.id), "{}", rule.id);
            assert!(
                crate::lint::rules::rule(rule.id).is_none(),
                "{} is also a lint rule",
                rule.id
            );
            assert!(rule.id.contains('/') && !rule.summary.is_empty() && !rule.remedy.is_empty());
        }
    }
}
