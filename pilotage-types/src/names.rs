//! Names and heuristics shared by the loop-tool runtime and the conformance linter: the
//! loop stages, the reserved argument names of Part III 4.4, and the documented heuristic for
//! "the description states the stage" (Part III 3.4).

use crate::output_schema::ToolKind;

/// The loop stage a tool binds (Part III 4.3, 8.2).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Stage {
    /// validate (with plan).
    Validate,
    /// execute.
    Execute,
    /// trace fetch.
    Trace,
}

impl Stage {
    /// The outputSchema union of this stage.
    pub const fn output_kind(self) -> ToolKind {
        match self {
            Self::Validate => ToolKind::Validate,
            Self::Execute => ToolKind::Execute,
            Self::Trace => ToolKind::Trace,
        }
    }

    /// How Part III 3.4 names the stage.
    pub const fn label(self) -> &'static str {
        match self {
            Self::Validate => "validate",
            Self::Execute => "execute",
            Self::Trace => "trace fetch",
        }
    }
}

/// The reserved argument names of Part III 4.4 and the JSON type each is constrained to
/// (`None`: any JSON value, typed as the Rust type allows).
pub const RESERVED: &[(&str, Option<&str>)] = &[
    ("mode", Some("string")),
    ("program_ref", Some("string")),
    ("input", None),
    ("context", None),
    ("trace_level", Some("string")),
    ("expected_catalog_version", Some("string")),
    ("idempotency_key", Some("string")),
    ("test_run", Some("boolean")),
    ("store", Some("boolean")),
    ("run_id", Some("string")),
    ("question", Some("string")),
];

/// Whether `name` is a reserved argument name (Part III 4.4).
pub fn is_reserved_name(name: &str) -> bool {
    RESERVED.iter().any(|(reserved, _)| *reserved == name)
}

/// Whether `text` names the stage, by the documented heuristic: the stage's verb stem
/// (`validat`/`check`, `execut`/`run`, `trace`) appears, case-insensitively.
pub fn names_stage(text: &str, stage: Stage) -> bool {
    let lower = text.to_lowercase();
    let stems: &[&str] = match stage {
        Stage::Validate => &["validat", "check"],
        Stage::Execute => &["execut", "run"],
        Stage::Trace => &["trace"],
    };
    stems.iter().any(|stem| lower.contains(stem))
}
