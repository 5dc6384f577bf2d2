//! The facts of the Pilotage MCP binding (Part III) that code on both sides of the wire reads,
//! each defined once: the loop stages (4.3), the reserved argument names with their JSON
//! types and stages (4.4), the recognised `mode` values (4.4), and the value sets the schema
//! defines ([`schema`], written by `cargo xtask regen`).
//!
//! `#[derive(PilotageTool)]` reads this crate at compile time, `pilotage-types` at run time
//! (it re-exports every item), the linter and the client through `pilotage-types`.
//!
//! ```
//! use pilotage_spec::{reserved_member, JsonType, Stage};
//! let trace_level = reserved_member("trace_level").unwrap();
//! assert_eq!(trace_level.json_type, Some(JsonType::String));
//! assert!(trace_level.applies_to(Stage::Execute) && trace_level.applies_to(Stage::Trace));
//! assert!(reserved_member("workflow").is_none());
//! ```

#![no_std]
#![forbid(unsafe_code)]

#[rustfmt::skip]
pub mod schema;

/// A loop stage (Part III 4.3): the three tools of the loop, named by the Language's `loop`
/// object.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Stage {
    /// validate (with plan), named by `loop.validate`.
    Validate,
    /// execute, named by `loop.execute`.
    Execute,
    /// trace fetch, named by `loop.trace`.
    Trace,
}

impl Stage {
    /// Every stage, in loop order.
    pub const ALL: [Stage; 3] = [Stage::Validate, Stage::Execute, Stage::Trace];

    /// The member of the Language's `loop` object that names this stage's tool (Part III 4.3).
    pub const fn loop_member(self) -> &'static str {
        match self {
            Self::Validate => "validate",
            Self::Execute => "execute",
            Self::Trace => "trace",
        }
    }

    /// How Part III 3.4 names the stage in prose.
    pub const fn label(self) -> &'static str {
        match self {
            Self::Validate => "validate",
            Self::Execute => "execute",
            Self::Trace => "trace fetch",
        }
    }

    /// The stage whose `loop` member is `name`.
    pub fn from_loop_member(name: &str) -> Option<Stage> {
        Self::ALL.into_iter().find(|stage| stage.loop_member() == name)
    }

    /// Whether a tool of this stage carries a program (Part III 5: validate and execute tools).
    pub const fn carries_programs(self) -> bool {
        !matches!(self, Self::Trace)
    }
}

impl core::fmt::Display for Stage {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str(self.loop_member())
    }
}

/// The JSON type a reserved member is constrained to (Part III 4.6: "constrained by JSON type
/// only").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum JsonType {
    /// A JSON string.
    String,
    /// A JSON boolean.
    Boolean,
}

impl JsonType {
    /// The JSON Schema `type` keyword value.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::String => "string",
            Self::Boolean => "boolean",
        }
    }
}

/// One reserved argument name of Part III 4.4.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReservedMember {
    /// The argument name: a loop tool that supports the member MUST use exactly this name
    /// (4.4 rule 1) and MUST NOT use it for another purpose (rule 3).
    pub name: &'static str,
    /// The JSON type its schema may constrain it to; `None`: any JSON value (a program-like
    /// value whose shape the Language defines).
    pub json_type: Option<JsonType>,
    /// The loop stages whose request carries it (Part II 6.4 to 6.6 through Part III 4.4).
    pub stages: &'static [Stage],
}

impl ReservedMember {
    /// Whether a request of `stage` carries this member.
    pub fn applies_to(&self, stage: Stage) -> bool {
        self.stages.contains(&stage)
    }
}

const EXECUTE: &[Stage] = &[Stage::Execute];
const VALIDATE_EXECUTE: &[Stage] = &[Stage::Validate, Stage::Execute];
const EXECUTE_TRACE: &[Stage] = &[Stage::Execute, Stage::Trace];
const TRACE: &[Stage] = &[Stage::Trace];

/// Part III 4.4: the reserved argument names, their JSON types and stages.
pub const RESERVED: &[ReservedMember] = &[
    ReservedMember {
        name: "mode",
        json_type: Some(JsonType::String),
        stages: EXECUTE,
    },
    ReservedMember {
        name: "program_ref",
        json_type: Some(JsonType::String),
        stages: EXECUTE,
    },
    ReservedMember {
        name: "input",
        json_type: None,
        stages: EXECUTE,
    },
    ReservedMember {
        name: "context",
        json_type: None,
        stages: VALIDATE_EXECUTE,
    },
    ReservedMember {
        name: "trace_level",
        json_type: Some(JsonType::String),
        stages: EXECUTE_TRACE,
    },
    ReservedMember {
        name: "expected_catalog_version",
        json_type: Some(JsonType::String),
        stages: EXECUTE,
    },
    ReservedMember {
        name: "idempotency_key",
        json_type: Some(JsonType::String),
        stages: EXECUTE,
    },
    ReservedMember {
        name: "test_run",
        json_type: Some(JsonType::Boolean),
        stages: EXECUTE,
    },
    ReservedMember {
        name: "store",
        json_type: Some(JsonType::Boolean),
        stages: EXECUTE,
    },
    ReservedMember {
        name: "run_id",
        json_type: Some(JsonType::String),
        stages: TRACE,
    },
    ReservedMember {
        name: "question",
        json_type: Some(JsonType::String),
        stages: TRACE,
    },
];

/// The reserved member named `name` (Part III 4.4), if it is one.
pub fn reserved_member(name: &str) -> Option<&'static ReservedMember> {
    RESERVED.iter().find(|member| member.name == name)
}

/// Whether `name` is a reserved argument name (Part III 4.4).
pub fn is_reserved_name(name: &str) -> bool {
    reserved_member(name).is_some()
}

/// Reserved members that only a Language's declared sub-feature enables (Part III 7.1 "a
/// member supplied outside the selected capability" is `unsupported`): supplied to a tool
/// that does not declare them, they are refused with `unsupported`, not ignored.
pub const OPTIONAL_FEATURE_MEMBERS: &[&str] = &["test_run", "store", "idempotency_key", "question"];

/// Part III 4.4 `mode`: its recognised values, for a Language whose `execution` is
/// [`EXECUTION_BOTH`] (where `mode` is REQUIRED; anywhere else it is an `invalid_request`).
pub const MODES: &[&str] = &["immediate", "deploy"];

/// The `execution` value that makes `mode` required (Part III 4.4).
pub const EXECUTION_BOTH: &str = "both";

/// The `retention` value a stateless deployment never declares (Part III 8.1, 10.1-11).
pub const SESSION_RETENTION: &str = "session";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_is_consistent() {
        for (i, member) in RESERVED.iter().enumerate() {
            assert!(!member.stages.is_empty(), "{}", member.name);
            assert!(
                RESERVED[i + 1..].iter().all(|other| other.name != member.name),
                "{}",
                member.name
            );
        }
        for name in OPTIONAL_FEATURE_MEMBERS {
            assert!(is_reserved_name(name), "{name}");
        }
        assert!(schema::EXECUTION.contains(&EXECUTION_BOTH));
        for mode in MODES {
            assert!(schema::EXECUTION.contains(mode), "a mode is an execution value: {mode}");
        }
        assert_eq!(Stage::from_loop_member("trace"), Some(Stage::Trace));
        assert_eq!(Stage::from_loop_member("plan"), None);
    }
}
