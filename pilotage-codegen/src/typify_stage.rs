//! The typify stage: hands the normalised `$defs` to typify 0.8 and returns its token stream.
//! typify panics on constructs it does not support; every panic is caught here, kept off
//! stderr, and turned into a [`CodegenError`] naming the `$defs` entry that caused it.
//! [`run_with_fallbacks`] then types that one definition as `serde_json::Value` and converts
//! the rest (the validators, generated from the original schema, still check it in full).
//!
//! typify runs on a thread of its own with a large stack ([`STACK_SIZE`]), watched by the
//! caller: when it takes longer than [`TIME_BUDGET`], or the process's resident memory grows
//! by more than [`MEMORY_BUDGET`] while it runs (Linux, read from `/proc/self/statm`), the
//! stage returns a [`CodegenError`] saying which bound was reached instead of waiting. A
//! thread cannot be stopped from outside, so the abandoned typify thread runs on until the
//! process exits (the CLI and a build script exit on the error). The normalisations remove
//! the constructs known to make typify recurse or merge without end
//! ([`crate::normalise::drop_negations`], [`crate::normalise::recursive_merges_as_any`]);
//! these bounds are the backstop for the ones not known yet.

use std::cell::{Cell, RefCell};
use std::collections::BTreeMap;
use std::ops::Range;
use std::panic::{self, AssertUnwindSafe};
use std::sync::{mpsc, Once};
use std::time::{Duration, Instant};

use proc_macro2::TokenStream;
use serde_json::{Map, Value};
use typify::{TypeSpace, TypeSpacePatch, TypeSpaceSettings};

use crate::error::{escape_pointer_token, unescape_pointer_token, CodegenError};

thread_local! {
    static CAPTURING: Cell<bool> = const { Cell::new(false) };
    static CAPTURED: RefCell<Option<String>> = const { RefCell::new(None) };
}

/// Installs, once per process, a panic hook that records panics of threads inside
/// [`catch_panic`] instead of printing them, and forwards every other panic to the hook that
/// was in place before.
fn install_capturing_hook() {
    static INSTALL: Once = Once::new();
    INSTALL.call_once(|| {
        let previous = panic::take_hook();
        panic::set_hook(Box::new(move |info| {
            if !CAPTURING.with(Cell::get) {
                return previous(info);
            }
            let payload = info.payload();
            let message = payload
                .downcast_ref::<&str>()
                .map(|s| (*s).to_owned())
                .or_else(|| payload.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "unknown panic payload".to_owned());
            // Only the crate-relative part of the location: registry paths differ per machine.
            let location = info
                .location()
                .map(|l| {
                    let file = l.file();
                    let short = file.find("typify-impl").map_or(file, |at| &file[at..]);
                    format!(" in {short}:{}", l.line())
                })
                .unwrap_or_default();
            CAPTURED.with(|c| *c.borrow_mut() = Some(format!("{message}{location}")));
        }));
    });
}

/// Runs `f`, turning a panic into `Err(message)` without printing anything.
fn catch_panic<T>(f: impl FnOnce() -> T) -> Result<T, String> {
    install_capturing_hook();
    CAPTURING.with(|c| c.set(true));
    let result = panic::catch_unwind(AssertUnwindSafe(f));
    CAPTURING.with(|c| c.set(false));
    result.map_err(|_| {
        CAPTURED
            .with(|c| c.borrow_mut().take())
            .unwrap_or_else(|| "typify panicked".to_owned())
    })
}

fn to_schemars(value: &Value, file: &str, pointer: &str) -> Result<schemars08::schema::Schema, CodegenError> {
    serde_json::from_value(value.clone())
        .map_err(|e| CodegenError::new(file, pointer, format!("not a schema typify can read: {e}")))
}

/// What typify made of the definitions.
#[derive(Debug)]
#[non_exhaustive]
pub struct Typified {
    /// The generated items.
    pub tokens: TokenStream,
    /// Each definition's Rust type name, as typify named it (asked through its API: the type a
    /// `$ref` to the definition resolves to).
    pub def_types: BTreeMap<String, String>,
}

/// The longest typify may take for one schema.
pub const TIME_BUDGET: Duration = Duration::from_secs(30);
/// How much the process's resident memory may grow while typify runs.
pub const MEMORY_BUDGET: u64 = 1 << 30;
/// The stack of typify's thread: deep (finite) schemas recurse deeply in its converter.
pub const STACK_SIZE: usize = 256 << 20;

/// The process's resident memory in bytes, where the platform tells (Linux).
fn resident_bytes() -> Option<u64> {
    let statm = std::fs::read_to_string("/proc/self/statm").ok()?;
    let pages: u64 = statm.split_whitespace().nth(1)?.parse().ok()?;
    Some(pages * 4096)
}

/// Converts `defs` (the normalised `$defs`) with typify and returns the generated tokens and
/// the name of each definition's type, within [`TIME_BUDGET`] and [`MEMORY_BUDGET`].
/// The settings are made by `settings` on typify's thread (they hold proc-macro tokens, which
/// cannot cross threads).
pub fn run(
    defs: &Map<String, Value>,
    settings: fn() -> TypeSpaceSettings,
    file: &str,
) -> Result<Typified, CodegenError> {
    run_within(defs, settings, file, TIME_BUDGET, MEMORY_BUDGET)
}

/// [`run`] with the given bounds.
pub fn run_within(
    defs: &Map<String, Value>,
    settings: fn() -> TypeSpaceSettings,
    file: &str,
    time: Duration,
    memory: u64,
) -> Result<Typified, CodegenError> {
    bounded(defs, settings, file, time, memory).map_err(first)
}

/// The first of a non-empty list of errors.
fn first(mut errors: Vec<CodegenError>) -> CodegenError {
    errors.swap_remove(0)
}

/// [`run_within`], with every definition [`locate_failures`] finds named (one error each, in
/// their order), or one error for the whole set.
fn bounded(
    defs: &Map<String, Value>,
    settings: fn() -> TypeSpaceSettings,
    file: &str,
    time: Duration,
    memory: u64,
) -> Result<Typified, Vec<CodegenError>> {
    let (sender, receiver) = mpsc::channel();
    let (defs_copy, file_copy) = (defs.clone(), file.to_owned());
    let spawned = std::thread::Builder::new()
        .name("pilotage-codegen typify".to_owned())
        .stack_size(STACK_SIZE)
        .spawn(move || {
            // proc_macro2's tokens cannot cross threads: they travel as text.
            let outcome = run_here(&defs_copy, &settings(), &file_copy)
                .map(|typified| (typified.tokens.to_string(), typified.def_types));
            let _ = sender.send(outcome);
        });
    if spawned.is_err() {
        // No thread to be had: convert here, without the bounds.
        return run_here(defs, &settings(), file);
    }
    let started = Instant::now();
    let baseline = resident_bytes();
    loop {
        let elapsed = started.elapsed();
        if elapsed >= time {
            return Err(vec![CodegenError::new(
                file,
                "/$defs",
                format!(
                    "typify did not finish within the time budget of {} s (pilotage_codegen::typify_stage::TIME_BUDGET)",
                    time.as_secs_f64()
                ),
            )]);
        }
        if let (Some(before), Some(now)) = (baseline, resident_bytes()) {
            if now.saturating_sub(before) > memory {
                return Err(vec![CodegenError::new(
                    file,
                    "/$defs",
                    format!(
                        "typify used more than the memory budget of {} MiB (pilotage_codegen::typify_stage::MEMORY_BUDGET)",
                        memory >> 20
                    ),
                )]);
            }
        }
        match receiver.recv_timeout((time - elapsed).min(Duration::from_millis(25))) {
            Ok(outcome) => {
                let (text, def_types) = outcome?;
                let tokens: TokenStream = text.parse().map_err(|e| {
                    vec![CodegenError::new(
                        file,
                        "/$defs",
                        format!("typify produced tokens that do not parse: {e}"),
                    )]
                })?;
                return Ok(Typified { tokens, def_types });
            }
            Err(mpsc::RecvTimeoutError::Disconnected) => {
                return Err(vec![CodegenError::new(
                    file,
                    "/$defs",
                    "typify stopped without an answer",
                )]);
            }
            Err(mpsc::RecvTimeoutError::Timeout) => {}
        }
    }
}

/// The most definitions [`run_with_fallbacks`] types as `serde_json::Value` for one schema:
/// past it, typify's trouble is not one definition's.
pub const MAX_FALLBACKS: usize = 64;

/// A definition typify could not convert, typed as `serde_json::Value` instead.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Fallback {
    /// The definition's name (its `$defs` key).
    pub name: String,
    /// Its JSON Pointer (`/$defs/<name>`).
    pub pointer: String,
    /// Why typify could not convert it.
    pub reason: String,
}

/// [`run`], except that the definitions typify cannot convert (a panic or an error that
/// [`run`] traces to `$defs` entries: each that fails alone or, when none does, the one that
/// completes a failing combination) are replaced in `defs` by a schema
/// accepting any value (typed `serde_json::Value`, its description saying why), and the
/// conversion is tried again, until typify converts the rest. The time budget is for all the
/// tries together. Anything else (a failure no definition is found for, a budget reached, more
/// than [`MAX_FALLBACKS`] definitions) stays an error.
pub fn run_with_fallbacks(
    defs: &mut Map<String, Value>,
    settings: fn() -> TypeSpaceSettings,
    file: &str,
) -> Result<(Typified, Vec<Fallback>), CodegenError> {
    let started = Instant::now();
    let mut fallbacks: Vec<Fallback> = Vec::new();
    loop {
        let remaining = TIME_BUDGET.saturating_sub(started.elapsed());
        let errors = match bounded(defs, settings, file, remaining, MEMORY_BUDGET) {
            Ok(typified) => return Ok((typified, fallbacks)),
            Err(errors) => errors,
        };
        let mut named = Vec::with_capacity(errors.len());
        for error in errors {
            let name = error
                .pointer
                .strip_prefix("/$defs/")
                .filter(|token| !token.contains('/'))
                .map(unescape_pointer_token)
                .filter(|name| defs.contains_key(name) && !fallbacks.iter().any(|f| &f.name == name));
            match name {
                Some(name) if fallbacks.len() + named.len() < MAX_FALLBACKS => named.push((name, error)),
                _ => return Err(error),
            }
        }
        for (name, error) in named {
            // One line: the message may quote typify's multi-line panic.
            let reason = error.message.split_whitespace().collect::<Vec<_>>().join(" ");
            defs.insert(
                name.clone(),
                serde_json::json!({
                    "description": "Any JSON value (serde_json::Value): typify 0.8 cannot type this definition (the generation report says why); the validators check it as the schema says.",
                }),
            );
            fallbacks.push(Fallback {
                pointer: error.pointer,
                name,
                reason,
            });
        }
    }
}

/// Rust prelude types that typify 0.8's output also names unqualified: a definition with one
/// of these names would shadow it in the generated module (a definition `String` makes
/// typify's `impl TryFrom<String> for Name` of a newtype over it mean the definition, which then
/// conflicts with `From<String>`). Such a definition's type is renamed `<Name>Def`.
pub const PRELUDE_TYPES: &[&str] = &["Box", "Option", "Result", "String", "Vec"];

/// `settings` with a rename patch for each definition whose type would take a
/// [`PRELUDE_TYPES`] name: `StringDef` (`StringDef2`, ... when that is taken too).
fn with_prelude_renames(defs: &Map<String, Value>, mut settings: TypeSpaceSettings) -> TypeSpaceSettings {
    let taken: std::collections::BTreeSet<String> = defs.keys().map(|d| crate::render::rust_type_name(d)).collect();
    for def in defs.keys() {
        let name = crate::render::rust_type_name(def);
        if !PRELUDE_TYPES.contains(&name.as_str()) {
            continue;
        }
        let mut renamed = format!("{name}Def");
        let mut n = 2;
        while taken.contains(&renamed) {
            renamed = format!("{name}Def{n}");
            n += 1;
        }
        settings.with_patch(&name, TypeSpacePatch::default().with_rename(renamed));
    }
    settings
}

/// The conversion itself, on the calling thread: on failure, the definitions
/// [`locate_failures`] finds, or one error for the whole set.
fn run_here(
    defs: &Map<String, Value>,
    settings: &TypeSpaceSettings,
    file: &str,
) -> Result<Typified, Vec<CodegenError>> {
    let settings = &with_prelude_renames(defs, settings.clone());
    let mut schemas = Vec::with_capacity(defs.len());
    for (name, schema) in defs {
        let pointer = format!("/$defs/{}", escape_pointer_token(name));
        schemas.push((name.clone(), to_schemars(schema, file, &pointer).map_err(|e| vec![e])?));
    }
    let whole = catch_panic(|| {
        let mut space = TypeSpace::new(settings);
        space.add_ref_types(schemas.clone())?;
        let mut def_types = BTreeMap::new();
        for (name, _) in &schemas {
            let reference = schemars08::schema::Schema::new_ref(format!("#/$defs/{}", escape_pointer_token(name)));
            let id = space.add_type(&reference)?;
            def_types.insert(name.clone(), space.get_type(&id)?.name());
        }
        Ok::<_, typify::Error>(Typified {
            tokens: space.to_stream(),
            def_types,
        })
    });
    let whole_message = match whole {
        Ok(Ok(typified)) => return Ok(typified),
        Ok(Err(error)) => error.to_string(),
        Err(failure) => format!("typify failed: {failure}"),
    };
    let found = locate_failures(&schemas, settings);
    if found.is_empty() {
        return Err(vec![CodegenError::new(
            file,
            "/$defs",
            format!("typify cannot convert these definitions together: {whole_message}"),
        )]);
    }
    Err(found
        .into_iter()
        .map(|(index, message)| {
            CodegenError::new(
                file,
                format!("/$defs/{}", escape_pointer_token(&schemas[index].0)),
                message,
            )
        })
        .collect())
}

/// The definitions that make typify fail, by index, each with typify's complaint: those that
/// *fail alone*, when typify cannot convert them with every other definition replaced by the
/// schema accepting anything (an empty object schema, so that references still resolve and no
/// description is merged in).
///
/// Converting each definition alone costs one conversion of the whole set per definition,
/// quadratic in their number (biome's configuration schema, 2,768 definitions, did not finish in
/// [`TIME_BUDGET`]). So the set is bisected: the definitions of one half are kept, the other
/// made permissive, and the search goes on in every half that fails, down to single
/// definitions, each then tried alone (at most once). Failures are not always monotone (a
/// definition may fail only beside the definition it references), so a half that fails while
/// none of its parts leads to a definition failing alone is searched one definition at a time,
/// as is the whole set when bisecting finds nothing: with `n` definitions of which `k` fail
/// alone, about `2 k log2(n)` conversions, and at worst (nothing fails alone) about `3 n`.
///
/// When no definition fails alone, the answer is the one that completes a failing
/// combination: the last definition of the shortest prefix of the set (in order, the rest
/// permissive) that fails, found by a binary search (`log2(n)` conversions). Typing it as any
/// value breaks the combination; [`run_with_fallbacks`] then tries again.
fn locate_failures(
    schemas: &[(String, schemars08::schema::Schema)],
    settings: &TypeSpaceSettings,
) -> Vec<(usize, String)> {
    struct Search<'a> {
        schemas: &'a [(String, schemars08::schema::Schema)],
        settings: &'a TypeSpaceSettings,
        tried: Vec<bool>,
        found: Vec<(usize, String)>,
    }
    impl Search<'_> {
        /// typify's complaint about the set with only the definitions `keep` picks kept.
        fn kept(&self, keep: impl Fn(usize) -> bool) -> Option<String> {
            let permissive = schemars08::schema::Schema::Object(Default::default());
            let isolated: Vec<_> = self
                .schemas
                .iter()
                .enumerate()
                .map(|(i, (n, s))| (n.clone(), if keep(i) { s.clone() } else { permissive.clone() }))
                .collect();
            let outcome = catch_panic(|| {
                let mut space = TypeSpace::new(self.settings);
                space.add_ref_types(isolated).map(|()| space.to_stream())
            });
            match outcome {
                Ok(Ok(_)) => None,
                Ok(Err(error)) => Some(format!("typify cannot convert this definition: {error}")),
                Err(failure) => Some(format!(
                    "typify 0.8 cannot convert this definition: it hit a construct it does not support (\"{failure}\")"
                )),
            }
        }
        fn alone(&mut self, index: usize) {
            if !std::mem::replace(&mut self.tried[index], true) {
                if let Some(message) = self.kept(|i| i == index) {
                    self.found.push((index, message));
                }
            }
        }
        /// Searches `range`, which fails (or is the whole set).
        fn failing(&mut self, range: Range<usize>) {
            if range.len() == 1 {
                return self.alone(range.start);
            }
            let before = self.found.len();
            let middle = range.start + range.len() / 2;
            for half in [range.start..middle, middle..range.end] {
                if half.len() == 1 {
                    self.alone(half.start);
                } else if self.kept(|i| half.contains(&i)).is_some() {
                    self.failing(half);
                }
            }
            if self.found.len() == before {
                range.for_each(|i| self.alone(i));
            }
        }
        /// The last definition of the shortest failing prefix of the set, when the whole set
        /// fails: a binary search between the empty prefix, which converts, and the whole.
        fn completing(&mut self) {
            let Some(mut message) = self.kept(|i| i < self.schemas.len()) else {
                return;
            };
            let (mut converts, mut fails) = (0, self.schemas.len());
            while fails - converts > 1 {
                let middle = converts + (fails - converts) / 2;
                match self.kept(|i| i < middle) {
                    Some(failure) => (fails, message) = (middle, failure),
                    None => converts = middle,
                }
            }
            let message = message.replacen(
                "cannot convert this definition",
                "cannot convert this definition beside the definitions before it",
                1,
            );
            self.found.push((fails - 1, message));
        }
    }
    let mut search = Search {
        schemas,
        settings,
        tried: vec![false; schemas.len()],
        found: Vec::new(),
    };
    if !schemas.is_empty() {
        search.failing(0..schemas.len());
    }
    if search.found.is_empty() {
        // Nothing fails alone: the definition that completes a failing combination.
        search.completing();
    }
    search.found.sort_by_key(|(index, _)| *index);
    search.found
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn panic_inside_typify_becomes_an_error_naming_the_def() {
        // typify 0.8 panics (todo!) on `if`.
        let defs = json!({
            "Fine": {"type": "string"},
            "Conditional": {"type": "object", "if": {"required": ["a"]}, "then": {"required": ["b"]}}
        });
        let error = run(defs.as_object().unwrap(), TypeSpaceSettings::default, "s.json").unwrap_err();
        assert_eq!(error.pointer, "/$defs/Conditional");
        assert!(error.message.contains("does not support"), "{error}");
        assert!(!error.message.contains("panicked"), "{error}");
    }

    #[test]
    fn a_definition_typify_cannot_convert_falls_back_to_any_value_and_the_rest_converts() {
        let mut defs = json!({
            "Fine": {"type": "object", "properties": {"name": {"type": "string"}}},
            // typify 0.8 asserts on a string newtype whose enum and const are both given.
            "Base": {"type": "object", "properties": {"kind": {"type": "string", "enum": ["a", "b"], "const": "a"}}},
            "Uses": {"type": "object", "properties": {"base": {"$ref": "#/$defs/Base"}, "fine": {"$ref": "#/$defs/Fine"}}}
        })
        .as_object()
        .cloned()
        .unwrap();
        assert!(run(&defs, TypeSpaceSettings::default, "s.json").is_err());
        let (typified, fallbacks) = run_with_fallbacks(&mut defs, TypeSpaceSettings::default, "s.json").unwrap();
        assert_eq!(fallbacks.len(), 1, "{fallbacks:?}");
        assert_eq!(fallbacks[0].pointer, "/$defs/Base");
        assert!(fallbacks[0].reason.contains("does not support"), "{fallbacks:?}");
        assert!(defs["Base"]["description"]
            .as_str()
            .unwrap()
            .contains("serde_json::Value"));
        let code = typified.tokens.to_string();
        assert!(
            code.contains("pub struct Fine") && code.contains("pub struct Uses"),
            "{code}"
        );
        assert_eq!(typified.def_types["Fine"], "Fine");
        // A failure no single definition explains stays an error.
        let mut none: Map<String, Value> = Map::new();
        none.insert("Fine".into(), json!({"type": "string"}));
        assert!(run_with_fallbacks(&mut none, TypeSpaceSettings::default, "s.json").is_ok());
    }

    #[test]
    fn a_definition_named_after_a_prelude_type_is_renamed() {
        let defs = json!({
            "String": {"type": "string", "minLength": 1},
            "StringDef": {"type": "integer"},
            "Name": {"$ref": "#/$defs/String"}
        });
        let typified = run(defs.as_object().unwrap(), TypeSpaceSettings::default, "s.json").unwrap();
        assert_eq!(typified.def_types["String"], "StringDef2");
        assert_eq!(typified.def_types["StringDef"], "StringDef");
        let code = typified.tokens.to_string();
        assert!(!code.contains("pub struct String ("), "{code}");
        assert!(code.contains("pub struct StringDef2"), "{code}");
    }

    #[test]
    fn a_failing_combination_falls_back_on_the_definition_that_completes_it() {
        // vector's `FramingConfig`, reduced: a merge (`allOf`) of a definition whose member is
        // a `$ref` with a description. typify 0.8 asserts (`merged_schema.metadata.is_none()`)
        // only when the merge and the merged definition are both there; the codegen's
        // `annotated_references_as_alternatives` avoids it, but `run` takes what it is given.
        let mut defs = json!({
            "A": {"allOf": [{"$ref": "#/$defs/B"}, {"additionalProperties": {}}]},
            "B": {"properties": {"p": {"$ref": "#/$defs/C", "description": "P."}}},
            "C": {"type": "integer"}
        })
        .as_object()
        .cloned()
        .unwrap();
        let error = run(&defs, TypeSpaceSettings::default, "s.json").unwrap_err();
        assert_eq!(error.pointer, "/$defs/B", "{error}");
        assert!(error.message.contains("beside the definitions before it"), "{error}");
        let (typified, fallbacks) = run_with_fallbacks(&mut defs, TypeSpaceSettings::default, "s.json").unwrap();
        assert_eq!(fallbacks.len(), 1, "{fallbacks:?}");
        assert_eq!(typified.def_types["A"], "A");
        assert_eq!(typified.def_types["C"], "C");
    }

    #[test]
    fn among_many_definitions_each_failing_one_is_found_by_bisection() {
        // 60 definitions that convert, referencing each other, and two that typify 0.8
        // panics on (an `enum` of punctuation only, as in biome's configuration schema:
        // "Failed to make unique variant names"), at positions bisection reaches late.
        let mut defs = Map::new();
        for i in 0..60 {
            let next = format!("#/$defs/D{:02}", (i + 1) % 60);
            defs.insert(
                format!("D{i:02}"),
                json!({"type": "object", "properties": {"next": {"$ref": next}, "n": {"type": "integer"}}}),
            );
        }
        defs.insert("D37x".into(), json!({"type": "string", "enum": ["~=", "|=", "^="]}));
        defs.insert("D51x".into(), json!({"type": "string", "enum": [" ", ">", "+", "~"]}));
        let error = run(&defs, TypeSpaceSettings::default, "s.json").unwrap_err();
        assert_eq!(error.pointer, "/$defs/D37x", "{error}");
        let (typified, fallbacks) = run_with_fallbacks(&mut defs, TypeSpaceSettings::default, "s.json").unwrap();
        let pointers: Vec<&str> = fallbacks.iter().map(|f| f.pointer.as_str()).collect();
        assert_eq!(pointers, ["/$defs/D37x", "/$defs/D51x"]);
        assert!(fallbacks[1].reason.contains("unique variant names"), "{fallbacks:?}");
        assert_eq!(typified.def_types["D59"], "D59");
    }

    #[test]
    fn the_time_budget_is_a_named_error() {
        // Many definitions: converting them takes longer than no time at all.
        let defs: Map<String, Value> = (0..200)
            .map(|i| {
                (
                    format!("D{i}"),
                    json!({"type": "object", "properties": {"a": {"type": "string"}}}),
                )
            })
            .collect();
        let error = run_within(
            &defs,
            TypeSpaceSettings::default,
            "s.json",
            Duration::ZERO,
            MEMORY_BUDGET,
        )
        .unwrap_err();
        assert!(error.message.contains("time budget"), "{error}");
        let error = run_within(&defs, TypeSpaceSettings::default, "s.json", TIME_BUDGET, 0);
        if resident_bytes().is_some() {
            // Either typify finished first or the budget of 0 bytes was exceeded; never a hang.
            if let Err(error) = error {
                assert!(error.message.contains("memory budget"), "{error}");
            }
        }
    }

    #[test]
    fn definition_names_come_from_typify() {
        let defs = json!({
            "plain": {"type": "object", "properties": {"a": {"type": "string"}}},
            "with-dash 2": {"type": "string", "enum": ["x", "y"]}
        });
        let typified = run(defs.as_object().unwrap(), TypeSpaceSettings::default, "s.json").unwrap();
        assert_eq!(typified.def_types["plain"], "Plain");
        assert_eq!(typified.def_types["with-dash 2"], "WithDash2");
        assert!(typified.tokens.to_string().contains("WithDash2"));
    }
}
