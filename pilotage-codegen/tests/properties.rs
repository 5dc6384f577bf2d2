//! Property tests of the generation pipeline over schemas built from the keywords and shapes
//! real schemas use (types and type unions, properties with required subsets, open and closed
//! objects, arrays, `enum`/`const`, `anyOf`/`oneOf`/`allOf`, `if`/`then`/`else`, `not`,
//! `$ref`s between definitions, patterns, bounds, defaults, formats): the pipeline never
//! panics, and whatever it generates is Rust that parses, with a `SchemaDef` impl per
//! definition; what it refuses, it refuses with an error naming a place in the schema.

use pilotage_codegen::{generate_types, TypesSettings};
use proptest::prelude::*;
use serde_json::{json, Map, Value};

const MEMBERS: &[&str] = &["id", "kind", "value", "items", "next", "x-ext", "type", "self"];

fn leaf() -> impl Strategy<Value = Value> {
    prop_oneof![
        prop::sample::select(vec![
            "string", "integer", "number", "boolean", "null", "object", "array"
        ])
        .prop_map(|t| json!({"type": t})),
        prop::sample::select(vec!["string", "integer", "object"]).prop_map(|t| json!({"type": [t, "null"]})),
        prop::collection::btree_set("[a-z][a-z_-]{0,6}", 1..4)
            .prop_map(|values| json!({"type": "string", "enum": values.into_iter().collect::<Vec<_>>()})),
        "[a-z_]{1,8}".prop_map(|value| json!({"const": value})),
        Just(json!({"type": "string", "pattern": "^[a-z]+/[0-9]+$"})),
        Just(json!({"type": "integer", "minimum": 0, "maximum": 10})),
        Just(json!({"type": "string", "format": "date-time"})),
        Just(json!({"type": "string", "default": "d", "description": "with a default"})),
        Just(json!({"$ref": "#/$defs/B"})),
        Just(json!({})),
        Just(json!(true)),
    ]
}

fn schema() -> impl Strategy<Value = Value> {
    leaf().prop_recursive(3, 24, 4, |inner| {
        prop_oneof![
            (
                prop::collection::btree_map(prop::sample::select(MEMBERS), inner.clone(), 0..4),
                any::<u8>(),
                prop::sample::select(vec![
                    None,
                    Some(json!(false)),
                    Some(json!({})),
                    Some(json!({"type": "string"}))
                ]),
            )
                .prop_map(|(properties, required_bits, additional)| {
                    let required: Vec<&str> = properties
                        .keys()
                        .enumerate()
                        .filter(|(i, _)| required_bits & (1 << i) != 0)
                        .map(|(_, k)| *k)
                        .collect();
                    let mut object = Map::new();
                    object.insert("type".into(), json!("object"));
                    object.insert("properties".into(), json!(properties));
                    if !required.is_empty() {
                        object.insert("required".into(), json!(required));
                    }
                    if let Some(additional) = additional {
                        object.insert("additionalProperties".into(), additional);
                    }
                    Value::Object(object)
                }),
            (inner.clone(), 0..3usize)
                .prop_map(|(items, min)| json!({"type": "array", "items": items, "minItems": min})),
            (
                prop::sample::select(vec!["anyOf", "oneOf", "allOf"]),
                prop::collection::vec(inner.clone(), 1..4)
            )
                .prop_map(|(keyword, branches)| json!({ keyword: branches })),
            (inner.clone(), inner.clone(), inner.clone())
                .prop_map(|(i, t, e)| json!({"type": "object", "if": i, "then": t, "else": e})),
            inner.clone().prop_map(|n| json!({"not": n})),
        ]
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 192, ..ProptestConfig::default() })]

    #[test]
    fn generation_never_panics_and_what_it_writes_parses(a in schema(), b in schema()) {
        let document = json!({"$defs": {"A": a, "B": b}});
        let settings = TypesSettings::new("generated.schema.json").with_schema_def_trait("crate::SchemaDef");
        match generate_types(document.to_string().as_bytes(), &settings) {
            Ok(generated) => {
                let parsed = syn::parse_file(&generated.code);
                prop_assert!(parsed.is_ok(), "generated code does not parse: {:?}\n{}", parsed.err(), generated.code);
                for def in ["A", "B"] {
                    let impl_line = format!("const DEF: &'static str = \"{def}\";");
                    prop_assert!(generated.code.contains(&impl_line), "no SchemaDef impl of {}", def);
                }
                prop_assert!(generated.api.lines().all(|line| !line.trim().is_empty()));
            }
            Err(error) => {
                prop_assert_eq!(&error.file, "generated.schema.json");
                prop_assert!(error.pointer.is_empty() || error.pointer.starts_with('/'), "{}", error);
                prop_assert!(!error.message.is_empty());
            }
        }
    }
}
