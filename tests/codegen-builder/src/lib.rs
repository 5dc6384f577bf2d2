//! Types and validators an engine author generates from the schema of their own Language's
//! programs, with `pilotage_codegen::Builder` in `build.rs`.

include!(concat!(env!("OUT_DIR"), "/calc_program.rs"));
include!(concat!(env!("OUT_DIR"), "/calc_library.rs"));
include!(concat!(env!("OUT_DIR"), "/awkward.rs"));
include!(concat!(env!("OUT_DIR"), "/numbers.rs"));

#[cfg(test)]
mod tests {
    use super::calc_program::{CalcProgram, Step, StepOp};
    use pilotage_types::SchemaDef;
    use serde_json::json;

    #[test]
    fn the_generated_types_and_validators_work_together() {
        // A `number` member keeps its form: `2` stays `2`, `3.5` stays `3.5`.
        let program = json!({"start": 2, "steps": [{"op": "add", "by": 3.5}, {"op": "mul", "by": 4, "note": "x"}]});
        CalcProgram::validate(&program).unwrap();
        let typed: CalcProgram = serde_json::from_value(program.clone()).unwrap();
        assert_eq!(typed.steps.len(), 2);
        assert_eq!(typed.steps[0].op, StepOp::Add);
        assert_eq!(serde_json::to_value(&typed).unwrap(), program, "lossless round trip");
        let built = CalcProgram::new([Step::new(StepOp::Sub, 1.0)]).with_start(5);
        assert_eq!(
            serde_json::to_string(&built).unwrap(),
            r#"{"start":5,"steps":[{"by":1.0,"op":"sub"}]}"#
        );
        CalcProgram::validate(&serde_json::to_value(&built).unwrap()).unwrap();
        let errors = CalcProgram::validate(&json!({"steps": []})).unwrap_err();
        assert!(
            errors.violations.iter().any(|v| v.instance_pointer == "/steps"),
            "{errors}"
        );
        assert!(!Step::is_valid(&json!({"op": "pow", "by": 1})));
        assert!(!Step::is_valid(&json!({"op": "add", "by": 1, "note": "y".repeat(81)})));
        assert!(super::calc_program::SCHEMA_JSON.contains("\"Calc program\""));
    }

    /// The library's validators follow its `$ref`s into the sibling schema and the mapped
    /// document (nothing is "any value"), and keep `unevaluatedProperties`, a draft 2020-12
    /// `format` annotation, and a `\p{..}` / `\b` pattern.
    #[test]
    fn a_schema_set_is_validated_across_its_documents() {
        use super::calc_library::CalcLibrary;
        assert!(super::calc_library::validators().unresolved_references().is_empty());
        let valid = json!({
            "programs": {"double": {"steps": [{"op": "mul", "by": 2}]}},
            "first_step": {"op": "add", "by": 1},
            "tags": ["math", "ops-2"],
            "contact": "not an email: 2020-12 formats are annotations",
            "strict": {"a": 1, "x-note": "ok"}
        });
        CalcLibrary::validate(&valid).unwrap();
        let typed: CalcLibrary = serde_json::from_value(valid.clone()).unwrap();
        assert_eq!(serde_json::to_value(&typed).unwrap()["tags"], valid["tags"]);
        for (pointer, broken) in [
            ("/programs/double/steps", json!({"programs": {"double": {"steps": []}}})),
            (
                "/first_step/op",
                json!({"programs": {}, "first_step": {"op": "pow", "by": 1}}),
            ),
            ("/tags/0", json!({"programs": {}, "tags": ["Math"]})),
            ("/tags/0", json!({"programs": {}, "tags": ["math-"]})),
            ("/strict/b", json!({"programs": {}, "strict": {"b": 1}})),
        ] {
            let errors = CalcLibrary::validate(&broken).unwrap_err();
            assert!(
                errors.violations.iter().any(|v| v.instance_pointer == pointer),
                "{pointer}: {errors}"
            );
        }
    }

    /// A schema with what typify 0.8 cannot type or name: the rest is generated and compiles,
    /// the definition typify gave up on is a `serde_json::Value` that the validators still
    /// check in full, definitions named after prelude types get `<Name>Def` types, and the
    /// Annex B patterns are enforced as Annex B reads them.
    #[test]
    fn what_typify_cannot_type_is_any_value_still_validated() {
        use super::awkward::{Awkward, Base, Name, StringDef, VecDef};
        let valid = json!({
            "base": {"kind": "a"},
            "label": "x",
            "name": "n",
            "vec": ["a", "b"],
            "uri": "https://example.com/a]",
            "id": "a-b_c.d",
            "option": "y",
            "result": 3,
            "box": {"inner": {}},
            "value": {"n": 1}
        });
        Awkward::validate(&valid).unwrap();
        let typed: Awkward = serde_json::from_value(valid.clone()).unwrap();
        assert_eq!(serde_json::to_value(&typed).unwrap(), valid, "lossless round trip");
        assert_eq!(typed.base, Base(json!({"kind": "a"})), "Base is any value, as it came");
        let label: StringDef = "x".parse().unwrap();
        assert_eq!(typed.label, label);
        assert!("".parse::<StringDef>().is_err(), "the newtype keeps minLength");
        let name = Name::try_from(String::from("n")).unwrap();
        assert_eq!(typed.name, Some(name));
        assert_eq!(typed.vec.as_ref().map(|v: &VecDef| v.0.len()), Some(2));
        for (pointer, change) in [
            ("/base/kind", json!({"base": {"kind": "b"}})),
            ("/base", json!({"base": {}})),
            ("/label", json!({"label": ""})),
            ("/uri", json!({"uri": "https://example.com/a"})),
            ("/id", json!({"id": "a b"})),
        ] {
            let mut broken = valid.clone();
            for (key, value) in change.as_object().unwrap() {
                broken[key] = value.clone();
            }
            let errors = Awkward::validate(&broken).unwrap_err();
            assert!(
                errors.violations.iter().any(|v| v.instance_pointer == pointer),
                "{pointer}: {errors}"
            );
        }
    }

    /// Every place a `number` takes (member, default, newtype, array, union with a string, a
    /// boolean or an integer, `format: float` / `double`, bounds, `enum`, `const`, nullable,
    /// map, tuple, nested object, an `enum` of arrays) keeps the form it was written in, byte
    /// for byte.
    #[test]
    fn numbers_round_trip_as_written() {
        use super::numbers::{Numbers, NumbersCountOrAmount, NumbersNumberOrFlag, NumbersNumberOrText, Ratio};
        use pilotage_types::Number;
        let texts = [
            r#"{"plain":2}"#,
            r#"{"plain":2.0}"#,
            r#"{"plain":-3,"with_default":1,"ratio":7,"list":[1,2.0,-0.5,1e300,18446744073709551615]}"#,
            r#"{"plain":0,"number_or_text":4,"single":0.1,"double":3,"bounded":2.5}"#,
            r#"{"plain":0.25,"number_or_text":"4","one_of":2,"fixed":2,"nullable":null}"#,
            r#"{"plain":1,"one_of":2.0,"fixed":2.0,"nullable":5,"number_or_flag":6}"#,
            r#"{"plain":1,"number_or_flag":true,"count_or_amount":7,"by_name":{"a":1,"b":1.5}}"#,
            r#"{"plain":1,"count_or_amount":7.25,"point":[1,2.5],"nested":{"scale":10}}"#,
            r#"{"plain":1,"count_or_amount":8.0,"nested":{"scale":-10.0}}"#,
            r#"{"plain":1,"choice":[1.5,2]}"#,
            r#"{"plain":1,"choice":[3.0]}"#,
        ];
        for text in texts {
            let value: serde_json::Value = serde_json::from_str(text).unwrap();
            Numbers::validate(&value).unwrap_or_else(|e| panic!("{text}: {e}"));
            let typed: Numbers = serde_json::from_str(text).unwrap_or_else(|e| panic!("{text}: {e}"));
            // Members come back in the struct's order: compare as values, and as text for
            // one member at a time.
            assert_eq!(serde_json::to_value(&typed).unwrap(), value, "{text}");
            let back = serde_json::to_string(&typed).unwrap();
            let reread: serde_json::Value = serde_json::from_str(&back).unwrap();
            for (key, member) in value.as_object().unwrap() {
                assert_eq!(
                    serde_json::to_string(&reread[key]).unwrap(),
                    serde_json::to_string(member).unwrap(),
                    "{key} of {text}"
                );
            }
        }
        // The validators still refuse what the schema refuses.
        for (pointer, text) in [
            ("/plain", r#"{"plain":"2"}"#),
            ("/ratio", r#"{"plain":1,"ratio":0}"#),
            ("/bounded", r#"{"plain":1,"bounded":2.25}"#),
            ("/one_of", r#"{"plain":1,"one_of":2.5}"#),
            ("/fixed", r#"{"plain":1,"fixed":3}"#),
            ("/choice", r#"{"plain":1,"choice":[1.5]}"#),
        ] {
            let errors = Numbers::validate(&serde_json::from_str(text).unwrap()).unwrap_err();
            assert!(
                errors.violations.iter().any(|v| v.instance_pointer == pointer),
                "{pointer}: {errors}"
            );
        }
        // Building values from plain Rust numbers.
        let built = Numbers::new(2)
            .with_ratio(Ratio::from(0.5))
            .with_list([Number::from(1), Number::from(1.5)])
            .with_number_or_text(NumbersNumberOrText::from(3))
            .with_number_or_flag(NumbersNumberOrFlag::from(2.5))
            .with_count_or_amount(NumbersCountOrAmount::from(0.75))
            .with_single(0.1f32);
        assert_eq!(
            serde_json::to_value(&built).unwrap(),
            json!({"plain": 2, "ratio": 0.5, "list": [1, 1.5], "number_or_text": 3, "number_or_flag": 2.5,
                   "count_or_amount": 0.75, "single": 0.1})
        );
        Numbers::validate(&serde_json::to_value(&built).unwrap()).unwrap();
        assert_eq!(built.plain, Number::from(2.0), "numeric equality, as in JSON Schema");
        assert_eq!(f64::from(*Ratio::from(3)), 3.0);
    }
}
