//! The `workflow/v1` Language: static validation with JSON-Pointer diagnostics and a plan
//! (Part II 5.5, 5.6, 6.4), and execution that calls catalog capabilities, resolves
//! `$.input...` / `$.steps...` references, and records a trace (Part II 5.7, 5.8, 6.5).

use std::collections::BTreeMap;
use std::time::Instant;

use pilotage_types::{
    escape_pointer_token, Diagnostic, Outcome, Plan, PlanStep, RiskHints, Trace, TraceLevel, TraceStep,
};
use serde_json::{json, Map, Value};

use crate::catalog::{entries, RISKS};

/// One validation finding.
fn diagnostic(code: &str, path: &str, message: String, hint: Option<String>) -> Diagnostic {
    let finding = Diagnostic::error(code, path, message);
    match hint {
        Some(hint) => finding.with_hint(hint),
        None => finding,
    }
}

/// Levenshtein distance, for close-match hints.
fn distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut previous: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut current = vec![i + 1];
        for (j, cb) in b.iter().enumerate() {
            let cost = usize::from(ca != *cb);
            current.push((previous[j] + cost).min(previous[j + 1] + 1).min(current[j] + 1));
        }
        previous = current;
    }
    previous[b.len()]
}

/// Every reference string (`$.` prefix) in `value`, with its JSON Pointer under `at`.
fn references(value: &Value, at: String, out: &mut Vec<(String, String)>) {
    match value {
        Value::String(s) if s.starts_with("$.") => out.push((at, s.clone())),
        Value::Object(m) => m
            .iter()
            .for_each(|(k, v)| references(v, format!("{at}/{}", escape_pointer_token(k)), out)),
        Value::Array(a) => a
            .iter()
            .enumerate()
            .for_each(|(i, v)| references(v, format!("{at}/{i}"), out)),
        _ => {}
    }
}

/// The result of static validation.
pub struct Checked {
    /// Every finding, with a JSON Pointer into the program.
    pub diagnostics: Vec<Diagnostic>,
    /// The capability each step calls, in order, when the program is valid.
    pub steps: Vec<(String, String)>,
}

/// Validates a workflow document.
pub fn check(program: &Value) -> Checked {
    let catalog = entries();
    let mut diagnostics = Vec::new();
    let mut steps = Vec::new();
    let Some(document) = program.as_object() else {
        diagnostics.push(diagnostic(
            "invalid_program",
            "",
            "a workflow is a JSON object with `steps`".into(),
            None,
        ));
        return Checked { diagnostics, steps };
    };
    let Some(list) = document.get("steps").and_then(Value::as_array) else {
        diagnostics.push(diagnostic(
            "missing_steps",
            "/steps",
            "a workflow needs a `steps` array".into(),
            None,
        ));
        return Checked { diagnostics, steps };
    };
    let mut seen: Vec<String> = Vec::new();
    for (index, step) in list.iter().enumerate() {
        let at = format!("/steps/{index}");
        let Some(id) = step.get("id").and_then(Value::as_str) else {
            diagnostics.push(diagnostic(
                "missing_id",
                &format!("{at}/id"),
                "every step needs a string `id`".into(),
                None,
            ));
            continue;
        };
        if seen.iter().any(|s| s == id) {
            diagnostics.push(diagnostic(
                "duplicate_id",
                &format!("{at}/id"),
                format!("step id '{id}' is used twice"),
                None,
            ));
        }
        match step.get("kind").and_then(Value::as_str) {
            Some("call") => {}
            other => diagnostics.push(diagnostic(
                "unknown_kind",
                &format!("{at}/kind"),
                format!(
                    "unknown step kind {}",
                    other.map_or("(none)".to_owned(), |k| format!("'{k}'"))
                ),
                Some("the only kind of workflow/v1 is \"call\"".into()),
            )),
        }
        match step.get("capability").and_then(Value::as_str) {
            Some(capability) if catalog.iter().any(|e| e.id == capability) => {
                steps.push((id.to_owned(), capability.to_owned()))
            }
            Some(capability) => {
                let close = catalog
                    .iter()
                    .map(|e| (distance(capability, &e.id), &e.id))
                    .min()
                    .filter(|(d, _)| *d <= 3);
                diagnostics.push(diagnostic(
                    "unknown_capability",
                    &format!("{at}/capability"),
                    format!("unknown capability '{capability}'"),
                    close.map(|(_, id)| format!("close match: {id}")),
                ));
            }
            None => diagnostics.push(diagnostic(
                "missing_capability",
                &format!("{at}/capability"),
                "a call step needs a `capability`".into(),
                None,
            )),
        }
        let mut found = Vec::new();
        references(
            step.get("with").unwrap_or(&Value::Null),
            format!("{at}/with"),
            &mut found,
        );
        for (pointer, reference) in found {
            check_reference(&reference, &pointer, &seen, &mut diagnostics);
        }
        seen.push(id.to_owned());
    }
    let mut found = Vec::new();
    references(
        document.get("output").unwrap_or(&Value::Null),
        "/output".into(),
        &mut found,
    );
    for (pointer, reference) in found {
        check_reference(&reference, &pointer, &seen, &mut diagnostics);
    }
    if !diagnostics.is_empty() {
        steps.clear();
    }
    Checked { diagnostics, steps }
}

fn check_reference(reference: &str, pointer: &str, earlier: &[String], diagnostics: &mut Vec<Diagnostic>) {
    if reference.starts_with("$.input") {
        return;
    }
    let step = reference
        .strip_prefix("$.steps.")
        .and_then(|rest| rest.split('.').next());
    match step {
        Some(step) if earlier.iter().any(|s| s == step) => {}
        Some(step) => diagnostics.push(diagnostic(
            "unknown_reference",
            pointer,
            format!("'{reference}' names step '{step}', which does not run before this point"),
            None,
        )),
        None => diagnostics.push(diagnostic(
            "invalid_reference",
            pointer,
            format!("'{reference}' is neither $.input... nor $.steps.<id>..."),
            None,
        )),
    }
}

/// The plan of a valid workflow (Part II 5.6): each step's risk, and the maximum.
pub fn plan(steps: &[(String, String)]) -> Plan {
    let catalog = entries();
    let mut max = 0;
    let mut max_hints = RiskHints::new().with_read_only(true);
    let planned: Vec<PlanStep> = steps
        .iter()
        .map(|(id, capability)| {
            let entry = catalog.iter().find(|e| &e.id == capability).expect("checked");
            max = max.max(RISKS.iter().position(|r| *r == entry.risk).unwrap_or(0));
            let hints = &entry.risk_hints;
            max_hints.read_only &= hints.read_only;
            max_hints.destructive |= hints.destructive;
            max_hints.open_world |= hints.open_world;
            PlanStep::new(id.clone(), entry.risk.clone(), hints.clone()).with_calls(capability.clone())
        })
        .collect();
    Plan::new(planned, RISKS[max], max_hints)
}

/// Resolves the references in `template` against the run's state.
fn resolve(template: &Value, input: &Value, outputs: &BTreeMap<String, Value>) -> Result<Value, String> {
    match template {
        Value::String(reference) if reference.starts_with("$.") => {
            let mut parts = reference[2..].split('.');
            let mut current = match parts.next() {
                Some("input") => input.clone(),
                Some("steps") => {
                    let step = parts.next().unwrap_or_default();
                    let _ = parts.next(); // "output"
                    outputs
                        .get(step)
                        .cloned()
                        .ok_or_else(|| format!("step '{step}' has no output"))?
                }
                _ => return Err(format!("cannot resolve '{reference}'")),
            };
            for part in parts {
                current = current
                    .get(part)
                    .cloned()
                    .ok_or_else(|| format!("'{reference}': no member '{part}'"))?;
            }
            Ok(current)
        }
        Value::Object(m) => m
            .iter()
            .map(|(k, v)| Ok((k.clone(), resolve(v, input, outputs)?)))
            .collect::<Result<Map<_, _>, _>>()
            .map(Value::Object),
        Value::Array(a) => a
            .iter()
            .map(|v| resolve(v, input, outputs))
            .collect::<Result<Vec<_>, _>>()
            .map(Value::Array),
        other => Ok(other.clone()),
    }
}

/// The simulated capabilities: deterministic answers.
fn call(capability: &str, arguments: &Value) -> Result<Value, String> {
    let user = arguments.get("user_id").and_then(Value::as_str).unwrap_or_default();
    match capability {
        "cap_read_user_profile" if user == "42" => Ok(json!({"name": "Amira Hassan", "tier": "gold"})),
        "cap_read_user_profile" if user.is_empty() => Err("user_id is required".into()),
        "cap_read_user_profile" => Ok(json!({"name": format!("User {user}"), "tier": "standard"})),
        "cap_list_orders" => Ok(json!({"orders": [{"id": format!("ord_{user}_1"), "total": 42.5}]})),
        "cap_send_email" => match arguments.get("to").and_then(Value::as_str) {
            Some(to) if to.contains('@') => Ok(json!({"sent": true})),
            _ => Err("`to` is not an email address".into()),
        },
        "cap_delete_user" => Ok(Value::Null),
        other => Err(format!("unknown capability '{other}'")),
    }
}

/// A finished run: outcome, output and the full trace steps.
pub struct Run {
    pub outcome: Outcome,
    pub output: Option<Value>,
    pub steps: Vec<TraceStep>,
}

fn trace_step(id: &str, capability: &str, outcome: Outcome, t_ms: u64) -> TraceStep {
    TraceStep::new(id, outcome).with_calls(capability).with_t_ms(t_ms)
}

/// Runs a valid workflow with `input`.
pub fn run(program: &Value, input: &Value) -> Run {
    let mut outputs = BTreeMap::new();
    let mut steps = Vec::new();
    for step in program["steps"].as_array().into_iter().flatten() {
        let id = step["id"].as_str().unwrap_or_default().to_owned();
        let capability = step["capability"].as_str().unwrap_or_default();
        let started = Instant::now();
        let result = resolve(step.get("with").unwrap_or(&json!({})), input, &outputs)
            .and_then(|arguments| call(capability, &arguments).map(|output| (arguments, output)));
        let t_ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
        match result {
            Ok((arguments, output)) => {
                let mut done = trace_step(&id, capability, Outcome::success("success"), t_ms);
                done.input = Some(arguments);
                done.output = Some(output.clone());
                steps.push(done);
                outputs.insert(id, output);
            }
            Err(error) => {
                steps.push(trace_step(
                    &id,
                    capability,
                    Outcome::failure("failed", error.clone()),
                    t_ms,
                ));
                return Run {
                    outcome: Outcome::failure("failed", format!("step '{id}' failed: {error}")),
                    output: None,
                    steps,
                };
            }
        }
    }
    match resolve(program.get("output").unwrap_or(&Value::Null), input, &outputs) {
        Ok(output) => Run {
            outcome: Outcome::success("success"),
            output: Some(output),
            steps,
        },
        Err(error) => Run {
            outcome: Outcome::failure("failed", format!("output: {error}")),
            output: None,
            steps,
        },
    }
}

/// The trace at `level` (`summary` drops step inputs and outputs, Part II 5.8).
pub fn trace(run_id: &str, level: TraceLevel, steps: &[TraceStep]) -> Trace {
    let summary = level == TraceLevel::Summary;
    let steps = steps.iter().map(|step| {
        let mut step = step.clone();
        if summary {
            step.input = None;
            step.output = None;
        }
        step
    });
    Trace::new(run_id, level, steps)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn diagnostics_point_at_the_fault_with_a_close_match() {
        let checked =
            check(&json!({"steps": [{"id": "profile", "kind": "call", "capability": "cap_read_user_profil"}]}));
        assert_eq!(checked.diagnostics.len(), 1);
        let first = serde_json::to_value(&checked.diagnostics[0]).unwrap();
        assert_eq!(first["path"], "/steps/0/capability");
        assert_eq!(first["hint"], "close match: cap_read_user_profile");
        let later = check(
            &json!({"steps": [{"id": "a", "kind": "call", "capability": "cap_list_orders", "with": {"user_id": "$.steps.b.output.x"}}]}),
        );
        let first = serde_json::to_value(&later.diagnostics[0]).unwrap();
        assert_eq!(first["code"], "unknown_reference");
        assert_eq!(first["path"], "/steps/0/with/user_id");
    }

    #[test]
    fn runs_resolve_references() {
        let program = json!({"steps": [{"id": "profile", "kind": "call", "capability": "cap_read_user_profile", "with": {"user_id": "$.input.userId"}}],
            "output": {"name": "$.steps.profile.output.name"}});
        let run = run(&program, &json!({"userId": "42"}));
        assert_eq!(run.output, Some(json!({"name": "Amira Hassan"})));
        assert_eq!(run.steps[0].input, Some(json!({"user_id": "42"})));
        assert_eq!(plan(&check(&program).steps).max_risk, "safe");
    }
}
