//! The run time of the validators `pilotage-codegen` generates (`cargo xtask regen` for the
//! Pilotage schema, `pilotage codegen` for any other): what the generated checks call, and
//! nothing else.
//!
//! - [`runtime`]: the evaluation context, instance locations, JSON equality and numbers with
//!   JSON Schema's semantics, the reasons of failure.
//! - [`format`](mod@format): one checker per format JSON Schema defines, with the Unicode tables of the IDN
//!   formats checked in.
//! - [`pattern`]: patterns compiled when the validators were generated (DFA tables, sequences,
//!   Pike VM programs), run with no regex engine.
//! - [`stream`]: validation fused into deserialization (the stream program).
//! - [`Validators`], [`Violation`], [`ValidationErrors`]: a generated table of checks by
//!   definition name, and what a failed check reports.
//!
//! It depends on `serde_json` (and `serde_core`, the traits `serde_json` is built on) and
//! nothing else, so that it compiles while a downstream build is still compiling `syn` and
//! `serde_derive`. Users reach it through `pilotage_types::validate`, which re-exports every
//! module: generated code names the paths `::pilotage_types::validate::...`.

#![forbid(unsafe_code)]
#![warn(missing_docs)]

use std::fmt;

use serde_json::Value;

mod few;
pub mod format;
pub mod pattern;
pub mod runtime;
pub mod stream;

use runtime::{Check, Collect, Cx, Loc, Stop};

/// One violation of a schema.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Violation {
    /// JSON Pointer of the offending location in the instance (`""` for the whole value).
    pub instance_pointer: String,
    /// JSON Pointer of the violated keyword in the schema document (e.g. `/$defs/Guide/required`).
    pub schema_pointer: String,
    /// What is wrong, e.g. `"title" is a required property` (at most [`MAX_MESSAGE_BYTES`]
    /// bytes of it, then a note of the full length).
    pub message: String,
}

impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let at = if self.instance_pointer.is_empty() {
            "(root)"
        } else {
            &self.instance_pointer
        };
        write!(f, "{at}: {} (schema {})", self.message, self.schema_pointer)
    }
}

/// Every violation of one value against one definition (up to [`MAX_VIOLATIONS_BYTES`] of
/// them). Made by the validators; `#[non_exhaustive]`, as it may tell more in a later version.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ValidationErrors {
    /// The definition validated against (`"."` for a document's root schema).
    pub def: String,
    /// The violations, in the validator's order; never empty. All of them, unless
    /// [`Self::truncated`].
    pub violations: Vec<Violation>,
    /// Whether the list stops short: the violations listed reached [`MAX_VIOLATIONS_BYTES`],
    /// and the rest are not listed (the generated validators stop looking for them).
    pub truncated: bool,
}

impl fmt::Display for ValidationErrors {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let count = self.violations.len();
        write!(
            f,
            "not a valid {}: {}{count} violation{}",
            self.def,
            if self.truncated { "at least " } else { "" },
            if count == 1 { "" } else { "s" }
        )?;
        if self.truncated {
            write!(f, " (the list stops at {MAX_VIOLATIONS_BYTES} bytes)")?;
        }
        for violation in &self.violations {
            write!(f, "\n  {violation}")?;
        }
        Ok(())
    }
}

impl std::error::Error for ValidationErrors {}

/// Failure to set up validation for a definition.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SchemaError {
    /// The document has no such `$defs` entry.
    UnknownDef(String),
    /// The schema (or the definition) does not compile (the interpreter only: generated
    /// validators were compiled when they were generated).
    Invalid {
        /// The definition.
        def: String,
        /// What is wrong with it.
        message: String,
    },
}

impl fmt::Display for SchemaError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::UnknownDef(def) => write!(f, "unknown definition `{def}`: the schema has no `$defs/{def}`"),
            Self::Invalid { def, message } => write!(f, "the schema of `{def}` does not compile: {message}"),
        }
    }
}

impl std::error::Error for SchemaError {}

/// The generated validators of one schema document, by definition name, in one reading.
///
/// Generated code builds the table; by hand it looks like this:
///
/// ```
/// use pilotage_validate::runtime::{Check, Cx, Loc, Mode, Why};
/// use pilotage_validate::Validators;
/// use serde_json::{json, Value};
///
/// fn is_string<M: Mode>(cx: &mut Cx<M>, v: &Value, at: &Loc<'_>) -> bool {
///     if v.is_string() {
///         return true;
///     }
///     cx.fail(at, "/type", Why::Type(v, &["string"]));
///     false
/// }
/// static TABLE: Validators = Validators::new(&[("Name", Check::new(is_string, is_string))], &[]);
///
/// assert!(TABLE.is_valid("Name", &json!("x")).unwrap());
/// let errors = TABLE.validate("Name", &json!(1)).unwrap().unwrap_err();
/// assert_eq!(errors.violations[0].schema_pointer, "/type");
/// assert!(TABLE.validate("NoSuchDef", &json!(1)).is_err());
/// ```
#[derive(Debug, Clone, Copy)]
pub struct Validators {
    defs: &'static [(&'static str, Check)],
    unresolved: &'static [&'static str],
    program: &'static [stream::Node],
    streams: &'static [(&'static str, u32)],
    compatible: bool,
}

impl Validators {
    /// The validators of a generated table, sorted by definition name (generated code calls
    /// this).
    pub const fn new(defs: &'static [(&'static str, Check)], unresolved: &'static [&'static str]) -> Self {
        Self {
            defs,
            unresolved,
            program: &[],
            streams: &[],
            compatible: false,
        }
    }

    /// The same validators with their stream program: `program`, and each definition's node
    /// in it, sorted by definition name (generated code calls this).
    pub const fn with_streams(self, program: &'static [stream::Node], streams: &'static [(&'static str, u32)]) -> Self {
        Self {
            program,
            streams,
            ..self
        }
    }

    /// The entry of `def` into the stream program (validation fused into deserialization,
    /// see [`stream`]), if the document has one.
    pub fn stream(&self, def: &str) -> Option<stream::Stream> {
        self.streams
            .binary_search_by(|(name, _)| (*name).cmp(def))
            .ok()
            .map(|index| stream::Stream::new(self.program, self.streams[index].1))
    }

    /// The references to other documents, each validated as accepting any value (as the
    /// generated types hold them as `serde_json::Value`).
    pub fn unresolved_references(&self) -> &'static [&'static str] {
        self.unresolved
    }

    /// The same validators in the compatible reading (every open enum widened to any string).
    pub fn compatible(self) -> Self {
        Self {
            compatible: true,
            ..self
        }
    }

    /// Whether this is the compatible reading.
    pub fn is_compatible_reading(&self) -> bool {
        self.compatible
    }

    /// The names of the definitions, sorted (`.` is a document's root).
    pub fn def_names(&self) -> impl Iterator<Item = &'static str> {
        self.defs.iter().map(|(name, _)| *name)
    }

    /// The generated check of `def`.
    pub fn check(&self, def: &str) -> Result<Check, SchemaError> {
        self.defs
            .binary_search_by(|(name, _)| (*name).cmp(def))
            .map(|index| self.defs[index].1)
            .map_err(|_| SchemaError::UnknownDef(def.to_owned()))
    }

    /// Validates `instance` against `def`, listing every violation (up to
    /// [`MAX_VIOLATIONS_BYTES`] of them).
    pub fn validate(&self, def: &str, instance: &Value) -> Result<Result<(), ValidationErrors>, SchemaError> {
        Ok(run(def, self.check(def)?, instance, self.compatible))
    }

    /// Whether `instance` is valid against `def`, without collecting violations.
    pub fn is_valid(&self, def: &str, instance: &Value) -> Result<bool, SchemaError> {
        Ok(verdict(self.check(def)?, instance, self.compatible))
    }
}

/// Whether `instance` passes `check` (stops at the first violation; allocates nothing unless the
/// dynamic scope or an `unevaluated*` annotation outgrows its few inline slots, or the thread checks
/// its first `propertyNames`).
#[inline]
pub fn verdict(check: Check, instance: &Value, compatible: bool) -> bool {
    let mut cx = Cx::<Stop>::new(compatible);
    let verdict = check.stop()(&mut cx, instance, &Loc::Root);
    if cx.holds_nothing() {
        std::mem::forget(cx);
    }
    verdict
}

/// Runs `check` on `instance`, listing every violation when it fails (up to
/// [`MAX_VIOLATIONS_BYTES`] of them). Valid values cost one pass that stops at the first
/// violation and records nothing.
#[inline]
pub fn run(def: &str, check: Check, instance: &Value, compatible: bool) -> Result<(), ValidationErrors> {
    if verdict(check, instance, compatible) {
        return Ok(());
    }
    collect(def, check, instance, compatible)
}

#[cold]
#[inline(never)]
fn collect(def: &str, check: Check, instance: &Value, compatible: bool) -> Result<(), ValidationErrors> {
    let mut cx = Cx::<Collect>::new(compatible);
    check.collect()(&mut cx, instance, &Loc::Root);
    // `Ok` is unreachable for a correct generator: both passes run the same generic function
    // (its two instances, `runtime::Check`).
    cx.into_list().into_result(def)
}

/// The most memory a list of violations takes (their records, pointers and messages), in
/// bytes. Past it, the list stops ([`ValidationErrors::truncated`]): an instance pointer
/// repeats every name above it, so without a bound a hostile instance (a name of 500 KB over
/// an array of 250,000 wrong items, 1 MB in all) would list 125 GB of pointers; and each
/// violation of a tiny item takes a hundred bytes or more. At about 150 bytes a violation,
/// 16 MiB lists more than 100,000 of them.
pub const MAX_VIOLATIONS_BYTES: usize = 16 * 1024 * 1024;

/// Violations collected within [`MAX_VIOLATIONS_BYTES`] (the generated validators' and the
/// interpreter's lists).
#[derive(Debug, Default)]
pub struct ViolationList {
    violations: Vec<Violation>,
    bytes: usize,
    truncated: bool,
}

impl ViolationList {
    /// An empty list.
    pub fn new() -> Self {
        Self::default()
    }

    /// Whether the list is full: a violation found now is not listed, and the search may stop.
    #[inline]
    pub fn is_full(&self) -> bool {
        self.truncated
    }

    /// Adds `violation` unless it would take the list past [`MAX_VIOLATIONS_BYTES`] (the
    /// first one is always listed); returns whether the list is full.
    pub fn push(&mut self, violation: Violation) -> bool {
        if self.truncated {
            return true;
        }
        let bytes = std::mem::size_of::<Violation>()
            + violation.instance_pointer.len()
            + violation.schema_pointer.len()
            + violation.message.len();
        if !self.violations.is_empty() && self.bytes.saturating_add(bytes) > MAX_VIOLATIONS_BYTES {
            self.truncated = true;
            return true;
        }
        self.bytes += bytes;
        self.violations.push(violation);
        false
    }

    /// How many violations are listed.
    #[inline]
    pub fn len(&self) -> usize {
        self.violations.len()
    }

    /// Whether none is listed.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.violations.is_empty()
    }

    /// The violations listed.
    pub fn into_violations(self) -> Vec<Violation> {
        self.violations
    }

    /// `Ok` when no violation is listed, else the [`ValidationErrors`] of `def`.
    pub fn into_result(self, def: &str) -> Result<(), ValidationErrors> {
        if self.violations.is_empty() {
            return Ok(());
        }
        Err(ValidationErrors {
            def: def.to_owned(),
            violations: self.violations,
            truncated: self.truncated,
        })
    }
}

/// Longest violation message kept, in bytes. Messages quote the offending value, which for
/// hostile input can be megabytes; the pointers say where it is.
pub const MAX_MESSAGE_BYTES: usize = 1000;

/// `message` cut to at most [`MAX_MESSAGE_BYTES`] bytes (at a character boundary), with a note of
/// its full length.
pub fn bounded_message(mut message: String) -> String {
    if message.len() > MAX_MESSAGE_BYTES {
        let total = message.len();
        let mut cut = MAX_MESSAGE_BYTES;
        while !message.is_char_boundary(cut) {
            cut -= 1;
        }
        message.truncate(cut);
        message.push_str(&format!("... ({total} bytes in all)"));
    }
    message
}
