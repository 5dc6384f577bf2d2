//! Types and validators an engine author generates from the schema of their own Language's
//! programs, with `pilotage_codegen::Builder` in `build.rs`.

include!(concat!(env!("OUT_DIR"), "/calc_program.rs"));
include!(concat!(env!("OUT_DIR"), "/calc_library.rs"));
include!(concat!(env!("OUT_DIR"), "/awkward.rs"));

#[cfg(test)]
mod tests {
    use super::calc_program::{CalcProgram, Step, StepOp};
    use pilotage_types::SchemaDef;
    use serde_json::json;

    #[test]
    fn the_generated_types_and_validators_work_together() {
        // Non-integral numbers: a `number` member is an f64, so an integral `2` comes back as
        // `2.0` (equal as a JSON Schema number, not byte for byte; noted for #24).
        let program =
            json!({"start": 2.5, "steps": [{"op": "add", "by": 3.5}, {"op": "mul", "by": 4.25, "note": "x"}]});
        CalcProgram::validate(&program).unwrap();
        let typed: CalcProgram = serde_json::from_value(program.clone()).unwrap();
        assert_eq!(typed.steps.len(), 2);
        assert_eq!(typed.steps[0].op, StepOp::Add);
        assert_eq!(serde_json::to_value(&typed).unwrap(), program, "lossless round trip");
        let built = CalcProgram::new([Step::new(StepOp::Sub, 1.0)]).with_start(5.0);
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
}
