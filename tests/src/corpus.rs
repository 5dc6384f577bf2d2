//! A corpus of instances for differential tests: seed values (the Part III examples and
//! hand-written shapes of every union member) plus systematic mutations of each seed (every
//! member removed, replaced by a value of each other JSON type, an unknown member added).
//! The mutations make a mix of valid and invalid instances that the tests compare verdicts on.

use serde_json::{json, Map, Value};

fn hints() -> Value {
    json!({"readOnly": true, "destructive": false, "openWorld": false})
}

/// Valid (or nearly valid) seed values of the six tool unions.
pub fn seeds() -> Vec<Value> {
    let outcome_ok = json!({"ok": true, "status": "success", "error": null});
    let outcome_failed = json!({"ok": false, "status": "validation_error", "error": "bad program"});
    let language = json!({
        "name": "workflow/v1", "title": "Workflows", "guides": "pilotage_get_guide", "catalog": "pilotage_catalog",
        "loop": {"validate": "validate_workflow", "execute": "run_workflow", "trace": "trace_run"},
        "capabilities": {"guides": true, "catalog": {"search": true}, "validate": true, "execute": true, "trace_fetch": true},
        "locator": "json-pointer", "execution": "immediate", "trace": "full", "retention": "PT1H",
        "trace_subprogram": "opaque", "promotion_authority": "caller", "context_schema": {"type": "object"}
    });
    let guide = json!({"id": "intro", "title": "Intro", "level": "core", "topics": ["steps"], "language": "workflow/v1",
        "version": "3", "size_bytes": 1200, "tokens_estimate": 300, "format": "text/markdown"});
    let mut fetched = guide.clone();
    fetched["body"] = json!("# Intro");
    let entry = json!({"id": "cap_read_user_profile", "kind": "capability", "name": "Read profile", "description": "d",
        "input_schema": {"type": "object"}, "output_schema": null, "risk": "safe", "risk_hints": hints(),
        "tags": ["users"], "languages": ["workflow/v1"], "revision": "7"});
    let diagnostic = json!({"severity": "error", "code": "unknown_capability", "path": "/steps/0/capability",
        "message": "unknown capability", "hint": "close match: cap_read_user_profile"});
    let range_diagnostic = json!({"severity": "warning", "code": "style", "message": "m",
        "path": {"start": {"line": 1, "column": 1}, "end": {"line": 1, "column": 9}}});
    let plan = json!({"steps": [{"id": "profile", "calls": "cap_read_user_profile", "risk": "safe", "risk_hints": hints(),
        "arm": {"branch": "b1", "label": "then"}, "loop": "l1"}], "max_risk": "safe", "max_risk_hints": hints()});
    let trace = json!({"run_id": "run_1", "level": "full", "stats": {"steps": 1}, "steps": [
        {"id": "profile", "calls": "cap_read_user_profile", "input": {"user_id": "42"}, "output": null,
         "outcome": outcome_ok, "t_ms": 84, "decisions": [{"at": "b1", "took": "then", "because": "x > 1"}]}]});
    let error = json!({"error": {"kind": "not_found", "message": "unknown run: it may have expired"}});
    vec![
        json!({"pilotage": "1.1", "languages": [language]}),
        json!({"pilotage": "1.1", "capabilities": {"validate": true}, "languages": [{"name": "sql/pg", "title": "SQL",
            "guides": "pilotage_get_guide", "loop": {"validate": "check_sql"}, "locator": "text-range", "retention": "none"}]}),
        json!({"guides": [guide]}),
        json!({"guide": fetched}),
        json!({"items": [entry], "next_cursor": "c2", "catalog_version": "cv_1"}),
        json!({"entry": entry, "catalog_version": "cv_1"}),
        json!({"catalog_version": "cv_2", "changes": [{"id": "cap_x", "change": "modified"}]}),
        json!({"valid": false, "diagnostics": [diagnostic, range_diagnostic], "catalog_version": "cv_1"}),
        json!({"valid": true, "diagnostics": [], "plan": plan, "references": ["cap_read_user_profile"]}),
        json!({"run_id": "run_1", "outcome": outcome_ok, "output": {"name": "Amira"}, "trace": trace}),
        json!({"run_id": "run_2", "outcome": outcome_failed, "diagnostics": [diagnostic]}),
        json!({"run_id": "run_1", "outcome": outcome_ok, "trace": trace, "output": 3, "narration": "It ran."}),
        error,
        json!({"error": {"kind": "not_found", "message": "unknown entry"}, "catalog_version": "cv_9f2c41ab07de"}),
    ]
}

/// Replacement values of every JSON type.
fn replacements() -> [Value; 9] {
    [
        json!(null),
        json!(true),
        json!(7),
        json!(7.0),
        json!(-1),
        json!(0.5),
        json!("text"),
        json!([]),
        json!({}),
    ]
}

/// `seed` and its mutations: for every object member at any depth, the object without it and
/// with it replaced by a value of each JSON type; for every object, one unknown member added.
pub fn mutations(seed: &Value) -> Vec<Value> {
    let mut out = vec![seed.clone()];
    let mut pointers = Vec::new();
    collect_object_pointers(seed, String::new(), &mut pointers);
    for pointer in pointers {
        let object = seed
            .pointer(&pointer)
            .and_then(Value::as_object)
            .cloned()
            .unwrap_or_default();
        let mut with_unknown = seed.clone();
        set(&mut with_unknown, &pointer, |o| {
            o.insert("x-unknown".into(), json!({"any": 1}));
        });
        out.push(with_unknown);
        for key in object.keys() {
            let mut removed = seed.clone();
            set(&mut removed, &pointer, |o| {
                o.remove(key);
            });
            out.push(removed);
            for replacement in replacements() {
                let mut replaced = seed.clone();
                set(&mut replaced, &pointer, |o| {
                    o.insert(key.clone(), replacement.clone());
                });
                out.push(replaced);
            }
        }
    }
    out
}

fn collect_object_pointers(value: &Value, at: String, out: &mut Vec<String>) {
    match value {
        Value::Object(members) => {
            out.push(at.clone());
            for (key, child) in members {
                collect_object_pointers(
                    child,
                    format!("{at}/{}", key.replace('~', "~0").replace('/', "~1")),
                    out,
                );
            }
        }
        Value::Array(items) => {
            for (index, child) in items.iter().enumerate() {
                collect_object_pointers(child, format!("{at}/{index}"), out);
            }
        }
        _ => {}
    }
}

fn set(root: &mut Value, pointer: &str, edit: impl FnOnce(&mut Map<String, Value>)) {
    if let Some(Value::Object(object)) = root.pointer_mut(pointer) {
        edit(object);
    }
}

/// Seeds and all their mutations, plus non-object values.
pub fn corpus() -> Vec<Value> {
    let mut all: Vec<Value> = seeds().iter().flat_map(mutations).collect();
    all.extend(replacements());
    all
}

/// Every value of the [`corpus`] and every value nested in one, without duplicates (in the
/// order of their JSON text).
pub fn nested_values() -> Vec<Value> {
    fn nodes(value: &Value, out: &mut std::collections::BTreeSet<String>) {
        out.insert(value.to_string());
        match value {
            Value::Object(members) => members.values().for_each(|v| nodes(v, out)),
            Value::Array(items) => items.iter().for_each(|v| nodes(v, out)),
            _ => {}
        }
    }
    let mut unique = std::collections::BTreeSet::new();
    for instance in corpus() {
        nodes(&instance, &mut unique);
    }
    unique
        .iter()
        .map(|text| serde_json::from_str(text).expect("written by to_string"))
        .collect()
}
