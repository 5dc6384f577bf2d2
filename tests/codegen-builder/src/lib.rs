//! Types and validators an engine author generates from the schema of their own Language's
//! programs, with `pilotage_codegen::Builder` in `build.rs`.

include!(concat!(env!("OUT_DIR"), "/calc_program.rs"));

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
}
