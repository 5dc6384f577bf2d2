//! `parse_slice` with validation fused into deserialization (`pilotage_types::validate::stream`)
//! against the two passes it replaces (parse into a `Value`, the generated check, deserialize
//! from the `Value`): for every type of the Pilotage schema, on the differential corpus (the
//! Part III examples, their mutations, every nested value) and on instances generated from
//! each definition, in both readings, the same outcome: the same value when both accept, the
//! same violations (pointers and messages) or the same kind of error when they refuse. And the
//! fused run itself never calls valid what the checks refuse, whichever type reads it. And
//! `SchemaDef::from_value`, which `parse` deserializes with, reads what serde reads.

use pilotage_tests::corpus;
use pilotage_tests::instances::{instance, Rng};
use pilotage_types::validate::stream::{self, Verdict};
use pilotage_types::*;
use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::Value;

/// What a parse came to, comparable across the two paths.
#[derive(Debug, PartialEq)]
enum Came {
    Parsed(Value),
    Invalid(Vec<(String, String, String)>),
    Type,
    Json,
}

fn came<T: Serialize>(result: Result<T, ParseError>) -> Came {
    match result {
        Ok(value) => Came::Parsed(serde_json::to_value(value).expect("a parsed value serializes")),
        Err(ParseError::Invalid(errors)) => Came::Invalid(
            errors
                .violations
                .into_iter()
                .map(|v| (v.instance_pointer, v.schema_pointer, v.message))
                .collect(),
        ),
        Err(ParseError::Type { .. }) => Came::Type,
        Err(ParseError::Json(_)) => Came::Json,
    }
}

/// The two passes, as `parse_slice` did them before the fused path.
fn two_passes<T: SchemaDef + DeserializeOwned>(bytes: &[u8], compatible: bool) -> Result<T, ParseError> {
    let value: Value = serde_json::from_slice(bytes).map_err(ParseError::Json)?;
    let checked = if compatible {
        T::validate_compatible(&value)
    } else {
        T::validate(&value)
    };
    checked.map_err(ParseError::Invalid)?;
    serde_json::from_value(value).map_err(|error| ParseError::Type { def: T::DEF, error })
}

#[derive(Default)]
struct Tally {
    compared: usize,
    fused_valid: usize,
}

fn compare<T: SchemaDef + DeserializeOwned + Serialize + std::fmt::Debug>(value: &Value, tally: &mut Tally) {
    // `SchemaDef::from_value` (what `parse` deserializes with; an untagged union reads its
    // variants straight from the value) is serde's reading, value for value.
    let read = |result: Result<T, serde_json::Error>| {
        result
            .map(|parsed| serde_json::to_value(parsed).expect("a parsed value serializes"))
            .ok()
    };
    assert_eq!(
        read(T::from_value(value)),
        read(<T as serde::Deserialize>::deserialize(value)),
        "{}: from_value differs from serde's deserialize on {value}",
        T::DEF
    );
    let bytes = serde_json::to_vec(value).expect("a Value serializes");
    let program = T::STREAM.expect("every Pilotage type has a stream program");
    for compatible in [false, true] {
        tally.compared += 1;
        let fused = if compatible {
            parse_slice_compatible::<T>(&bytes)
        } else {
            parse_slice::<T>(&bytes)
        };
        let expected = two_passes::<T>(&bytes, compatible);
        // The same variant too (an untagged union's variants may serialize alike), and the
        // same as serde reading the text itself.
        if let (Ok(fused), Ok(expected)) = (&fused, &expected) {
            assert_eq!(format!("{fused:?}"), format!("{expected:?}"), "{}: {value}", T::DEF);
            let serde = serde_json::from_slice::<T>(&bytes).expect("serde reads what the two passes read");
            assert_eq!(format!("{fused:?}"), format!("{serde:?}"), "{}: {value}", T::DEF);
        }
        let (fused, expected) = (came(fused), came(expected));
        assert_eq!(
            fused,
            expected,
            "{} (compatible: {compatible}): parse_slice differs from the two passes on {value}",
            T::DEF
        );
        let mut deserializer = serde_json::Deserializer::from_slice(&bytes);
        if let Ok((_, verdict)) = stream::deserialize::<T, _>(program, compatible, &mut deserializer) {
            let checks = if compatible {
                T::is_valid_compatible(value)
            } else {
                T::is_valid(value)
            };
            assert!(
                verdict != Verdict::Valid || checks,
                "{} (compatible: {compatible}): the fused run calls valid what the checks refuse: {value}",
                T::DEF
            );
            tally.fused_valid += usize::from(verdict == Verdict::Valid);
        }
    }
}

macro_rules! every_type {
    ($values:expr, $tally:expr, $($t:ident)*) => {
        $(
            for value in $values {
                compare::<$t>(value, $tally);
            }
        )*
    };
}

macro_rules! generated_for {
    ($document:expr, $tally:expr, $($t:ident)*) => {
        $(
            let pointer = format!("/$defs/{}", <$t as SchemaDef>::DEF);
            let mut rng = Rng::new(0xf05e ^ pointer.len() as u64);
            for _ in 0..150 {
                let value = instance($document, &pointer, &mut rng);
                compare::<$t>(&value, $tally);
            }
        )*
    };
}

#[test]
fn parse_slice_fused_gives_what_the_two_passes_give() {
    let document: Value = serde_json::from_str(validate::PILOTAGE_SCHEMA_JSON).expect("the schema is JSON");
    let values = corpus::nested_values();
    let mut tally = Tally::default();
    every_type!(&values, &mut tally,
        CapabilityDeclaration CapabilitySettings CapabilityValue CatalogChangedResult CatalogEntry
        CatalogGetResult CatalogListResult CatalogToolOutput Decision Diagnostic ExecuteRequest
        ExecuteResponse ExecuteToolOutput GetGuideToolOutput Guide GuideFetchResult GuideIndexResult
        InitializeMetaValue LanguageEntry LanguageIdentifier LoopObject Manifest ManifestToolOutput
        Outcome Plan PlanStep ProgramDeclaration RequestError Retention RiskHints TextPosition TextRange
        Trace TraceFetchRequest TraceFetchResponse TraceStep TraceToolOutput ValidateResponse
        ValidateToolOutput VersionString);
    generated_for!(&document, &mut tally,
        CapabilityDeclaration CapabilitySettings CapabilityValue CatalogChangedResult CatalogEntry
        CatalogGetResult CatalogListResult CatalogToolOutput Decision Diagnostic ExecuteRequest
        ExecuteResponse ExecuteToolOutput GetGuideToolOutput Guide GuideFetchResult GuideIndexResult
        InitializeMetaValue LanguageEntry LanguageIdentifier LoopObject Manifest ManifestToolOutput
        Outcome Plan PlanStep ProgramDeclaration RequestError Retention RiskHints TextPosition TextRange
        Trace TraceFetchRequest TraceFetchResponse TraceStep TraceToolOutput ValidateResponse
        ValidateToolOutput VersionString);
    eprintln!(
        "fused parse_slice: {} parses compared with the two passes, {} shown valid by the fused run alone",
        tally.compared, tally.fused_valid
    );
    assert!(
        tally.fused_valid * 20 > tally.compared,
        "the fused run decides a share of the valid documents ({} of {})",
        tally.fused_valid,
        tally.compared
    );
}

/// What the fused path cannot read through its visitor as JSON leaves the verdict unknown
/// rather than guessing: a string a type reads as bytes.
#[test]
fn a_value_the_wrapper_cannot_read_as_json_leaves_the_verdict_unknown() {
    struct Bytes;
    impl<'de> serde::Deserialize<'de> for Bytes {
        fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
            struct Visitor;
            impl serde::de::Visitor<'_> for Visitor {
                type Value = Bytes;
                fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                    f.write_str("bytes")
                }
                fn visit_bytes<E: serde::de::Error>(self, _: &[u8]) -> Result<Bytes, E> {
                    Ok(Bytes)
                }
            }
            deserializer.deserialize_bytes(Visitor)
        }
    }
    let program = VersionString::STREAM.expect("VersionString has a stream program");
    for text in [&br#""1.1""#[..], br#""not a version""#] {
        let mut deserializer = serde_json::Deserializer::from_slice(text);
        let (Bytes, verdict) = stream::deserialize::<Bytes, _>(program, false, &mut deserializer).expect("bytes read");
        assert_eq!(verdict, Verdict::Unknown, "{}", String::from_utf8_lossy(text));
    }
    // The same texts through a type that reads them as strings: decided.
    for (text, expected) in [
        (&br#""1.1""#[..], Verdict::Valid),
        (br#""not a version""#, Verdict::Invalid),
    ] {
        let mut deserializer = serde_json::Deserializer::from_slice(text);
        let (_, verdict) =
            stream::deserialize::<serde::de::IgnoredAny, _>(program, false, &mut deserializer).expect("JSON reads");
        assert_eq!(verdict, expected, "{}", String::from_utf8_lossy(text));
    }
    // Outcome: `error` must be null when `ok` is true, which only the whole object shows.
    let text = br#"{"ok": true, "status": "success", "error": "not null while ok"}"#;
    assert!(matches!(parse_slice::<Outcome>(text), Err(ParseError::Invalid(_))));
}

/// An untagged union's `read_str` reads the text variant by variant, in serde's order,
/// checking it against the union's definition: the second variant is still read fused, and
/// a text no variant shows valid is left to the two passes.
#[test]
fn an_untagged_union_is_read_variant_by_variant_from_the_text() {
    let program = ExecuteToolOutput::STREAM.expect("ExecuteToolOutput has a stream program");
    let response = br#"{"run_id": "r", "outcome": {"ok": true, "status": "success", "error": null}}"#;
    let error = br#"{"error": {"kind": "not_found", "message": "no such run"}}"#;
    for compatible in [false, true] {
        let read =
            |bytes: &[u8]| ExecuteToolOutput::read_str(program, compatible, std::str::from_utf8(bytes).expect("UTF-8"));
        assert!(matches!(read(response), Some(ExecuteToolOutput::ExecuteResponse(_))));
        assert!(matches!(read(error), Some(ExecuteToolOutput::RequestError(_))));
        // Invalid (the second variant's `kind` is closed), no JSON, characters after the value.
        assert!(read(br#"{"error": {"kind": "elsewhere", "message": "m"}}"#).is_none() || compatible);
        assert!(read(br#"{"run_id": "r", "outcome": {"ok": true, "status": "success", "error": "e"}}"#).is_none());
        assert!(read(br#"{"run_id": "r""#).is_none());
        assert!(read(b"{\"error\": {\"kind\": \"internal\", \"message\": \"m\"}} x").is_none());
    }
    // And parse_slice gives serde's value for both variants, and names the violation otherwise.
    assert_eq!(
        parse_slice::<ExecuteToolOutput>(error).expect("valid"),
        serde_json::from_slice::<ExecuteToolOutput>(error).expect("serde reads it")
    );
    let Err(ParseError::Invalid(errors)) =
        parse_slice::<ExecuteToolOutput>(br#"{"error": {"kind": "elsewhere", "message": "m"}}"#)
    else {
        panic!("an unknown kind is invalid in the pinned reading");
    };
    assert!(!errors.violations.is_empty());
}
