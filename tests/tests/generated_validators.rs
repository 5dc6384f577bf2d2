//! The generated validators against the oracle (jsonschema interpreting the same schema
//! document): the same verdict on every instance, and, when an instance fails, the same set of
//! failing instance pointers. Pinned and compatible readings, for every definition of the
//! Pilotage schema and of each peer schema; instances from the differential corpus (the
//! Part III examples, their mutations, every nested value) and generated from each definition
//! (`pilotage_tests::instances`).

use std::collections::BTreeSet;

use pilotage_tests::corpus;
use pilotage_tests::instances::{instance, Rng};
use pilotage_types::validate::{pilotage, SchemaValidators, Validators};
use serde_json::Value;

#[path = "../../pilotage-codegen/tests/golden/mod.rs"]
#[allow(unused_imports)]
mod golden;

/// Generated instances per definition and reading (`PILOTAGE_GENERATED_CASES` overrides it,
/// for a deeper run than CI's).
fn generated_per_def() -> u64 {
    std::env::var("PILOTAGE_GENERATED_CASES")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(400)
}

/// The failing instance pointers of a verdict (empty when valid).
fn pointers(errors: &pilotage_types::ValidationErrors) -> BTreeSet<String> {
    errors.violations.iter().map(|v| v.instance_pointer.clone()).collect()
}

struct Tally {
    compared: usize,
    rejected: usize,
    /// Verdicts the stream program decided (and matched).
    streamed: usize,
}

/// Compares the generated validators with the oracle on `value` for `def`.
fn compare(
    schema: &str,
    generated: Validators,
    oracle: &SchemaValidators,
    def: &str,
    value: &Value,
    tally: &mut Tally,
) {
    let ours = generated.validate(def, value).expect("a generated definition");
    let theirs = oracle
        .validate(def, value)
        .expect("the oracle compiles every definition");
    let quick = generated.is_valid(def, value).expect("a generated definition");
    if let Some(stream) = generated.stream(def) {
        // Validation fused into deserialization gives the checks' verdict whenever it gives
        // one, from a Value and from the JSON text alike.
        let compatible = generated.is_compatible_reading();
        let from_value = pilotage_types::validate::stream::check_value(stream, compatible, value);
        let text = serde_json::to_vec(value).expect("a Value serializes");
        let from_text = pilotage_types::validate::stream::check_slice(stream, compatible, &text);
        assert!(
            from_value.is_none_or(|verdict| verdict == quick) && from_text == from_value,
            "{schema} {def}: the stream program says {from_value:?} (from text {from_text:?}), the checks {quick}, on {value}"
        );
        tally.streamed += usize::from(from_value.is_some());
    }
    let reading = if generated.is_compatible_reading() {
        "compatible"
    } else {
        "pinned"
    };
    assert_eq!(
        quick,
        ours.is_ok(),
        "{schema} {def} ({reading}): is_valid and validate disagree on {value}"
    );
    match (&ours, &theirs) {
        (Ok(()), Ok(())) => {}
        (Err(a), Err(b)) => {
            assert_eq!(
                pointers(a),
                pointers(b),
                "{schema} {def} ({reading}): failing instance pointers differ on {value}\n ours: {a}\n oracle: {b}"
            );
            tally.rejected += 1;
        }
        _ => panic!("{schema} {def} ({reading}): verdicts differ on {value}\n ours: {ours:?}\n oracle: {theirs:?}"),
    }
    tally.compared += 1;
}

/// Every definition of one schema, both readings, on `corpus` and on generated instances.
fn agree(schema: &str, document: &Value, generated: Validators, corpus: &[Value]) -> Tally {
    let oracle = SchemaValidators::new(document.clone());
    let mut tally = Tally {
        compared: 0,
        rejected: 0,
        streamed: 0,
    };
    let defs: Vec<&str> = generated.def_names().collect();
    let expected: BTreeSet<&str> = oracle.def_names().collect();
    let root = ["."].into_iter().filter(|_| defs.contains(&"."));
    assert_eq!(
        defs.iter().copied().collect::<BTreeSet<_>>(),
        expected.into_iter().chain(root).collect::<BTreeSet<_>>(),
        "{schema}: a generated validator for every definition"
    );
    for (reading, generated, oracle) in [
        ("pinned", generated, &oracle),
        ("compatible", generated.compatible(), oracle.compatible()),
    ] {
        for def in &defs {
            let pointer = if *def == "." {
                String::new()
            } else {
                let container = if document.pointer(&format!("/$defs/{def}")).is_some() {
                    "$defs"
                } else {
                    "definitions"
                };
                format!("/{container}/{}", pilotage_types::escape_pointer_token(def))
            };
            for value in corpus {
                compare(schema, generated, oracle, def, value, &mut tally);
            }
            let mut rng = Rng::new(0x5eed ^ def.len() as u64 ^ if reading == "pinned" { 0 } else { 1 << 40 });
            for _ in 0..generated_per_def() {
                let value = instance(document, &pointer, &mut rng);
                compare(schema, generated, oracle, def, &value, &mut tally);
            }
        }
    }
    tally
}

#[test]
fn pilotage_validators_agree_with_the_oracle() {
    let document: Value = serde_json::from_str(pilotage_types::validate::PILOTAGE_SCHEMA_JSON).unwrap();
    let corpus = corpus::nested_values();
    let tally = agree("pilotage", &document, pilotage(), &corpus);
    eprintln!(
        "pilotage: {} verdicts compared ({} rejections with their pointers, {} also decided by the stream program), {} corpus values, {} generated per definition and reading",
        tally.compared,
        tally.rejected,
        tally.streamed,
        corpus.len(),
        generated_per_def()
    );
    assert!(
        tally.streamed * 10 > tally.compared * 9,
        "the stream program decides nearly every verdict on Pilotage's schema (it has no keyword the program leaves to the checks)"
    );
    assert!(
        tally.rejected > tally.compared / 20,
        "the instances exercise rejections"
    );
    assert!(tally.compared - tally.rejected > tally.compared / 20, "and acceptances");
}

#[test]
fn peer_validators_agree_with_the_oracle() {
    let corpus = corpus::nested_values();
    let peers: [(&str, &str, Validators); 5] = [
        (
            "keywords",
            golden::keywords::SCHEMA_JSON,
            golden::keywords::validators(),
        ),
        (
            "pcp-tools",
            golden::pcp_tools::SCHEMA_JSON,
            golden::pcp_tools::validators(),
        ),
        (
            "mcec",
            golden::mcec_agent_tool_result::SCHEMA_JSON,
            golden::mcec_agent_tool_result::validators(),
        ),
        (
            "majordomus-input",
            golden::majordomus_projection_input::SCHEMA_JSON,
            golden::majordomus_projection_input::validators(),
        ),
        (
            "majordomus-output",
            golden::majordomus_projection_output::SCHEMA_JSON,
            golden::majordomus_projection_output::validators(),
        ),
    ];
    for (name, text, validators) in peers {
        let document: Value = serde_json::from_str(text).unwrap();
        let tally = agree(name, &document, validators, &corpus[..corpus.len().min(300)]);
        eprintln!(
            "{name}: {} verdicts compared ({} rejections, {} also decided by the stream program)",
            tally.compared, tally.rejected, tally.streamed
        );
        assert!(
            tally.rejected > 0 && tally.rejected < tally.compared,
            "{name}: both verdicts occur"
        );
    }
}

/// The compiled patterns against the oracle's regex engine on random strings over each
/// pattern's own characters (and a few others): every definition of the keywords test schema
/// named `p_*`, and the patterned definitions of the Pilotage schema.
#[test]
fn patterns_agree_with_the_oracle_on_random_strings() {
    let pilotage_document: Value = serde_json::from_str(pilotage_types::validate::PILOTAGE_SCHEMA_JSON).unwrap();
    let keywords_document: Value = serde_json::from_str(golden::keywords::SCHEMA_JSON).unwrap();
    let keyword_defs: Vec<String> = keywords_document["$defs"]
        .as_object()
        .unwrap()
        .keys()
        .filter(|k| k.starts_with("p_"))
        .cloned()
        .collect();
    let cases: Vec<(&Value, Validators, Vec<String>)> = vec![
        (
            &pilotage_document,
            pilotage(),
            ["VersionString", "LanguageIdentifier", "Retention"]
                .map(String::from)
                .to_vec(),
        ),
        (&keywords_document, golden::keywords::validators(), keyword_defs),
    ];
    let mut compared = 0usize;
    let mut matched = 0usize;
    for (document, generated, defs) in cases {
        let oracle = SchemaValidators::new(document.clone());
        for def in defs {
            let schema = &document["$defs"][&def];
            let pattern = schema["pattern"]
                .as_str()
                .or_else(|| schema.pointer("/anyOf/1/pattern").and_then(Value::as_str))
                .unwrap_or_else(|| panic!("{def} has a pattern"));
            let mut alphabet: Vec<char> = pattern.chars().filter(|c| !"\\^$()[]{}|?*+".contains(*c)).collect();
            alphabet.extend("aZ09 \n-/.éPTSYMWDH".chars());
            alphabet.sort_unstable();
            alphabet.dedup();
            let mut rng = Rng::new(def.len() as u64 * 7919);
            for _ in 0..3000 {
                let length = rng.below(14);
                let text: String = (0..length).map(|_| alphabet[rng.below(alphabet.len())]).collect();
                let value = Value::String(text);
                let ours = generated.is_valid(&def, &value).unwrap();
                let theirs = oracle.is_valid(&def, &value).unwrap();
                assert_eq!(ours, theirs, "{def} ({pattern}) on {value}");
                compared += 1;
                matched += usize::from(ours);
            }
        }
    }
    eprintln!("patterns: {compared} random strings compared, {matched} accepted");
    assert!(matched > compared / 50, "the random strings reach accepting paths too");
}

/// The generator on schemas it was not written for: the official MCP schemas. Every revision
/// generates validators for every definition, code that parses; draft-07's 2025-06-18 asserts
/// its formats (`uri`, ...), as jsonschema does for draft-07.
#[test]
fn the_official_mcp_schemas_generate_validators_for_every_definition() {
    let Some(schemas) = pilotage_tests::mcp::schemas("generated validators of the MCP schemas") else {
        return;
    };
    for (revision, oracle) in schemas {
        let document = oracle.document();
        let generated = pilotage_codegen::validators::generate(document, revision, false)
            .unwrap_or_else(|e| panic!("{revision}: {e}"));
        let defs = document
            .get("$defs")
            .or_else(|| document.get("definitions"))
            .and_then(serde_json::Value::as_object)
            .unwrap();
        assert_eq!(generated.checks.len(), defs.len(), "{revision}: a check per definition");
        let text = generated.tokens.to_string();
        if revision == "2025-06-18" {
            assert!(
                text.contains("format :: uri"),
                "{revision}: draft-07 asserts `format: uri`"
            );
        }
        syn::parse2::<syn::File>(generated.tokens).unwrap_or_else(|e| panic!("{revision}: {e}"));
    }
}
