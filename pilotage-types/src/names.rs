//! The facts of Part III that every side reads, re-exported from `pilotage-spec` (one table,
//! also read by the derive at compile time), plus what needs this crate's types: the
//! outputSchema union of a stage (Part III 6) and the documented heuristic for "the
//! description states the stage" (Part III 3.4).

pub use pilotage_spec::{
    is_reserved_name, reserved_member, JsonType, ReservedMember, Stage, EXECUTION_BOTH, MODES,
    OPTIONAL_FEATURE_MEMBERS, RESERVED, SESSION_RETENTION,
};

use crate::output_schema::ToolKind;

impl From<Stage> for ToolKind {
    /// The outputSchema union of a loop stage (Part III 6).
    fn from(stage: Stage) -> Self {
        match stage {
            Stage::Validate => ToolKind::Validate,
            Stage::Execute => ToolKind::Execute,
            Stage::Trace => ToolKind::Trace,
        }
    }
}

/// Whether `text` names the stage, by the documented heuristic of Part III 3.4: the stage's
/// verb stem (`validat`/`check`, `execut`/`run`, `trace`) appears, case-insensitively.
pub fn names_stage(text: &str, stage: Stage) -> bool {
    let lower = text.to_lowercase();
    let stems: &[&str] = match stage {
        Stage::Validate => &["validat", "check"],
        Stage::Execute => &["execut", "run"],
        Stage::Trace => &["trace"],
    };
    stems.iter().any(|stem| lower.contains(stem))
}
