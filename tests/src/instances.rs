//! Instances generated from a schema location, for property tests of validators: mostly
//! valid-looking values (required members present, enum values, branch shapes, strings that
//! fit the usual patterns), each decision randomly perturbed (a member dropped or added, a
//! wrong type, a value outside an enum, an out-of-range number), so that both verdicts occur
//! and every keyword is reached. Deterministic for a seed.

use serde_json::{json, Map, Value};

/// A small deterministic generator (xorshift64*).
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    /// A generator for `seed`.
    pub fn new(seed: u64) -> Self {
        Self(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }
    /// The next number.
    pub fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    /// A number below `n` (n > 0).
    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n as u64) as usize
    }
    /// True with probability `1/n`.
    pub fn one_in(&mut self, n: usize) -> bool {
        self.below(n) == 0
    }
}

/// Strings that exercise the patterns of the Pilotage and peer schemas and their neighbours.
const STRINGS: &[&str] = &[
    "",
    "1.1",
    "10.02",
    "1.1.0",
    "1",
    ".1",
    "1.",
    "workflow/v1",
    "rules/v2",
    "a/b/c",
    "/x",
    "x/",
    "PT10M",
    "P1D",
    "P",
    "PT",
    "P1Y2M3W4DT5H6M7.5S",
    "PT1.S",
    "P1DT",
    "session",
    "approve",
    "reject",
    "scope:read_only",
    "Scope:read",
    "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
    "E3B0C44298FC1C149AFBF4C8996FB92427AE41E4649B934CA495991B7852B855",
    "héllo wörld",
    "line\nbreak",
    "1.1\n",
    "core",
    "summary",
    "full",
    "none",
    "error",
    "invalid_request",
    "not_found",
    "text/markdown",
    "2026-11-30T10:00:00Z",
    // For the keywords test schema (pilotage-codegen/tests/schemas/keywords.schema.json).
    "ab12",
    "abcd",
    "a1b2c3",
    "x-foo",
    "a1",
    "id",
    "a",
    "b",
    "c12",
    "card",
    "billing",
    "gift",
    "message",
    "kind",
    "forbidden",
    "ab-cd",
    "ff-00",
    "fff",
    "a b",
    "ab cd",
    "àé",
    "bd",
    "abc",
    "zzc",
    "^-]\\/.",
    "PT1H",
    "P1DT2H",
    "a-very-long-member-name",
    "x",
    "y",
];

fn random_value(rng: &mut Rng, depth: usize) -> Value {
    match rng.below(if depth > 2 { 5 } else { 7 }) {
        0 => Value::Null,
        1 => Value::Bool(rng.one_in(2)),
        2 => json!(rng.below(2000) as i64 - 1000),
        3 => json!((rng.below(2000) as f64) / 8.0 - 100.0),
        4 => Value::String(STRINGS[rng.below(STRINGS.len())].to_owned()),
        5 => Value::Array((0..rng.below(3)).map(|_| random_value(rng, depth + 1)).collect()),
        _ => {
            let mut object = Map::new();
            for _ in 0..rng.below(3) {
                object.insert(
                    STRINGS[rng.below(STRINGS.len())].to_owned(),
                    random_value(rng, depth + 1),
                );
            }
            Value::Object(object)
        }
    }
}

/// An instance for the schema at `pointer` of `document`.
pub fn instance(document: &Value, pointer: &str, rng: &mut Rng) -> Value {
    let schema = document.pointer(pointer).cloned().unwrap_or(Value::Bool(true));
    generate(document, &schema, rng, 0)
}

fn resolve<'a>(document: &'a Value, reference: &str) -> Option<&'a Value> {
    let fragment = reference.split_once('#')?;
    if !fragment.0.is_empty() {
        return None;
    }
    document.pointer(fragment.1)
}

fn generate(document: &Value, schema: &Value, rng: &mut Rng, depth: usize) -> Value {
    // One time in twelve anything at all: wrong types, stray members.
    if rng.one_in(12) || depth > 8 {
        return random_value(rng, depth);
    }
    let Value::Object(object) = schema else {
        return random_value(rng, depth);
    };
    if let Some(Value::String(reference)) = object.get("$ref") {
        if let Some(target) = resolve(document, reference) {
            let target = target.clone();
            let mut value = generate(document, &target, rng, depth + 1);
            // Sibling keywords (2020-12) may add members.
            if let (Value::Object(members), Some(Value::Object(properties))) = (&mut value, object.get("properties")) {
                for (name, subschema) in properties {
                    if rng.one_in(2) {
                        members.insert(name.clone(), generate(document, subschema, rng, depth + 1));
                    }
                }
            }
            return value;
        }
        return random_value(rng, depth);
    }
    if let Some(value) = object.get("const") {
        return value.clone();
    }
    if let Some(Value::Array(values)) = object.get("enum") {
        if !values.is_empty() && !rng.one_in(8) {
            return values[rng.below(values.len())].clone();
        }
        return json!("a-value-no-enum-has");
    }
    for keyword in ["oneOf", "anyOf"] {
        if let Some(Value::Array(branches)) = object.get(keyword) {
            if !branches.is_empty() {
                let branch = &branches[rng.below(branches.len())];
                let mut value = generate(document, branch, rng, depth + 1);
                merge_siblings(document, object, &mut value, rng, depth);
                return value;
            }
        }
    }
    if let Some(Value::Array(branches)) = object.get("allOf") {
        let mut value = Value::Null;
        for branch in branches {
            let part = generate(document, branch, rng, depth + 1);
            value = match (value, part) {
                (Value::Object(mut a), Value::Object(b)) => {
                    a.extend(b);
                    Value::Object(a)
                }
                (Value::Null, part) => part,
                (value, _) => value,
            };
        }
        merge_siblings(document, object, &mut value, rng, depth);
        return value;
    }
    if let Some(Value::Object(then)) = object.get("then") {
        // Shape it like the object itself, then sometimes like `then` as well.
        let mut plain = object.clone();
        plain.remove("if");
        plain.remove("then");
        plain.remove("else");
        let mut value = generate(document, &Value::Object(plain), rng, depth + 1);
        if rng.one_in(2) {
            if let (Value::Object(members), Value::Object(extra)) = (
                &mut value,
                generate(document, &Value::Object(then.clone()), rng, depth + 1),
            ) {
                members.extend(extra);
            }
        }
        return value;
    }
    let types: Vec<&str> = match object.get("type") {
        Some(Value::String(one)) => vec![one.as_str()],
        Some(Value::Array(many)) => many.iter().filter_map(Value::as_str).collect(),
        _ if object.contains_key("properties") || object.contains_key("required") => vec!["object"],
        _ if object.contains_key("items") || object.contains_key("prefixItems") => vec!["array"],
        _ => return random_value(rng, depth),
    };
    let chosen = types.get(rng.below(types.len().max(1))).copied().unwrap_or("null");
    match chosen {
        "object" => {
            let mut members = Map::new();
            let required: Vec<&str> = object
                .get("required")
                .and_then(Value::as_array)
                .map(|r| r.iter().filter_map(Value::as_str).collect())
                .unwrap_or_default();
            if let Some(Value::Object(properties)) = object.get("properties") {
                for (name, subschema) in properties {
                    let wanted = if required.contains(&name.as_str()) {
                        !rng.one_in(10)
                    } else {
                        rng.one_in(2)
                    };
                    if wanted {
                        members.insert(name.clone(), generate(document, subschema, rng, depth + 1));
                    }
                }
            }
            for name in &required {
                if !members.contains_key(*name) && !rng.one_in(10) {
                    members.insert((*name).to_owned(), random_value(rng, depth + 1));
                }
            }
            if rng.one_in(6) {
                members.insert("x-extra".into(), random_value(rng, depth + 1));
            }
            Value::Object(members)
        }
        "array" => {
            let mut items = Vec::new();
            if let Some(Value::Array(prefix)) = object.get("prefixItems") {
                for subschema in prefix {
                    items.push(generate(document, subschema, rng, depth + 1));
                }
            }
            let item_schema = object.get("items").filter(|i| !i.is_array()).cloned();
            let min = object.get("minItems").and_then(Value::as_u64).unwrap_or(0) as usize;
            let count = if rng.one_in(6) {
                min.saturating_sub(1)
            } else {
                min + rng.below(3)
            };
            for _ in 0..count {
                items.push(match &item_schema {
                    Some(schema) => generate(document, schema, rng, depth + 1),
                    None => random_value(rng, depth + 1),
                });
            }
            if object.get("uniqueItems") == Some(&Value::Bool(true)) && rng.one_in(4) {
                if let Some(first) = items.first().cloned() {
                    items.push(first);
                }
            }
            Value::Array(items)
        }
        "string" => Value::String(STRINGS[rng.below(STRINGS.len())].to_owned()),
        "integer" | "number" => {
            let low = object
                .get("minimum")
                .or(object.get("exclusiveMinimum"))
                .and_then(Value::as_f64)
                .unwrap_or(-50.0);
            let n = low as i64 - 2 + rng.below(60) as i64;
            if chosen == "number" && rng.one_in(3) {
                json!(n as f64 + 0.5)
            } else if rng.one_in(5) {
                json!(n as f64)
            } else {
                json!(n)
            }
        }
        "boolean" => Value::Bool(rng.one_in(2)),
        _ => Value::Null,
    }
}

/// Adds the `properties` a schema declares beside its applicator to a generated object.
fn merge_siblings(document: &Value, object: &Map<String, Value>, value: &mut Value, rng: &mut Rng, depth: usize) {
    if let (Value::Object(members), Some(Value::Object(properties))) = (value, object.get("properties")) {
        for (name, subschema) in properties {
            if !members.contains_key(name) && rng.one_in(2) {
                members.insert(name.clone(), generate(document, subschema, rng, depth + 1));
            }
        }
    }
}
