//! The pattern compiler (`pilotage_codegen::validators::regex`) and the runtime matcher
//! (`pilotage_types::validate::pattern`) together, on exactly the program the generator writes:
//! [`regex::compile_owned`] is what [`regex::compile`] turns into tokens, and [`runtime`] leaks
//! it into the same `Pattern` value those tokens build.
//!
//! - Every test of the official JSON Schema Test Suite's pattern files (`pattern.json`,
//!   `patternProperties.json`, `optional/ecmascript-regex.json`, `optional/non-bmp-regex.json`,
//!   draft 2020-12 and draft 7) whose schema uses `pattern` or `patternProperties`: the verdict
//!   must be the suite's. The suite is read in place from `$JSON_SCHEMA_TEST_SUITE`, by default
//!   `<workspace>/../shared/json-schema-test-suite`; without it the test prints `SKIPPED:` (and
//!   fails under `CI=true`).
//! - Random ASCII texts over patterns where ECMA-262 and the `regex` crate agree (word
//!   boundaries, Unicode properties, classes holding properties): the verdicts must be the
//!   `regex` crate's.

use std::path::PathBuf;

use pilotage_codegen::validators::regex::{self, Compiled};
use pilotage_types::validate::pattern::{Class, Dfa, Guard, Inst, Pattern, Step};
use proptest::prelude::*;
use serde_json::Value;

fn leak<T>(items: Vec<T>) -> &'static [T] {
    Box::leak(items.into_boxed_slice())
}

fn class(ranges: Vec<(char, char)>, negated: bool) -> Class {
    Class {
        ranges: leak(ranges),
        negated,
    }
}

/// The runtime `Pattern` the generated tokens for `source` construct and, for a DFA, the same
/// pattern as its Pike VM program alone: every verdict is asked of both, and they must agree.
#[derive(Clone, Copy)]
struct Dual {
    pattern: Pattern,
    vm: Option<Pattern>,
}

impl Dual {
    fn is_match(&self, text: &str) -> bool {
        let verdict = self.pattern.is_match(text);
        if let Some(vm) = &self.vm {
            assert_eq!(
                vm.is_match(text),
                verdict,
                "the DFA and the Pike VM disagree: {:?} on {text:?}",
                self.pattern.source()
            );
        }
        verdict
    }

    fn is_dfa(&self) -> bool {
        self.vm.is_some()
    }
}

fn insts(insts: Vec<regex::Inst>) -> &'static [Inst] {
    leak(
        insts
            .into_iter()
            .map(|inst| match inst {
                regex::Inst::Class(ranges, negated) => Inst::Class(class(ranges, negated)),
                regex::Inst::Split(a, b) => Inst::Split(a, b),
                regex::Inst::Jump(to) => Inst::Jump(to),
                regex::Inst::Start => Inst::Start,
                regex::Inst::End => Inst::End,
                regex::Inst::WordBoundary => Inst::WordBoundary,
                regex::Inst::NotWordBoundary => Inst::NotWordBoundary,
                regex::Inst::Look(negated, next) => Inst::Look { negated, next },
                regex::Inst::LookDfa(negated, tables) => Inst::LookDfa {
                    negated,
                    dfa: leak_dfa(*tables),
                },
                regex::Inst::LookScan { negated, behind, dfa } => Inst::LookScan {
                    negated,
                    behind,
                    dfa: leak_dfa(*dfa),
                },
                regex::Inst::LookBehind(negated, next) => Inst::LookBehind { negated, next },
                regex::Inst::LookEnd => Inst::LookEnd,
                regex::Inst::Match => Inst::Match,
            })
            .collect(),
    )
}

fn leak_dfa(tables: regex::DfaTables) -> &'static Dfa {
    Box::leak(Box::new(Dfa::new(
        Box::leak(Box::new(tables.classes)),
        tables.stride,
        leak(tables.table),
        tables.first_match,
        leak(tables.eoi),
        tables.start,
    )))
}

fn runtime(source: &str) -> Result<Dual, String> {
    let source: &'static str = Box::leak(source.to_owned().into_boxed_str());
    let compiled = regex::compile_owned(source).map_err(|e| e.0)?;
    // The same pattern on the Pike VM alone, where the written one is something else: every
    // verdict is asked of both.
    let vm = match &compiled {
        Compiled::Automaton {
            insts: program,
            anchored,
            ..
        } => Some((program.clone(), *anchored)),
        Compiled::Program {
            insts: program,
            plain,
            anchored,
            ..
        } => (plain != program).then(|| (plain.clone(), *anchored)),
        Compiled::Guarded { plain, .. } => Some((plain.clone(), true)),
        _ => None,
    };
    Ok(Dual {
        pattern: written(source, compiled),
        vm: vm.map(|(program, anchored)| Pattern::Program {
            source,
            insts: insts(program),
            anchored,
        }),
    })
}

/// Asks each case's pattern (through [`runtime`]: a pattern written with DFAs also asks its
/// plain program) for each text's verdict; fails naming every mismatch.
fn assert_verdicts(cases: &[(&str, &[(&str, bool)])]) {
    let mut mismatches = Vec::new();
    for (source, texts) in cases {
        let pattern = match runtime(source) {
            Ok(pattern) => pattern,
            Err(e) => {
                mismatches.push(format!("{source:?}: {e}"));
                continue;
            }
        };
        for (text, expected) in *texts {
            if pattern.is_match(text) != *expected {
                mismatches.push(format!("{source:?} on {text:?}: expected {expected}"));
            }
        }
    }
    assert!(
        mismatches.is_empty(),
        "{} mismatches:\n{}",
        mismatches.len(),
        mismatches.join("\n")
    );
}

/// The `Pattern` the generated tokens build from `compiled`.
fn written(source: &'static str, compiled: Compiled) -> Pattern {
    match compiled {
        Compiled::Automaton {
            dfa, required, lead, ..
        } => Pattern::Automaton {
            source,
            required: Box::leak(required.into_boxed_str()),
            lead,
            dfa: leak_dfa(*dfa),
        },
        Compiled::Literal(text, start, end) => Pattern::Literal {
            source,
            text: Box::leak(text.into_boxed_str()),
            start,
            end,
        },
        Compiled::Sequence(steps) => Pattern::Sequence {
            source,
            steps: leak(
                steps
                    .into_iter()
                    .map(|(ranges, negated, min, max)| Step {
                        class: class(ranges, negated),
                        min,
                        max,
                    })
                    .collect(),
            ),
        },
        Compiled::Guarded { guards, then, .. } => Pattern::Guarded {
            source,
            guards: leak(
                guards
                    .into_iter()
                    .map(|(negated, tables)| Guard {
                        negated,
                        dfa: leak_dfa(tables),
                    })
                    .collect(),
            ),
            then: Box::leak(Box::new(written(source, *then))),
        },
        Compiled::Program {
            insts: program,
            anchored,
            ..
        } => Pattern::Program {
            source,
            insts: insts(program),
            anchored,
        },
    }
}

// ---------------------------------------------------------------------------------------------
// The official suite.

fn suite_root() -> Option<PathBuf> {
    let root = match std::env::var_os("JSON_SCHEMA_TEST_SUITE") {
        Some(path) => PathBuf::from(path),
        None => PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../shared/json-schema-test-suite"),
    };
    if root.join("tests").is_dir() {
        return Some(root);
    }
    let message = format!(
        "the JSON Schema Test Suite is not at {} (set JSON_SCHEMA_TEST_SUITE)",
        root.display()
    );
    if std::env::var("CI").is_ok_and(|ci| ci == "true") {
        panic!("{message}");
    }
    eprintln!("SKIPPED: {message}");
    None
}

const FILES: &[&str] = &[
    "pattern.json",
    "patternProperties.json",
    "optional/ecmascript-regex.json",
    "optional/non-bmp-regex.json",
];

/// The few keywords the suite's pattern tests combine with `pattern`: a schema using any other
/// is not evaluated here (`Err` with the keyword).
fn valid(schema: &Value, instance: &Value, compiled: &mut Vec<(String, Dual)>) -> Result<bool, String> {
    let object = match schema {
        Value::Bool(b) => return Ok(*b),
        Value::Object(object) => object,
        _ => return Err("a schema that is not an object".into()),
    };
    let mut pattern = |source: &str| -> Result<Dual, String> {
        if let Some((_, p)) = compiled.iter().find(|(s, _)| s == source) {
            return Ok(*p);
        }
        let p = runtime(source).map_err(|e| format!("compile error: {e}"))?;
        compiled.push((source.to_owned(), p));
        Ok(p)
    };
    let mut ok = true;
    for (keyword, value) in object {
        match keyword.as_str() {
            "$schema" => {}
            "type" => {
                let is = match value.as_str() {
                    Some("string") => instance.is_string(),
                    Some("object") => instance.is_object(),
                    Some("array") => instance.is_array(),
                    Some("null") => instance.is_null(),
                    Some("boolean") => instance.is_boolean(),
                    Some("number") => instance.is_number(),
                    Some("integer") => instance.as_f64().is_some_and(|n| n.fract() == 0.0),
                    _ => return Err(format!("type {value}")),
                };
                ok &= is;
            }
            "maximum" => {
                let max = value.as_f64().ok_or("a non-numeric maximum")?;
                if let Some(n) = instance.as_f64() {
                    ok &= n <= max;
                }
            }
            "pattern" => {
                let source = value.as_str().ok_or("a non-string pattern")?;
                let p = pattern(source)?;
                if let Some(text) = instance.as_str() {
                    ok &= p.is_match(text);
                }
            }
            "patternProperties" | "additionalProperties" => {}
            other => return Err(format!("keyword {other}")),
        }
    }
    let properties = object.get("patternProperties").and_then(Value::as_object);
    let additional = object.get("additionalProperties");
    if let Some(members) = instance.as_object() {
        let mut patterns = Vec::new();
        for (source, sub) in properties.into_iter().flatten() {
            patterns.push((pattern(source)?, sub));
        }
        for (name, member) in members {
            let mut matched = false;
            for (p, sub) in &patterns {
                if p.is_match(name) {
                    matched = true;
                    ok &= valid(sub, member, compiled)?;
                }
            }
            if let (false, Some(additional)) = (matched, additional) {
                ok &= valid(additional, member, compiled)?;
            }
        }
    }
    Ok(ok)
}

#[test]
fn the_official_suite_pattern_tests_get_the_suites_verdicts() {
    let Some(root) = suite_root() else { return };
    let mut mismatches = Vec::new();
    let (mut checked, mut skipped) = (0usize, Vec::new());
    for draft in ["draft2020-12", "draft7"] {
        for file in FILES {
            let path = root.join("tests").join(draft).join(file);
            let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            let groups: Vec<Value> = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            for group in &groups {
                let schema = &group["schema"];
                let description = group["description"].as_str().unwrap_or_default();
                // Groups about other keywords (`format: regex`, ...) are not this test's.
                if schema.get("pattern").is_none() && schema.get("patternProperties").is_none() {
                    skipped.push(format!("{draft}/{file}: {description} (no pattern)"));
                    continue;
                }
                let mut compiled = Vec::new();
                for test in group["tests"].as_array().into_iter().flatten() {
                    let expected = test["valid"].as_bool().unwrap_or_default();
                    let what = format!(
                        "{draft}/{file}: {description} / {} (schema {schema}, data {})",
                        test["description"].as_str().unwrap_or_default(),
                        test["data"]
                    );
                    match valid(schema, &test["data"], &mut compiled) {
                        Ok(verdict) => {
                            checked += 1;
                            if verdict != expected {
                                mismatches.push(format!("{what}: expected valid={expected}, got {verdict}"));
                            }
                        }
                        Err(e) if e.starts_with("compile error") => {
                            checked += 1;
                            mismatches.push(format!("{what}: {e}"));
                        }
                        Err(e) => skipped.push(format!("{what}: {e}")),
                    }
                }
            }
        }
    }
    eprintln!(
        "suite: {checked} tests checked, {} mismatches, {} skipped:",
        mismatches.len(),
        skipped.len()
    );
    for skip in &skipped {
        eprintln!("  skipped {skip}");
    }
    assert!(checked > 100, "only {checked} suite tests checked");
    assert!(
        mismatches.is_empty(),
        "{} mismatches:\n{}",
        mismatches.len(),
        mismatches.join("\n")
    );
}

// ---------------------------------------------------------------------------------------------
// ECMA-262 with the `u` flag, case by case.

/// Patterns and texts with the verdicts of `new RegExp(pattern, "u").test(text)` (checked with
/// Node.js 20, V8 11.3).
const ECMA_CASES: &[(&str, &[(&str, bool)])] = &[
    // Identity escapes of ASCII punctuation: the character itself (Annex B; accepted though
    // the `u` flag refuses them, because real schemas write them).
    ("^a\\-b\\_c$", &[("a-b_c", true), ("a\\-b\\_c", false), ("ab_c", false)]),
    ("^\\u{1F432}$", &[("\u{1f432}", true)]),
    ("^\\uD83D\\uDC32$", &[("\u{1f432}", true)]),
    ("^[\\uD83D\\uDC32]$", &[("\u{1f432}", true)]),
    ("^[\\uD800-\\uDFFF]$", &[("a", false), ("\u{1f432}", false)]),
    ("^\\uD83D$", &[("\u{1f432}", false), ("a", false)]),
    (
        "^.$",
        &[
            ("\u{1f432}", true),
            ("\u{d}", false),
            ("\u{a}", false),
            ("\u{2028}", false),
            ("a", true),
        ],
    ),
    ("^[^a]$", &[("\u{1f432}", true)]),
    ("^\\S$", &[("\u{1f432}", true)]),
    (
        "\\bfoo\\b",
        &[
            ("a foo b", true),
            ("afoo", false),
            ("foo_", false),
            ("foo-", true),
            ("foo", true),
        ],
    ),
    ("\\Bfoo", &[("afoo", true), ("foo", false), (" foo", false)]),
    (
        "\\B",
        &[
            ("", true),
            (" ", true),
            ("a", false),
            ("ab", true),
            ("a b", false),
            // Every position between code points has a word character on one side; a DFA
            // reading bytes would find `\B` between the two bytes of `\u{e9}`.
            ("a\u{e9}a", false),
        ],
    ),
    ("^\\b$", &[("", false), ("a", false)]),
    ("^\\B$", &[("", true)]),
    ("a\\b", &[("a", true), ("ab", false), ("a!", true), ("a\u{e9}", true)]),
    ("\u{e9}\\b", &[("\u{e9}", false), ("\u{e9}a", true), ("\u{e9}!", false)]),
    ("\\b\u{e9}", &[("\u{e9}", false), ("a\u{e9}", true)]),
    (
        "^(?=.*\\bfoo\\b).*$",
        &[("x foo y", true), ("xfoo y", false), ("foo", true)],
    ),
    ("^.(?=\\b)", &[("a ", true), ("ab", false), ("  ", false)]),
    ("(?!\\B)a", &[("a", true), ("ba", false), (" a", true)]),
    ("(?:\\b|x)y", &[("y", true), ("xy", true), ("ay", false)]),
    ("^\\cJ$", &[("\u{a}", true)]),
    ("^[\\cA-\\cZ]+$", &[("\u{1}\u{1a}", true), ("a", false)]),
    ("^[\\b]$", &[("\u{8}", true), ("b", false)]),
    ("^\\0$", &[("\u{0}", true), ("0", false)]),
    ("^[\\0]$", &[("\u{0}", true)]),
    ("^\\x41$", &[("A", true)]),
    ("^\\/$", &[("/", true)]),
    ("^[\\/\\-\\]]+$", &[("/-]", true)]),
    ("^\\u{0000000041}$", &[("A", true)]),
    ("^\\p{Lu}+$", &[("\u{c0}B", true), ("a", false), ("AB", true)]),
    ("^\\P{L}$", &[("1", true), ("a", false), ("\u{1f432}", true)]),
    ("^[^\\p{L}\\d]$", &[("1", false), ("a", false), ("-", true)]),
    ("^[\\P{L}]$", &[("1", true), ("a", false)]),
    ("^[^\\P{L}]$", &[("1", false), ("a", true), ("\u{e9}", true)]),
    (
        "^\\p{Script=Greek}+$",
        &[("\u{3b1}\u{3b2}\u{3b3}", true), ("abc", false)],
    ),
    ("^\\p{sc=Grek}+$", &[("\u{3b1}\u{3b2}\u{3b3}", true), ("abc", false)]),
    (
        "^\\p{scx=Grek}+$",
        &[("\u{3b1}\u{3b2}\u{3b3}", true), ("\u{342}", true), ("abc", false)],
    ),
    ("^\\p{sc=Grek}+$", &[("\u{342}", false)]),
    ("^\\p{Script_Extensions=Latin}+$", &[("abc", true), ("\u{363}", true)]),
    ("^\\p{ASCII}+$", &[("abc~\u{7f}", true), ("\u{e9}", false)]),
    ("^\\p{Any}$", &[("\u{1f432}", true), ("\u{a}", true)]),
    ("^\\p{Assigned}$", &[("a", true), ("\u{378}", false)]),
    ("^\\p{White_Space}$", &[("\u{85}", true), (" ", true)]),
    ("^\\s$", &[("\u{85}", false), ("\u{feff}", true)]),
    ("^\\p{space}$", &[("\u{feff}", false)]),
    ("^\\p{Emoji}$", &[("\u{1f432}", true), ("#", true), ("a", false)]),
    ("^\\p{digit}+$", &[("\u{9ea}\u{9e8}", true), ("12", true)]),
    ("^\\p{gc=digit}+$", &[("\u{9ea}\u{9e8}", true)]),
    ("^\\p{General_Category=Decimal_Number}+$", &[("\u{9ea}\u{9e8}", true)]),
    ("^\\p{punct}$", &[("!", true), ("a", false)]),
    ("^\\p{cntrl}$", &[("\u{1}", true), ("a", false)]),
    ("^\\p{Combining_Mark}$", &[("\u{301}", true), ("a", false)]),
    ("^\\p{LC}$", &[("a", true), ("\u{aa}", false)]),
    ("^\\p{Cs}$", &[("a", false)]),
    ("^\\P{Cs}$", &[("a", true), ("\u{1f432}", true)]),
    ("^\\p{Cn}$", &[("\u{378}", true), ("a", false)]),
    (
        "^\\p{C}$",
        &[("\u{378}", true), ("\u{1}", true), ("\u{e000}", true), ("a", false)],
    ),
    ("^\\p{Alpha}$", &[("a", true), ("1", false)]),
    ("^\\p{Lower}$", &[("a", true), ("A", false), ("\u{aa}", true)]),
    ("^\\p{RI}$", &[("\u{1f1e6}", true), ("a", false)]),
    ("^\\p{ID_Start}\\p{ID_Continue}*$", &[("a1", true), ("1a", false)]),
    ("^\\p{Hex}+$", &[("fF0", true), ("g", false)]),
    ("^\\p{sc=Zyyy}$", &[("1", true), ("a", false)]),
    ("^\\p{sc=Qaai}$", &[("\u{301}", true)]),
    ("^\\p{Script=Inherited}$", &[("\u{301}", true)]),
    ("abc$", &[("abc\u{a}", false), ("abc", true)]),
    ("^$", &[("", true), ("\u{a}", false)]),
    ("^a{2}$", &[("aa", true), ("a", false)]),
    ("^a{2,}?$", &[("aaaa", true), ("a", false)]),
    ("^(?<year>\\d{4})-(?<m>\\d\\d)$", &[("2020-01", true), ("20-01", false)]),
    ("^(?<$\u{e9}_1>a)$", &[("a", true)]),
    ("^[]$", &[("", false), ("a", false)]),
    ("^[^]$", &[("a", true), ("\u{a}", true)]),
    ("^[[]$", &[("[", true)]),
    ("^[a-b-c]+$", &[("a-c", true), ("ab", true), ("d", false)]),
    ("^[\\w-]+$", &[("a-", true), ("!", false)]),
    ("^[--a]+$", &[("-0a", true), ("b", false)]),
    ("^[\\s\\S]$", &[("\u{a}", true)]),
    ("^(?:a|b)*?c$", &[("ababc", true), ("abd", false)]),
    ("(a*)*b", &[("aaab", true), ("aaa", false)]),
    ("^(?!a)\\w+$", &[("ba", true), ("ab", false)]),
    ("^(?=(a+))a*b$", &[("aaab", true)]),
    ("^(a|ab)(c|bcd)(d*)$", &[("abcd", true)]),
    ("\\u0041\\u{42}", &[("xABx", true)]),
    // Items at either end that match the empty text anywhere are trimmed (`^x-.*` is `^x-`).
    ("^x-.*", &[("x-", true), ("x-\n", true), ("y", false), ("x", false)]),
    (".*", &[("", true), ("\n", true)]),
    ("[a-z]*foo", &[("FOO", false), ("1foo", true), ("fo", false)]),
    ("^a.*$", &[("a\nb", false), ("a", true), ("ab", true)]),
    ("(?:a|)b*c?", &[("", true), ("x", true)]),
    ("^\\.json.*|x*$", &[("q", true), (".jsonx", true)]),
    ("a.*(?=b)", &[("ab", true), ("a", false), ("ba", false)]),
    ("\\d+.*", &[("x", false), ("x1", true)]),
];

#[test]
fn patterns_get_ecma_262s_verdicts() {
    let mut mismatches = Vec::new();
    let mut dfas = 0;
    for (source, texts) in ECMA_CASES {
        match runtime(source) {
            Ok(pattern) => {
                dfas += usize::from(pattern.is_dfa());
                for (text, expected) in *texts {
                    if pattern.is_match(text) != *expected {
                        mismatches.push(format!("{source:?} on {text:?}: expected {expected}"));
                    }
                }
            }
            Err(e) => mismatches.push(format!("{source:?}: {e}")),
        }
    }
    assert!(
        mismatches.is_empty(),
        "{} mismatches:\n{}",
        mismatches.len(),
        mismatches.join("\n")
    );
    // Most cases are literals, sequences or look-arounds; those that are DFAs had each text
    // answered by both matchers (`Dual`).
    assert!(dfas >= 10, "only {dfas} of {} cases ran a DFA", ECMA_CASES.len());
}

/// Patterns that are syntax errors under the `u` flag (Node.js 20 agrees) and that ECMA-262
/// Annex B does not read either (or reads as another thing than the `u` flag would), or that
/// ECMA-262 takes but the runtime cannot honour (back-references, modifiers,
/// `Changes_When_NFKC_Casefolded`, a count above `u32::MAX`).
const REFUSED: &[&str] = &[
    "[\\p{L}-z]",
    // Annex B would read these (a lone `]`, a lone `{`), but their property or braced escape
    // means another thing there: refused.
    "\\p{L}]",
    "\\u{41}{",
    "\\P{Lu}-[\\w-.]",
    "\\p{letter}",
    "\\p{Latin}",
    "\\p{Script=latin}",
    "\\p{sc=Latn1}",
    "\\p{Lu=Y}",
    "\\p{ASCII=Y}",
    "\\p{gc=ASCII}",
    "\\p{gc=Any}",
    "\\p{CWKCF}",
    "\\p{Changes_When_NFKC_Casefolded}",
    "\\p{Basic_Emoji}",
    "\\p",
    "\\p{L",
    "\\p{}",
    "\\P{",
    "\\p{ L}",
    "\\01",
    "\\00",
    "[\\01]",
    "\\1",
    "(a)\\1",
    "[\\1]",
    "(?i:a)",
    "(?i)a",
    "\\k<a>",
    "(?<a>x)\\k<a>",
    "(?<a>x)(?<a>y)",
    "(?<>x)",
    "(?<1a>x)",
    "(?<a",
    "\\b*",
    "\\B+",
    "^*",
    "$?",
    "(?=a)*",
    "(?!a){2}",
    "a**",
    "a{2}{3}",
    "a???",
    "x{3,1}",
    "[z-a]",
    "\\u{110000}",
    "\\u{}",
    "\\u{12",
    "(",
    ")",
    "(a",
    "a)",
    "[a",
    "*a",
    "+",
    "?",
    "{2}",
    "a{99999999999}",
    "\\",
];

/// Patterns the `u` flag refuses and ECMA-262 Annex B (B.1.2) reads, with the verdicts of
/// `new RegExp(pattern).test(text)` (no flag; checked with Node.js 20, V8 11.3), whose
/// `new RegExp(pattern, "u")` throws.
const ANNEX_B_CASES: &[(&str, &[(&str, bool)])] = &[
    ("^\\a$", &[("a", true), ("\\a", false), ("\u{7}", false)]),
    ("^\\ $", &[(" ", true), ("\\ ", false)]),
    ("^\\e$", &[("e", true), ("\u{1b}", false)]),
    ("^\\\u{e9}$", &[("\u{e9}", true), ("e", false)]),
    ("^{$", &[("{", true)]),
    ("^}$", &[("}", true)]),
    ("^]$", &[("]", true), ("", false)]),
    ("^a{$", &[("a{", true), ("a", false)]),
    ("^a{,5}$", &[("a{,5}", true), ("aaaaa", false), ("a", false)]),
    ("^a{1,2$", &[("a{1,2", true), ("a", false)]),
    ("^x{2, 3}$", &[("x{2, 3}", true), ("xx", false)]),
    (
        "^[\\w-z]+$",
        &[("ab_-z", true), ("a.b", false), ("-", true), ("Z9", true)],
    ),
    ("^[a-\\d]+$", &[("a-1", true), ("b", false), ("-", true)]),
    ("^[\\w-_.]+$", &[("a-b_c.d", true), ("a b", false), (".", true)]),
    ("^\\c1$", &[("\\c1", true), ("\u{11}", false)]),
    ("^\\c$", &[("\\c", true), ("c", false)]),
    (
        "^[\\c_]$",
        &[("\u{1f}", true), ("_", false), ("c", false), ("\\", false)],
    ),
    ("^\\u12$", &[("u12", true), ("\u{12}", false)]),
    ("^\\x1$", &[("x1", true), ("\u{1}", false)]),
    ("^\\xg0$", &[("xg0", true)]),
    ("^[\\B]$", &[("B", true), ("\\", false)]),
    ("^[^\\]]*]$", &[("abc]", true), ("abc", false)]),
];

#[test]
fn annex_b_patterns_get_its_verdicts_and_a_note() {
    let unnoted: Vec<String> = ANNEX_B_CASES
        .iter()
        .filter_map(|(source, _)| match regex::write(source) {
            Ok(written) if written.annex_b.is_empty() => Some(format!("{source:?}: read without a note")),
            Ok(_) => None,
            Err(e) => Some(format!("{source:?}: {}", e.0)),
        })
        .collect();
    assert!(unnoted.is_empty(), "{}", unnoted.join("\n"));
    assert_verdicts(ANNEX_B_CASES);
    // A pattern under the `u` flag keeps its reading, with no note.
    for (source, _) in ECMA_CASES {
        if let Ok(written) = regex::write(source) {
            assert!(written.annex_b.is_empty(), "{source:?}: {:?}", written.annex_b);
        }
    }
}

/// Look-behind (`(?<=...)`, `(?<!...)`), with the verdicts of Node 20's `RegExp` with the `u`
/// flag (`new RegExp(pattern, "u").test(text)`): alternation, counted and unbounded repetition,
/// anchors and word boundaries inside, a look-ahead and a negative look-behind nested, astral
/// characters, one inside a look-ahead.
const LOOK_BEHIND_CASES: &[(&str, &[(&str, bool)])] = &[
    (
        "(?<=a)b",
        &[
            ("ab", true),
            ("b", false),
            ("cb", false),
            ("aab", true),
            ("ba", false),
            ("", false),
        ],
    ),
    (
        "(?<!a)b",
        &[
            ("ab", false),
            ("b", true),
            ("cb", true),
            ("aab", false),
            ("ba", true),
            ("abb", true),
        ],
    ),
    ("^(?<=^)a", &[("a", true), ("ba", false)]),
    (
        "(?<=^\\$)\\d+(\\.\\d\\d)?$",
        &[
            ("$10", true),
            ("$10.50", true),
            ("\u{20ac}10", false),
            ("x$10", false),
            ("$", false),
        ],
    ),
    (
        "(?<=ab|c)d",
        &[("abd", true), ("cd", true), ("bd", false), ("ad", false), ("xcd", true)],
    ),
    (
        "(?<=a{2,3})x",
        &[("aax", true), ("ax", false), ("aaax", true), ("baax", true)],
    ),
    (
        "(?<=\\bfoo)bar",
        &[("foobar", true), ("xfoobar", false), ("bar", false), (" foobar", true)],
    ),
    (
        "(?<=\u{e9})\u{fc}",
        &[("\u{e9}\u{fc}", true), ("e\u{fc}", false), ("\u{fc}", false)],
    ),
    (
        "(?<=\u{1f600})x",
        &[("\u{1f600}x", true), ("x", false), ("a\u{1f600}x", true)],
    ),
    ("(?<=a(?=b)b)c", &[("abc", true), ("ac", false), ("abbc", false)]),
    ("(?<=(?<!x)a)b", &[("ab", true), ("xab", false), ("yab", true)]),
    (
        "^(?!.*(?<=\\.)\\.).*$",
        &[("a.b", true), ("a..b", false), ("..", false), ("", true)],
    ),
    ("(?<!=)x", &[("=x", false), ("x", true), ("ax", true)]),
    (
        "(?<=[a-c]+)d$",
        &[("ad", true), ("cbad", true), ("d", false), ("xd", false)],
    ),
    (
        "(?<=^[^/]+/)[a-z]+$",
        &[("a/b", true), ("/b", false), ("a/b/c", false), ("ab", false)],
    ),
    (
        "^.{3}(?<=abc)",
        &[("abc", true), ("abcd", true), ("xbc", false), ("ab", false)],
    ),
    ("(?<=\\s)@", &[(" @", true), ("@", false), ("\t@", true), ("a@", false)]),
];

#[test]
fn look_behind_matches_as_ecma_262_does() {
    assert_verdicts(LOOK_BEHIND_CASES);
    // A quantified look-behind is no pattern, as in ECMA-262.
    for source in ["(?<=a)*b", "(?<!a){2}b"] {
        let message = regex::compile(source).map(|_| ()).unwrap_err().0;
        assert!(message.contains("a quantifier on an assertion"), "{source}: {message}");
    }
}

/// Look-ahead with the verdicts of Node 20's `RegExp` with the `u` flag: bodies a DFA decides
/// (alternations of names, `$`, `.*`, counted repetition, astral characters) and bodies it
/// cannot (a word boundary, a nested look-ahead), beside a look-behind.
const LOOK_AHEAD_CASES: &[(&str, &[(&str, bool)])] = &[
    (
        "^(?!aliases|audio|build|date)$",
        &[
            ("", true),
            ("audio", false),
            ("x", false),
            ("aliases", false),
            ("al", false),
        ],
    ),
    (
        "^(?!aliases|audio|build|date).*$",
        &[
            ("", true),
            ("audio", false),
            ("audiox", false),
            ("x", true),
            ("dat", true),
            ("date", false),
        ],
    ),
    (
        "^(?!a|ab)\\w+$",
        &[("ab", false), ("ba", true), ("b", true), ("a", false), ("", false)],
    ),
    (
        "(?=\\d{2}$)",
        &[
            ("12", true),
            ("a12", true),
            ("1", false),
            ("123", true),
            ("12\n", false),
            ("", false),
        ],
    ),
    (
        "^(?=.*[A-Z])(?=.*\\d).{8,}$",
        &[
            ("abcdefgH1", true),
            ("abcdefgh1", false),
            ("ABCDEFGH", false),
            ("aB1", false),
            ("aaaaaaB1", true),
            ("\u{e9}\u{e9}\u{e9}\u{e9}\u{e9}\u{e9}B1", true),
        ],
    ),
    (
        "^(?!.*\\.\\.)[a-z.]+$",
        &[
            ("a.b", true),
            ("a..b", false),
            ("..", false),
            ("abc", true),
            ("", false),
        ],
    ),
    (
        "x(?=\u{e9}|\u{1f600})",
        &[
            ("x\u{e9}", true),
            ("x\u{1f600}", true),
            ("xe", false),
            ("x", false),
            ("ax\u{1f600}b", true),
        ],
    ),
    (
        "^(?!\\s)(?!.*\\s$).*$",
        &[
            ("a b", true),
            (" a", false),
            ("a ", false),
            ("", true),
            ("\u{a0}a", false),
        ],
    ),
    ("a(?=$)", &[("a", true), ("ab", false), ("ba", true)]),
    ("a(?!$)", &[("a", false), ("ab", true), ("ba", false)]),
    ("(?=\\bfoo)", &[("foo", true), ("afoo", false), ("a foo", true)]),
    ("^(?!(?=a)b)", &[("a", true), ("b", true), ("", true)]),
    ("(?<=x)(?=y)", &[("xy", true), ("yx", false), ("x y", false)]),
    (
        "^[a-z]+(?!\\d)",
        &[("abc", true), ("abc1", true), ("ab1c", true), ("1", false)],
    ),
];

/// The look-aheads the generator writes as a DFA ([`regex::Inst::LookDfa`]): exactly those
/// whose body has no look-around, `^`, `\b` or `\B`.
const LOOK_AHEAD_DFAS: &[(&str, usize)] = &[
    ("^(?!aliases|audio|build|date)$", 1),
    ("^(?=.*[A-Z])(?=.*\\d).{8,}$", 2),
    ("(?=\\d{2}$)", 1),
    ("x(?=\u{e9}|\u{1f600})", 1),
    ("(?=\\bfoo)", 0),
    ("^(?!(?=a)b)", 1),
    ("(?<=x)(?=y)", 1),
];

/// Look-arounds of unbounded (or long) body, with the verdicts of Node 20's `RegExp` with the `u`
/// flag: the bodies a DFA decides are one pass over the whole text ([`regex::Inst::LookScan`]:
/// reversed for a look-ahead), `^`, `$` and `\b` inside them included; one with a look-around of
/// its own stays a sub-program, and the generation report says it may be quadratic.
const LOOK_SCAN_CASES: &[(&str, &[(&str, bool)])] = &[
    (
        "(?=.*\\d)",
        &[
            ("abc", false),
            ("a1", true),
            ("", false),
            ("1", true),
            ("\u{e9}1", true),
        ],
    ),
    (
        "^(?:(?!.*x).)*$",
        &[
            ("abx", false),
            ("ab", true),
            ("", true),
            ("xa", false),
            ("a\u{e9}", true),
        ],
    ),
    (
        "(?<=a.*)b",
        &[
            ("ab", true),
            ("b", false),
            ("a-b", true),
            ("ba", false),
            ("\u{1f600}ab", true),
        ],
    ),
    ("(?<!a.*)b", &[("b", true), ("ab", false), ("bab", true), ("cb", true)]),
    (
        "(?=.*\\bfoo)",
        &[("afoo", false), ("a foo", true), ("foo", true), ("", false)],
    ),
    ("(?=^.*a)x", &[("xa", true), ("bxa", false), ("x", false)]),
    ("a(?=.*$)", &[("a", true), ("ba", true), ("", false)]),
    ("(?<=^a.*)b", &[("acb", true), ("cab", false), ("ab", true)]),
    ("(?<=\\bfoo.*)x", &[("foo x", true), ("afoo x", false), ("foox", true)]),
    ("(?=.*\u{e9})", &[("\u{1f600}\u{e9}", true), ("e", false), ("", false)]),
    (
        "(?<=\u{1f600}.*)x",
        &[("\u{1f600}ax", true), ("ax", false), ("x\u{1f600}", false)],
    ),
    ("(?!.*(?=a)b)", &[("ab", true), ("b", true), ("", true)]),
    (
        "x(?=[a-z]{40})",
        &[
            ("xaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", true),
            ("xaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", false),
            ("yaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", false),
        ],
    ),
    ("(?<=a*)b", &[("b", true), ("ab", true), ("", false)]),
    ("(?=.*\\d$)", &[("a1", true), ("1a", false), ("", false)]),
    (
        "(?<![a-z]{33})1",
        &[
            ("1", true),
            ("aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa1", false),
            ("aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa1", true),
            ("2aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa1", false),
        ],
    ),
    ("^(?:a(?<!b.*))+$", &[("aaa", true), ("", false), ("ba", false)]),
    // Matches of the body after the first one the pass finds: a DFA that stops at the first
    // (leftmost-first) misses the one at the start.
    (
        "^x?(?=ab*c)",
        &[
            ("acxac", true),
            ("xac", true),
            ("abbcab", true),
            ("ab", false),
            ("xacbac", true),
        ],
    ),
    ("(?<=ab*c)x$", &[("acxacx", true), ("acx", true), ("abx", false)]),
    // A negated look-behind that holds at some positions and not at others.
    (
        "^(?:[ab](?<!b.*))+$",
        &[("aa", true), ("ab", false), ("ba", false), ("", false)],
    ),
    // Reversed and unanchored, the body needs about 2^21 states: no scan; walked forward, a
    // DFA of 22 states.
    (
        "x(?=[ab]{20}a[ab]*)",
        &[
            ("xaaaaaaaaaaaaaaaaaaaaa", true),
            ("xbbbbbbbbbbbbbbbbbbbba", true),
            ("xaaaaaaaaaaaaaaaaaaaa", false),
            ("xb", false),
        ],
    ),
    // Long but bounded, with a look-ahead of its own: a sub-program, read at most 40
    // characters from each position.
    (
        "x(?=(?=a)[a-z]{40})",
        &[
            ("xaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", true),
            ("xbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb", false),
            ("xaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", false),
        ],
    ),
];

/// How many [`regex::Inst::LookScan`]s each pattern of [`LOOK_SCAN_CASES`] is written with, and
/// whether the generation report calls it quadratic.
const LOOK_SCANS: &[(&str, usize, bool)] = &[
    ("(?=.*\\d)", 1, false),
    ("^(?:(?!.*x).)*$", 1, false),
    ("(?<=a.*)b", 1, false),
    ("(?<!a.*)b", 1, false),
    ("(?=.*\\bfoo)", 1, false),
    ("(?=^.*a)x", 1, false),
    ("a(?=.*$)", 1, false),
    ("(?<=^a.*)b", 1, false),
    ("(?<=\\bfoo.*)x", 1, false),
    ("(?=.*\u{e9})", 1, false),
    ("(?<=\u{1f600}.*)x", 1, false),
    // The outer body has a look-ahead of its own: a sub-program (the inner one, short, is a
    // DFA walked from its position).
    ("(?!.*(?=a)b)", 0, true),
    // Bounded, but longer than a walk from each position should read.
    ("x(?=[a-z]{40})", 1, false),
    ("(?<=a*)b", 1, false),
    ("(?=.*\\d$)", 1, false),
    ("(?<![a-z]{33})1", 1, false),
    // `+` is its body, then a starred copy: two instructions, each scanned once.
    ("^(?:a(?<!b.*))+$", 2, false),
    ("^x?(?=ab*c)", 1, false),
    ("(?<=ab*c)x$", 1, false),
    ("^(?:[ab](?<!b.*))+$", 2, false),
    // Walked from each position, possibly to the text's end: quadratic.
    ("x(?=[ab]{20}a[ab]*)", 0, true),
    ("x(?=(?=a)[a-z]{40})", 0, false),
];

#[test]
fn unbounded_look_arounds_are_one_pass_and_match_as_ecma_262_does() {
    assert_verdicts(LOOK_SCAN_CASES);
    assert_eq!(LOOK_SCANS.len(), LOOK_SCAN_CASES.len());
    for ((source, scans, quadratic), (case, _)) in LOOK_SCANS.iter().zip(LOOK_SCAN_CASES) {
        assert_eq!(source, case, "the two tables list the same patterns");
        let written = regex::write(source).unwrap();
        let Compiled::Program { insts, .. } = regex::compile_owned(source).unwrap() else {
            panic!("{source:?}: not a program");
        };
        let count = insts
            .iter()
            .filter(|inst| matches!(inst, regex::Inst::LookScan { .. }))
            .count();
        assert_eq!(count, *scans, "{source:?}");
        assert_eq!(
            written.vm_reason.is_some_and(|why| why.contains("quadratic")),
            *quadratic,
            "{source:?}: {:?}",
            written.vm_reason
        );
    }
    // The walked body keeps a DFA.
    let Compiled::Program { insts, .. } = regex::compile_owned("x(?=[ab]{20}a[ab]*)").unwrap() else {
        panic!("not a program");
    };
    assert!(insts.iter().any(|inst| matches!(inst, regex::Inst::LookDfa(..))));
    // The copies of a counted repetition's body name one table, which the runtime scans once
    // for all of them (`pattern.rs`, `look_scans_read_the_text_once`).
    let tokens = regex::compile("^(?:(?!.*x)[a-z.]){1,255}$").unwrap().to_string();
    assert_eq!(tokens.matches("LookScan").count(), 255, "one instruction a copy");
    assert_eq!(tokens.matches("Dfa :: new").count(), 1, "one table: {}", &tokens[..300]);
}

#[test]
fn look_ahead_matches_as_ecma_262_does_with_or_without_a_dfa() {
    assert_verdicts(LOOK_AHEAD_CASES);
    for (source, expected) in LOOK_AHEAD_DFAS {
        // Look-aheads at the start of an anchored pattern guard it ([`Compiled::Guarded`]);
        // others are instructions of a program.
        let dfas = match regex::compile_owned(source).unwrap() {
            Compiled::Program { insts, .. } => insts
                .iter()
                .filter(|inst| matches!(inst, regex::Inst::LookDfa(..)))
                .count(),
            Compiled::Guarded { guards, .. } => guards.len(),
            other => panic!("{source:?}: {other:?}"),
        };
        assert_eq!(dfas, *expected, "{source:?}");
    }
    for (source, guards) in [
        ("^(?!aliases|audio|build|date)$", 1),
        ("^(?=.*[A-Z])(?=.*\\d).{8,}$", 2),
        ("^(?!x-|\\$)[a-z]+$", 1),
    ] {
        match regex::compile_owned(source).unwrap() {
            Compiled::Guarded { guards: written, .. } => assert_eq!(written.len(), guards, "{source:?}"),
            other => panic!("{source:?}: not guarded: {other:?}"),
        }
    }
}

/// A pattern whose ends match the empty text anywhere is compiled without them: `^x-.*` is the
/// prefix test `^x-`, `.*` every text; an anchor or an assertion stops the trimming.
#[test]
fn ends_that_match_the_empty_text_are_trimmed() {
    for (source, text, start, end) in [
        ("^x-.*", "x-", true, false),
        (".*\\.json", ".json", false, false),
        (".*", "", false, false),
        ("^.*", "", true, false),
        ("(?:ab)?c[0-9]*", "c", false, false),
    ] {
        match regex::compile_owned(source).unwrap() {
            Compiled::Literal(t, s, e) => assert_eq!((t.as_str(), s, e), (text, start, end), "{source:?}"),
            other => panic!("{source:?}: {other:?}"),
        }
    }
    for source in ["^a.*$", "a.*\\b", "^(?:a|$)"] {
        let compiled = regex::compile_owned(source).unwrap();
        assert!(!matches!(compiled, Compiled::Literal(..)), "{source:?}: {compiled:?}");
    }
}

#[test]
fn patterns_the_runtime_cannot_honour_or_that_are_no_regex_are_errors() {
    let accepted: Vec<_> = REFUSED.iter().filter(|source| regex::compile(source).is_ok()).collect();
    assert!(accepted.is_empty(), "accepted: {accepted:?}");
    for source in REFUSED {
        let message = regex::compile(source).map(|_| ()).unwrap_err().0;
        assert!(message.starts_with("pattern "), "{source}: {message}");
    }
    let message = regex::compile(r"\p{CWKCF}").map(|_| ()).unwrap_err().0;
    assert!(
        message.contains("CWKCF") && message.contains("not supported"),
        "{message}"
    );
    let message = regex::compile(r"\p{Latin}").map(|_| ()).unwrap_err().0;
    assert!(message.contains("Latin"), "{message}");
}

// ---------------------------------------------------------------------------------------------
// The regex crate, where its semantics and ECMA-262's coincide: ASCII texts (its `\b`, `\d`,
// `\w` and `\s` are Unicode-aware, which on ASCII is the same), no `.` (it matches `\r`).

const AGREEING: &[&str] = &[
    r"\bfoo",
    r"foo\b",
    r"\Bo",
    r"o\B",
    r"\b\w+\b",
    r"\b",
    r"\B",
    r"^\b",
    r"\b$",
    r"^\B",
    r"\B$",
    r"(?:a|\b)b",
    r"x\B\d",
    r"^(?:\b\w)+$",
    r"(?:\b\w+\b\s?)+!",
    r"^\p{L}+$",
    r"\p{Nd}",
    r"^\p{Nd}*$",
    r"[\p{L}\d]+o",
    r"[^\p{L}]",
    r"^[\p{Nd}a-c]*$",
    r"\P{L}\b",
    r"[\P{L}a]\B",
    r"^\p{L}\P{Nd}",
    r"\p{Lu}|\p{Ll}\b",
    r"^[^\P{L}\d]+$",
    r"\p{ASCII}\b",
    r"\p{Alphabetic}{2}\b",
    r"\p{White_Space}\B",
    r"\p{Script=Latin}+\b",
    r"\p{sc=Latn}{2,3}\B",
    r"\p{scx=Latin}o",
    r"^(?:[\p{Lu}\p{Nd}_-]+\b)*$",
];

fn agreeing() -> &'static [(Dual, ::regex::Regex)] {
    static PATTERNS: std::sync::OnceLock<Vec<(Dual, ::regex::Regex)>> = std::sync::OnceLock::new();
    PATTERNS.get_or_init(|| {
        AGREEING
            .iter()
            .map(|source| {
                let pattern = runtime(source).unwrap_or_else(|e| panic!("{e}"));
                let regex = ::regex::Regex::new(source).unwrap_or_else(|e| panic!("{source}: {e}"));
                (pattern, regex)
            })
            .collect()
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2048))]

    #[test]
    fn verdicts_agree_with_the_regex_crate_on_ascii_texts(
        index in 0..AGREEING.len(),
        text in prop_oneof!["[abfoxAB019 _!\n-]{0,12}", "[\\x00-\\x7f]{0,16}"],
    ) {
        let (pattern, regex) = &agreeing()[index];
        prop_assert_eq!(pattern.is_match(&text), regex.is_match(&text), "{} on {:?}", AGREEING[index], text);
    }

    /// Random texts (ASCII, Latin-1, astral, line terminators) on every look-ahead case: the
    /// program with DFA look-aheads and the plain program agree (`Dual` asserts it).
    #[test]
    fn look_ahead_dfas_agree_with_the_pike_vm(
        index in 0..LOOK_AHEAD_CASES.len(),
        text in "[ab019AZx.\\s\u{e9}\u{1f600}\n_-]{0,12}",
    ) {
        let pattern = look_aheads()[index];
        let _ = pattern.is_match(&text);
        prop_assert!(pattern.is_dfa() || !LOOK_AHEAD_DFAS.iter().any(|(s, n)| *s == LOOK_AHEAD_CASES[index].0 && *n > 0));
    }

    /// Random texts on every look-around read in one pass: the program with
    /// [`regex::Inst::LookScan`]s and the plain one (every look-around a sub-program, run from
    /// each position) agree (`Dual` asserts it), at every position of texts with the letters,
    /// digits, word boundaries, Latin-1 and astral characters the bodies look for.
    #[test]
    fn look_scans_agree_with_the_pike_vm(
        index in 0..LOOK_SCAN_CASES.len(),
        text in "[abcx019 fo.\u{e9}\u{1f600}\n_-]{0,40}",
    ) {
        let pattern = &look_scans()[index];
        let _ = pattern.is_match(&text);
        let scans = LOOK_SCANS[index].1;
        prop_assert!(pattern.is_dfa() || scans == 0, "{:?} is compared with its plain program", LOOK_SCAN_CASES[index].0);
    }
}

/// Patterns written as a DFA with a required text, and the `lead` the compiler gives each: how
/// many bytes before the text's first occurrence of it the search starts (`None`: at the
/// text's start, because a match can hold an unbounded text before it, or the pattern reads
/// what comes before a search's start: `^`, `\b`).
const LEAD_CASES: &[(&str, Option<usize>)] = &[
    (r"\wcole", Some(1)),
    (r"[a-z]cole", Some(1)),
    (r"[^x]cole", Some(4)),
    (r"é{1,2}\d?cole", Some(5)),
    (r"(ab|é)cole$", Some(2)),
    (r"x😀?cole\d+", Some(5)),
    (r"a[^c]*bcole", None),
    (r"\bcole\d", None),
    (r"(xy|z)+cole", None),
    (r"^\wcole\d", None),
    (r"(^|a)cole", None),
];

fn leads() -> &'static [Dual] {
    static PATTERNS: std::sync::OnceLock<Vec<Dual>> = std::sync::OnceLock::new();
    compiled_once(&PATTERNS, LEAD_CASES.iter().map(|(source, _)| *source))
}

/// The patterns `sources`, compiled once into `cell` for a property test's many cases.
fn compiled_once<'a>(
    cell: &'static std::sync::OnceLock<Vec<Dual>>,
    sources: impl Iterator<Item = &'a str>,
) -> &'static [Dual] {
    cell.get_or_init(|| {
        sources
            .map(|source| runtime(source).unwrap_or_else(|e| panic!("{e}")))
            .collect()
    })
}

/// Each [`LEAD_CASES`] pattern is a DFA with the lead the table gives it.
#[test]
fn a_dfa_search_starts_just_before_the_required_text_where_it_can() {
    let mut wrong = Vec::new();
    for (source, expected) in LEAD_CASES {
        match regex::compile_owned(source) {
            Ok(Compiled::Automaton { lead, required, .. }) => {
                if lead != *expected || required.is_empty() {
                    wrong.push(format!(
                        "{source:?}: lead {lead:?}, required {required:?}; expected {expected:?}"
                    ));
                }
            }
            Ok(other) => wrong.push(format!("{source:?}: not a DFA: {other:?}")),
            Err(e) => wrong.push(format!("{source:?}: {}", e.0)),
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1024))]

    /// Long texts (past the length from which the required text is looked for first) made of
    /// pieces of the [`LEAD_CASES`] patterns, ASCII, Latin-1 and astral characters: the DFA
    /// searching around the required text's occurrences and the Pike VM reading the whole text
    /// agree (`Dual` asserts it).
    #[test]
    fn a_search_from_the_lead_agrees_with_the_pike_vm(
        index in 0..LEAD_CASES.len(),
        pieces in proptest::collection::vec(
            prop_oneof!["cole", "é", "😀", "ab", "x", "b", "a", "_", " ", "7", "\n", "e", "c", "co"],
            20..90,
        ),
    ) {
        let text: String = pieces.concat();
        let pattern = &leads()[index];
        let _ = pattern.is_match(&text);
        prop_assert!(pattern.is_dfa());
    }
}

fn look_scans() -> &'static [Dual] {
    static PATTERNS: std::sync::OnceLock<Vec<Dual>> = std::sync::OnceLock::new();
    compiled_once(&PATTERNS, LOOK_SCAN_CASES.iter().map(|(source, _)| *source))
}

fn look_aheads() -> &'static [Dual] {
    static PATTERNS: std::sync::OnceLock<Vec<Dual>> = std::sync::OnceLock::new();
    compiled_once(&PATTERNS, LOOK_AHEAD_CASES.iter().map(|(source, _)| *source))
}
