//! The official JSON-Schema-Test-Suite compiled: the build script generates validators for
//! every test group's schema (every draft the generator accepts: 2020-12, 2019-09, draft-07,
//! draft-06 and draft-04; required and `optional/` files) with
//! `pilotage_codegen::validators::generate_with`, the suite's `remotes/` given as the schema
//! set's other documents (as `http://localhost:1234/...`); [`GROUPS`] lists each group with
//! its check, or the generation error that refused it. `tests/suite.rs` runs the tests.
//!
//! The suite is read in place from `../shared/json-schema-test-suite` (or
//! `$JSON_SCHEMA_TEST_SUITE`); it is never copied here.

use pilotage_types::validate::runtime::Check;

/// One test group of the suite.
#[derive(Debug, Clone, Copy)]
pub struct Group {
    /// The draft's directory in the suite: `draft2020-12`, `draft2019-09`, `draft7`, `draft6` or
    /// `draft4`.
    pub draft: &'static str,
    /// The file, relative to the draft's directory (`optional/format/date.json`), or to this
    /// crate for its own cases (`cases/draft2019-09.json`).
    pub file: &'static str,
    /// The file's path.
    pub path: &'static str,
    /// The group's index in the file.
    pub index: usize,
    /// The root check of the group's schema, when it generated.
    pub check: Option<Check>,
    /// The root's entry into the group's stream program (validation fused into
    /// deserialization), when it generated one.
    pub stream: Option<pilotage_types::validate::stream::Stream>,
    /// The generation error, when it did not.
    pub refused: Option<&'static str>,
}

include!(concat!(env!("OUT_DIR"), "/suite.rs"));
