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
            return Err(CodegenError::new(
                file,
                "/$defs",
                format!(
                    "typify did not finish within the time budget of {} s (pilotage_codegen::typify_stage::TIME_BUDGET)",
                    time.as_secs_f64()
                ),
            ));
        }
        if let (Some(before), Some(now)) = (baseline, resident_bytes()) {
            if now.saturating_sub(before) > memory {
                return Err(CodegenError::new(
                    file,
                    "/$defs",
                    format!(
                        "typify used more than the memory budget of {} MiB (pilotage_codegen::typify_stage::MEMORY_BUDGET)",
                        memory >> 20
                    ),
                ));
            }
        }
        match receiver.recv_timeout((time - elapsed).min(Duration::from_millis(25))) {
            Ok(outcome) => {
                let (text, def_types) = outcome?;
                let tokens: TokenStream = text.parse().map_err(|e| {
                    CodegenError::new(file, "/$defs", format!("typify produced tokens that do not parse: {e}"))
                })?;
                return Ok(Typified { tokens, def_types });
            }
            Err(mpsc::RecvTimeoutError::Disconnected) => {
                return Err(CodegenError::new(file, "/$defs", "typify stopped without an answer"));
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

/// [`run`], except that a definition typify cannot convert (a panic or an error that
/// [`run`] traces to one `$defs` entry) is replaced in `defs` by a schema accepting any value
/// (typed `serde_json::Value`, its description saying why), and the conversion is tried again,
/// until typify converts the rest. The time budget is for all the tries together. Anything
/// else (a failure of several definitions together, a budget reached, more than
/// [`MAX_FALLBACKS`] definitions) stays an error.
pub fn run_with_fallbacks(
    defs: &mut Map<String, Value>,
    settings: fn() -> TypeSpaceSettings,
    file: &str,
) -> Result<(Typified, Vec<Fallback>), CodegenError> {
    let started = Instant::now();
    let mut fallbacks: Vec<Fallback> = Vec::new();
    loop {
        let remaining = TIME_BUDGET.saturating_sub(started.elapsed());
        let error = match run_within(defs, settings, file, remaining, MEMORY_BUDGET) {
            Ok(typified) => return Ok((typified, fallbacks)),
            Err(error) => error,
        };
        let name = error
            .pointer
            .strip_prefix("/$defs/")
            .filter(|token| !token.contains('/'))
            .map(unescape_pointer_token)
            .filter(|name| defs.contains_key(name) && !fallbacks.iter().any(|f| &f.name == name));
        let Some(name) = name else {
            return Err(error);
        };
        if fallbacks.len() >= MAX_FALLBACKS {
            return Err(error);
        }
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

/// The conversion itself, on the calling thread.
fn run_here(defs: &Map<String, Value>, settings: &TypeSpaceSettings, file: &str) -> Result<Typified, CodegenError> {
    let settings = &with_prelude_renames(defs, settings.clone());
    let mut schemas = Vec::with_capacity(defs.len());
    for (name, schema) in defs {
        let pointer = format!("/$defs/{}", escape_pointer_token(name));
        schemas.push((name.clone(), to_schemars(schema, file, &pointer)?));
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
    match whole {
        Ok(Ok(typified)) => Ok(typified),
        Ok(Err(error)) => Err(locate_failure(&schemas, settings, file, &error.to_string())),
        Err(failure) => Err(locate_failure(
            &schemas,
            settings,
            file,
            &format!("typify failed: {failure}"),
        )),
    }
}

/// Finds which definition makes typify fail: converts each definition alone, with every other
/// definition replaced by the permissive schema `{}` so that references still resolve.
fn locate_failure(
    schemas: &[(String, schemars08::schema::Schema)],
    settings: &TypeSpaceSettings,
    file: &str,
    whole_message: &str,
) -> CodegenError {
    let permissive = schemars08::schema::Schema::Bool(true);
    for (index, (name, _)) in schemas.iter().enumerate() {
        let isolated: Vec<_> = schemas
            .iter()
            .enumerate()
            .map(|(i, (n, s))| (n.clone(), if i == index { s.clone() } else { permissive.clone() }))
            .collect();
        let outcome = catch_panic(|| {
            let mut space = TypeSpace::new(settings);
            space.add_ref_types(isolated).map(|()| space.to_stream())
        });
        let message = match outcome {
            Ok(Ok(_)) => continue,
            Ok(Err(error)) => format!("typify cannot convert this definition: {error}"),
            Err(failure) => format!(
                "typify 0.8 cannot convert this definition: it hit a construct it does not support (\"{failure}\")"
            ),
        };
        return CodegenError::new(file, format!("/$defs/{}", escape_pointer_token(name)), message);
    }
    CodegenError::new(
        file,
        "/$defs",
        format!("typify cannot convert these definitions together: {whole_message}"),
    )
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
