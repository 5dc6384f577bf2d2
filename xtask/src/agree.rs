//! `cargo xtask agree DIR [OPTIONS]`: a differential check
//! of the generated validators against the `jsonschema` crate (the oracle) on real schemas.
//!
//! For every `*.json` schema of DIR (sorted, the first K with `--limit`):
//!
//! 1. its validators are generated in-process (`validators::generate_with`, root included,
//!    default options: a document without `$schema` is read as 2020-12, as jsonschema reads
//!    it); a refusal or a panic is recorded with its error;
//! 2. jsonschema builds its validator (`jsonschema::options()` with its defaults, and a
//!    retriever that refuses every external document: no network); a schema it cannot build
//!    is counted and skipped;
//! 3. N instances are derived from the schema, deterministically (seeded by the file name):
//!    its own `examples`, `default`, `const` and `enum` values (at the root as instances, in
//!    the root's properties as members of an object), random values following its structure
//!    (`properties`, `required`, `items`, `type`, `enum`, local `$ref`s, `allOf`/`anyOf`/
//!    `oneOf`, to a bounded depth), and mutations of those (a member dropped, a value of
//!    another type, an unknown member, empty strings and arrays, numbers at and past bounds,
//!    strings with a trailing newline or non-ASCII digits and letters);
//! 4. jsonschema's verdict on each instance is taken here; the generated modules are compiled
//!    in scratch crates (`$AGREE_CRATE_DIR` or `/tmp/agree-crate`, target `$AGREE_TARGET_DIR` or `/tmp/agree-target`)
//!    whose binary prints the generated validators' verdict on each case. A module rustc
//!    rejects is recorded with the error and left out, and the crate is built again.
//! 5. the same binary runs the root's stream program (the fused path of `parse_slice`) on each
//!    case, from its text and from its value: a verdict it gives that differs from `is_valid`'s
//!    is a disagreement (INCONSISTENT), and the report says how many cases it decided (it may
//!    answer "unknown", and `parse_slice` then validates the two-pass way).
//!
//! The report lists the figures and every disagreement: the instance, both verdicts, the
//! violation the rejecting side names (its schema location and the keyword's value), and a
//! shrunk instance when a smaller one still disagrees. A disagreement on an `idn-*` format is
//! expected (jsonschema here is built without its `idna` feature and accepts any string there)
//! and listed apart.
//!
//! With `--base URI` (SchemaStore's is `https://json.schemastore.org/`), the files of DIR are a
//! catalogue that refers to itself: each file `F` is the document `URI` + `F` (or `URI` + `F`
//! without `.json`) and each schema's own base is `URI` + its name. jsonschema retrieves those
//! (and nothing else), and the generator is given the ones a schema reaches as its schema set.
//!
//! `--sample K` keeps K schemas spread evenly over the sorted list (after `--filter` and
//! `--limit`). `--bench` then also times both sides on the same instances, in a release build
//! (module [`mod@bench`]): the report gains a section with the aggregate ratio and the ten worst
//! schemas.
//!
//! ```text
//! cargo xtask agree DIR [--instances N] [--limit K] [--sample K] [--report FILE] [--filter SUBSTRING]
//!                       [--batch B] [--base URI] [--bench]
//! ```

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fmt::Write as _;
use std::io::Read as _;
use std::panic::AssertUnwindSafe;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};
use std::time::{Duration, Instant};

use pilotage_codegen::validators::{generate_with, Options as GenOptions, Tuning};
use serde_json::{json, Map, Number, Value};

pub mod bench;
mod oracle;

use oracle::Catalogue;

const USAGE: &str = "usage: cargo xtask agree DIR [--instances N] [--limit K] [--sample K] [--report FILE] \
                     [--filter SUBSTRING] [--batch B] [--base URI] [--bench]";

#[derive(Debug, Clone)]
struct Options {
    dir: PathBuf,
    instances: usize,
    limit: Option<usize>,
    report: Option<PathBuf>,
    filter: Option<String>,
    /// Schemas per scratch build (0: all in one).
    batch: usize,
    /// `--base URI`: every file `F` of DIR is also the document `URI` + `F` (and `URI` + `F`
    /// without `.json`), for both sides: the schemas of a catalogue that refer to each other.
    base: Option<String>,
    /// `--sample K`: K schemas spread evenly over the sorted (and filtered) list.
    sample: Option<usize>,
    /// `--bench`: also time both sides on the same instances (see [`mod@bench`]).
    bench: bool,
    /// Print the report on stdout (the command line; `cargo xtask bench` only writes it).
    echo: bool,
}

fn parse(args: &[String]) -> Result<Options, String> {
    let mut options = Options {
        dir: PathBuf::new(),
        instances: 20,
        limit: None,
        report: None,
        filter: None,
        batch: 0,
        base: None,
        sample: None,
        bench: false,
        echo: true,
    };
    let mut dir = None;
    let mut rest = args.iter();
    while let Some(arg) = rest.next() {
        let mut value = |name: &str| rest.next().cloned().ok_or_else(|| format!("{name} needs a value"));
        let number = |text: String, name: &str| text.parse::<usize>().map_err(|_| format!("{name} takes a number"));
        match arg.as_str() {
            "--instances" => options.instances = number(value(arg)?, arg)?,
            "--limit" => options.limit = Some(number(value(arg)?, arg)?),
            "--batch" => options.batch = number(value(arg)?, arg)?,
            "--report" => options.report = Some(PathBuf::from(value(arg)?)),
            "--filter" => options.filter = Some(value(arg)?),
            "--base" => options.base = Some(value(arg)?),
            "--sample" => options.sample = Some(number(value(arg)?, arg)?),
            "--bench" => options.bench = true,
            other if other.starts_with('-') => return Err(format!("unknown option `{other}`")),
            other if dir.is_none() => dir = Some(PathBuf::from(other)),
            other => return Err(format!("unexpected argument `{other}`")),
        }
    }
    options.dir = dir.ok_or("DIR is required")?;
    Ok(options)
}

/// The entry point of `cargo xtask agree`.
pub fn main(args: &[String]) -> ExitCode {
    let options = match parse(args) {
        Ok(options) => options,
        Err(message) => {
            eprintln!("error: {message}\n{USAGE}");
            return ExitCode::from(2);
        }
    };
    match agree(&options) {
        Ok(outcome) => {
            if outcome.clean {
                ExitCode::SUCCESS
            } else {
                ExitCode::from(1)
            }
        }
        Err(message) => {
            eprintln!("error: {message}");
            ExitCode::from(2)
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Deterministic randomness.

/// splitmix64, seeded by FNV-1a of a name.
struct Rng(u64);

impl Rng {
    fn new(seed: &str) -> Self {
        let mut h: u64 = 0xcbf2_9ce4_8422_2325;
        for b in seed.bytes() {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0100_0000_01b3);
        }
        Self(h)
    }

    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: usize) -> usize {
        if n == 0 {
            0
        } else {
            (self.next() % n as u64) as usize
        }
    }

    /// True with probability `percent`/100.
    fn chance(&mut self, percent: u64) -> bool {
        self.next() % 100 < percent
    }

    fn pick<'a, T>(&mut self, items: &'a [T]) -> Option<&'a T> {
        if items.is_empty() {
            None
        } else {
            Some(&items[self.below(items.len())])
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Instances.

fn percent_decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' && i + 2 < bytes.len() {
            let hex = std::str::from_utf8(&bytes[i + 1..i + 3]).unwrap_or("");
            if let Ok(b) = u8::from_str_radix(hex, 16) {
                out.push(b);
                i += 3;
                continue;
            }
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The schema a local `$ref` (`#`, `#/pointer`) names, followed up to a few times; the schema
/// itself when it has no `$ref` or one this does not follow.
fn resolve<'a>(root: &'a Value, mut schema: &'a Value) -> &'a Value {
    for _ in 0..16 {
        let Some(Value::String(reference)) = schema.get("$ref") else {
            return schema;
        };
        let Some(fragment) = reference.strip_prefix('#') else {
            return schema;
        };
        let target = if fragment.is_empty() {
            Some(root)
        } else if fragment.starts_with('/') {
            root.pointer(&percent_decode(fragment))
        } else {
            None
        };
        match target {
            Some(target) if !std::ptr::eq(target, schema) => schema = target,
            _ => return schema,
        }
    }
    schema
}

/// A sample of each format (valid by the format's definition).
fn format_sample(format: &str) -> Option<&'static str> {
    Some(match format {
        "date-time" => "2024-01-15T10:30:00Z",
        "date" => "2024-01-15",
        "time" => "10:30:00Z",
        "duration" => "P1DT2H",
        "email" => "user@example.com",
        "idn-email" => "用户@例子.广告",
        "hostname" => "example.com",
        "idn-hostname" => "bücher.example",
        "ipv4" => "192.168.0.1",
        "ipv6" => "2001:db8::1",
        "uri" => "https://example.com/path?q=1",
        "uri-reference" => "../path#frag",
        "iri" => "https://例子.example/路径",
        "iri-reference" => "路径/x",
        "uri-template" => "https://example.com/{id}",
        "json-pointer" => "/a/b~1c",
        "relative-json-pointer" => "0/a",
        "regex" => "^[a-z]+$",
        "uuid" => "123e4567-e89b-12d3-a456-426614174000",
        _ => return None,
    })
}

/// Strings that probe the places where regex dialects and format checkers differ.
const PROBE_STRINGS: &[&str] = &[
    "",
    " ",
    "abc",
    "ABC",
    "a-b_c.d",
    "123",
    "١٢٣",
    "éàü",
    "abc\n",
    "x y",
    "${var}",
    "https://example.com",
    "2024-01-15",
    "1.2.3",
    "日本語",
    "a\u{1F600}",
];

struct Gen<'a> {
    root: &'a Value,
    rng: Rng,
    /// Values left to generate in this instance (bounds its size).
    budget: usize,
}

/// Collects a schema's keywords with those of the subschemas it applies in place (a local
/// `$ref`, every `allOf` member, one `anyOf`/`oneOf` branch), the outer ones first.
fn merge_into(out: &mut Map<String, Value>, other: &Map<String, Value>) {
    for (key, value) in other {
        match (key.as_str(), out.get_mut(key), value) {
            ("properties", Some(Value::Object(mine)), Value::Object(theirs)) => {
                for (k, v) in theirs {
                    mine.entry(k.clone()).or_insert_with(|| v.clone());
                }
            }
            ("required", Some(Value::Array(mine)), Value::Array(theirs)) => {
                for v in theirs {
                    if !mine.contains(v) {
                        mine.push(v.clone());
                    }
                }
            }
            ("allOf" | "anyOf" | "oneOf" | "$ref" | "not" | "if" | "then" | "else", _, _) => {}
            (_, None, _) => {
                out.insert(key.clone(), value.clone());
            }
            _ => {}
        }
    }
}

impl Gen<'_> {
    fn view(&mut self, schema: &Value, level: usize) -> Map<String, Value> {
        let resolved = resolve(self.root, schema);
        let Value::Object(map) = resolved else {
            return Map::new();
        };
        let mut out = Map::new();
        merge_into(&mut out, map);
        if level > 4 {
            return out;
        }
        if let Some(Value::Array(all)) = map.get("allOf") {
            for member in all {
                let sub = self.view(member, level + 1);
                merge_into(&mut out, &sub);
            }
        }
        for key in ["anyOf", "oneOf"] {
            if let Some(Value::Array(branches)) = map.get(key) {
                // Prefer a branch that is not just `null`.
                let useful: Vec<&Value> = branches
                    .iter()
                    .filter(|b| resolve(self.root, b).get("type") != Some(&json!("null")))
                    .collect();
                let pool: Vec<&Value> = if useful.is_empty() || self.rng.chance(10) {
                    branches.iter().collect()
                } else {
                    useful
                };
                if let Some(branch) = self.rng.pick(&pool) {
                    let sub = self.view(branch, level + 1);
                    merge_into(&mut out, &sub);
                }
            }
        }
        out
    }

    fn any(&mut self) -> Value {
        let samples = [
            json!(null),
            json!(true),
            json!(0),
            json!(1.5),
            json!(-3),
            json!("x"),
            json!(""),
            json!([]),
            json!({}),
            json!([1, "a"]),
            json!({"a": 1}),
        ];
        samples[self.rng.below(samples.len())].clone()
    }

    fn own_values(schema: &Map<String, Value>) -> Vec<Value> {
        let mut values = Vec::new();
        if let Some(v) = schema.get("const") {
            values.push(v.clone());
        }
        if let Some(Value::Array(e)) = schema.get("enum") {
            values.extend(e.iter().cloned());
        }
        match schema.get("examples") {
            Some(Value::Array(e)) => values.extend(e.iter().cloned()),
            Some(other) => values.push(other.clone()),
            None => {}
        }
        if let Some(v) = schema.get("default") {
            values.push(v.clone());
        }
        values
    }

    fn value(&mut self, schema: &Value, depth: usize) -> Value {
        if self.budget == 0 {
            return self.any();
        }
        self.budget -= 1;
        match resolve(self.root, schema) {
            Value::Bool(false) => return json!(null),
            Value::Object(_) => {}
            _ => return self.any(),
        }
        let view = self.view(schema, 0);
        if let Some(c) = view.get("const") {
            if self.rng.chance(90) {
                return c.clone();
            }
        }
        if let Some(Value::Array(e)) = view.get("enum") {
            if !e.is_empty() && self.rng.chance(90) {
                return e[self.rng.below(e.len())].clone();
            }
        }
        let own = Self::own_values(&view);
        if !own.is_empty() && self.rng.chance(35) {
            return own[self.rng.below(own.len())].clone();
        }
        let types: Vec<String> = match view.get("type") {
            Some(Value::String(t)) => vec![t.clone()],
            Some(Value::Array(ts)) => ts.iter().filter_map(|t| t.as_str().map(str::to_owned)).collect(),
            _ => Vec::new(),
        };
        let ty = if types.is_empty() {
            let has = |k: &str| view.contains_key(k);
            if has("properties") || has("required") || has("additionalProperties") || has("patternProperties") {
                "object".to_owned()
            } else if has("items") || has("prefixItems") || has("minItems") {
                "array".to_owned()
            } else if has("pattern") || has("minLength") || has("maxLength") || has("format") {
                "string".to_owned()
            } else if has("minimum") || has("maximum") || has("multipleOf") {
                "number".to_owned()
            } else {
                return self.any();
            }
        } else {
            let non_null: Vec<&String> = types.iter().filter(|t| *t != "null").collect();
            if non_null.is_empty() || self.rng.chance(10) {
                types[self.rng.below(types.len())].clone()
            } else {
                non_null[self.rng.below(non_null.len())].clone()
            }
        };
        match ty.as_str() {
            "object" => self.object(&view, depth),
            "array" => self.array(&view, depth),
            "string" => self.string(&view),
            "integer" => self.number(&view, true),
            "number" => self.number(&view, false),
            "boolean" => json!(self.rng.chance(50)),
            "null" => json!(null),
            _ => self.any(),
        }
    }

    fn object(&mut self, view: &Map<String, Value>, depth: usize) -> Value {
        let mut out = Map::new();
        let required: Vec<String> = match view.get("required") {
            Some(Value::Array(r)) => r.iter().filter_map(|v| v.as_str().map(str::to_owned)).collect(),
            _ => Vec::new(),
        };
        let optional_chance = match depth {
            0 => 60,
            1 => 40,
            2..=3 => 25,
            _ => 5,
        };
        if let Some(Value::Object(properties)) = view.get("properties") {
            for (name, sub) in properties {
                if depth > 7 && !required.contains(name) {
                    continue;
                }
                if required.contains(name) || self.rng.chance(optional_chance) {
                    let value = if depth > 7 {
                        self.any()
                    } else {
                        self.value(sub, depth + 1)
                    };
                    out.insert(name.clone(), value);
                }
            }
        }
        for name in &required {
            if !out.contains_key(name) {
                let sub = view.get("additionalProperties").cloned().unwrap_or(json!({}));
                let value = if depth > 7 {
                    self.any()
                } else {
                    self.value(&sub, depth + 1)
                };
                out.insert(name.clone(), value);
            }
        }
        if let Some(Value::Object(patterns)) = view.get("patternProperties") {
            if self.rng.chance(20) {
                if let Some((pattern, sub)) = patterns.iter().nth(self.rng.below(patterns.len())) {
                    // A name the pattern may match: its literal characters.
                    let name: String = pattern
                        .chars()
                        .filter(|c| c.is_alphanumeric() || *c == '-' || *c == '_')
                        .take(12)
                        .collect();
                    let name = if name.is_empty() { "key".to_owned() } else { name };
                    if !out.contains_key(&name) && depth <= 7 {
                        let value = self.value(sub, depth + 1);
                        out.insert(name, value);
                    }
                }
            }
        }
        match view.get("additionalProperties") {
            Some(Value::Object(_)) if depth <= 7 && self.rng.chance(25) => {
                let sub = view["additionalProperties"].clone();
                let value = self.value(&sub, depth + 1);
                out.insert("extra".to_owned(), value);
            }
            _ => {}
        }
        if let Some(min) = view.get("minProperties").and_then(Value::as_u64) {
            let mut i = 0;
            while (out.len() as u64) < min.min(8) {
                out.insert(format!("p{i}"), json!(i));
                i += 1;
            }
        }
        Value::Object(out)
    }

    fn array(&mut self, view: &Map<String, Value>, depth: usize) -> Value {
        let min = view.get("minItems").and_then(Value::as_u64).unwrap_or(0).min(6) as usize;
        let max = view
            .get("maxItems")
            .and_then(Value::as_u64)
            .map_or(min + 3, |m| (m as usize).min(min + 3));
        let max = max.max(min);
        let mut len = min + self.rng.below(max - min + 1);
        if depth > 6 {
            len = min;
        }
        let tuple: Option<Vec<Value>> = match (view.get("prefixItems"), view.get("items")) {
            (Some(Value::Array(p)), _) => Some(p.clone()),
            (_, Some(Value::Array(p))) => Some(p.clone()),
            _ => None,
        };
        let rest = match (view.get("prefixItems"), view.get("items"), view.get("additionalItems")) {
            (Some(_), Some(items), _) => items.clone(),
            (None, Some(Value::Array(_)), Some(additional)) => additional.clone(),
            (None, Some(Value::Array(_)), None) => json!({}),
            (_, Some(items), _) => items.clone(),
            (_, None, _) => json!({}),
        };
        let mut out = Vec::new();
        for i in 0..len {
            let sub = tuple
                .as_ref()
                .and_then(|t| t.get(i))
                .cloned()
                .unwrap_or_else(|| rest.clone());
            let value = if depth > 7 {
                self.any()
            } else {
                self.value(&sub, depth + 1)
            };
            out.push(value);
        }
        if view.get("uniqueItems") == Some(&json!(true)) {
            let mut seen = BTreeSet::new();
            out.retain(|v| seen.insert(v.to_string()));
        }
        Value::Array(out)
    }

    fn string(&mut self, view: &Map<String, Value>) -> Value {
        let min = view.get("minLength").and_then(Value::as_u64).map(|n| n as usize);
        let max = view.get("maxLength").and_then(Value::as_u64).map(|n| n as usize);
        if let Some(format) = view.get("format").and_then(Value::as_str) {
            if let Some(sample) = format_sample(format) {
                if self.rng.chance(80) {
                    return json!(sample);
                }
            }
        }
        // At a bound, or one past it.
        if self.rng.chance(20) {
            let lengths: Vec<usize> = [min, min.and_then(|m| m.checked_sub(1)), max, max.map(|m| m + 1)]
                .into_iter()
                .flatten()
                .filter(|n| *n <= 300)
                .collect();
            if let Some(&n) = self.rng.pick(&lengths) {
                return json!("a".repeat(n));
            }
        }
        let mut text = PROBE_STRINGS[self.rng.below(PROBE_STRINGS.len())].to_owned();
        if let Some(min) = min {
            while text.chars().count() < min.min(300) {
                text.push('a');
            }
        }
        if let Some(max) = max {
            if text.chars().count() > max {
                text = text.chars().take(max).collect();
            }
        }
        json!(text)
    }

    fn number(&mut self, view: &Map<String, Value>, integer: bool) -> Value {
        let get = |k: &str| view.get(k).and_then(Value::as_f64);
        let mut candidates: Vec<f64> = Vec::new();
        for key in ["minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"] {
            if let Some(b) = get(key) {
                candidates.extend([b, b - 1.0, b + 1.0]);
                if !integer {
                    candidates.extend([b - 0.5, b + 0.5]);
                }
            }
        }
        // Draft-04's boolean exclusive bounds.
        let lo = get("minimum").or(get("exclusiveMinimum")).unwrap_or(-100.0);
        let hi = get("maximum")
            .or(get("exclusiveMaximum"))
            .unwrap_or(lo.max(0.0) + 100.0);
        let hi = if hi < lo { lo } else { hi };
        let random = lo + (hi - lo) * (self.rng.below(1001) as f64 / 1000.0);
        let mut value = if candidates.is_empty() || self.rng.chance(50) {
            random
        } else {
            candidates[self.rng.below(candidates.len())]
        };
        if let Some(m) = get("multipleOf") {
            if m > 0.0 && self.rng.chance(70) {
                value = (value / m).round() * m;
            }
        }
        if integer || self.rng.chance(40) {
            value = value.round();
        }
        number_value(value, integer)
    }
}

fn number_value(value: f64, integer: bool) -> Value {
    if value.fract() == 0.0 && value.abs() < 9.0e15 && (integer || value.abs() < 1.0e15) {
        json!(value as i64)
    } else {
        Number::from_f64(value).map_or(json!(0), Value::Number)
    }
}

/// Every location of a value, as paths of keys and indices.
fn paths(value: &Value, prefix: &mut Vec<Value>, out: &mut Vec<Vec<Value>>) {
    if out.len() > 400 {
        return;
    }
    out.push(prefix.clone());
    match value {
        Value::Object(map) => {
            for (k, v) in map {
                prefix.push(json!(k));
                paths(v, prefix, out);
                prefix.pop();
            }
        }
        Value::Array(items) => {
            for (i, v) in items.iter().enumerate() {
                prefix.push(json!(i));
                paths(v, prefix, out);
                prefix.pop();
            }
        }
        _ => {}
    }
}

fn at_mut<'a>(value: &'a mut Value, path: &[Value]) -> Option<&'a mut Value> {
    let mut cur = value;
    for step in path {
        cur = match (cur, step) {
            (Value::Object(map), Value::String(k)) => map.get_mut(k)?,
            (Value::Array(items), Value::Number(i)) => items.get_mut(i.as_u64()? as usize)?,
            _ => return None,
        };
    }
    Some(cur)
}

/// One mutation of `base` at a random location.
fn mutate(rng: &mut Rng, base: &Value) -> Value {
    let mut out = base.clone();
    let mut all = Vec::new();
    paths(&out, &mut Vec::new(), &mut all);
    let path = rng.pick(&all).cloned().unwrap_or_default();
    let Some(node) = at_mut(&mut out, &path) else {
        return out;
    };
    let op = rng.below(8);
    match (op, &mut *node) {
        (0, Value::Object(map)) if !map.is_empty() => {
            let key = map.keys().nth(rng.below(map.len())).cloned().unwrap_or_default();
            map.remove(&key);
        }
        (1, Value::Object(map)) => {
            map.insert("__agree_unknown".to_owned(), json!(1));
        }
        (2, Value::Array(items)) if !items.is_empty() => {
            let first = items[0].clone();
            items.push(first);
        }
        (3, Value::Object(_) | Value::Array(_) | Value::String(_)) => {
            *node = match node {
                Value::Object(_) => json!({}),
                Value::Array(_) => json!([]),
                _ => json!(""),
            };
        }
        (_, Value::Number(n)) => {
            let x = n.as_f64().unwrap_or(0.0);
            let choices = [x + 1.0, x - 1.0, -x, x + 0.5, 0.0];
            let y = choices[rng.below(choices.len())];
            *node = if rng.chance(15) && y.fract() == 0.0 {
                // An integer written as a float.
                Number::from_f64(y).map_or(json!(0), Value::Number)
            } else {
                number_value(y, false)
            };
        }
        (_, Value::String(s)) => {
            let s = s.clone();
            let options: Vec<String> = vec![
                format!("{s}\n"),
                s.chars().map(|c| if c.is_ascii_digit() { '٣' } else { c }).collect(),
                s.chars()
                    .map(|c| if c.is_ascii_alphabetic() { 'é' } else { c })
                    .collect(),
                s.to_uppercase(),
                format!(" {s}"),
                s.repeat(3),
                "not-a-valid-value".to_owned(),
                format!("{s}\u{1F600}"),
            ];
            *node = json!(options[rng.below(options.len())]);
        }
        _ => {
            // Another type.
            let others = [
                json!(null),
                json!(true),
                json!(7),
                json!("text"),
                json!([]),
                json!({}),
                json!(2.5),
            ];
            let mut pick = others[rng.below(others.len())].clone();
            if std::mem::discriminant(&pick) == std::mem::discriminant(node) {
                pick = json!("text");
                if node.is_string() {
                    pick = json!(7);
                }
            }
            *node = pick;
        }
    }
    out
}

/// The instances of one schema.
fn instances(schema: &Value, file: &str, count: usize) -> Vec<Value> {
    let mut gen = Gen {
        root: schema,
        rng: Rng::new(file),
        budget: 0,
    };
    let mut out: Vec<Value> = Vec::new();
    let mut seen: BTreeSet<String> = BTreeSet::new();
    let mut push = |out: &mut Vec<Value>, v: Value| {
        if out.len() < count && seen.insert(v.to_string()) && v.to_string().len() < 200_000 {
            out.push(v);
        }
    };
    let Value::Object(root_map) = schema else {
        push(&mut out, json!(null));
        return out;
    };
    // The root's own values.
    for v in Gen::own_values(root_map).into_iter().take(count / 3 + 1) {
        push(&mut out, v);
    }
    // An object of the root's properties' own values.
    let view = gen.view(schema, 0);
    if let Some(Value::Object(properties)) = view.get("properties") {
        for variant in 0..2 {
            let mut object = Map::new();
            for (name, sub) in properties {
                let sub_view = gen.view(sub, 0);
                let own = Gen::own_values(&sub_view);
                if !own.is_empty() {
                    let v = if variant == 0 {
                        own[0].clone()
                    } else {
                        own[gen.rng.below(own.len())].clone()
                    };
                    object.insert(name.clone(), v);
                }
            }
            if let Some(Value::Array(required)) = view.get("required") {
                for name in required.iter().filter_map(Value::as_str) {
                    if !object.contains_key(name) {
                        gen.budget = 200;
                        let sub = properties.get(name).cloned().unwrap_or(json!({}));
                        let v = gen.value(&sub, 1);
                        object.insert(name.to_owned(), v);
                    }
                }
            }
            if !object.is_empty() {
                push(&mut out, Value::Object(object));
            }
        }
    }
    // Random values of the schema's structure.
    let generated_target = (out.len() + count.saturating_sub(out.len()) / 2).min(count);
    let mut attempts = 0;
    while out.len() < generated_target && attempts < count * 4 {
        attempts += 1;
        gen.budget = 300;
        let v = gen.value(schema, 0);
        push(&mut out, v);
    }
    // Mutations.
    let mut attempts = 0;
    while out.len() < count && !out.is_empty() && attempts < count * 6 {
        attempts += 1;
        let base = out[gen.rng.below(out.len())].clone();
        let mut v = mutate(&mut gen.rng, &base);
        if gen.rng.chance(30) {
            v = mutate(&mut gen.rng, &v);
        }
        push(&mut out, v);
    }
    out
}

// ---------------------------------------------------------------------------------------------
// The oracle.

impl Catalogue {
    /// The catalogue documents `schema` refers to, directly or through each other (at most
    /// 64), as (URI as referred to, file name, document).
    fn closure(&self, schema: &Value) -> Vec<(String, String, Value)> {
        let mut found: Vec<(String, String, Value)> = Vec::new();
        let mut queue = vec![schema.clone()];
        while let Some(document) = queue.pop() {
            // Every `$ref` of the document, in schemas only: not in `enum`/`const`/`default`/
            // `examples` values, but in members that merely have those names.
            let mut refs = Vec::new();
            pilotage_codegen::walk::walk(&document, "", &mut |object, _| {
                if let Some(Value::String(reference)) = object.get("$ref") {
                    refs.push(reference.clone());
                }
            });
            for reference in refs {
                let Some(name) = self.name_of(&reference) else { continue };
                let uri = format!("{}{name}", self.base);
                if found.len() >= 64 || found.iter().any(|(u, _, _)| *u == uri) {
                    continue;
                }
                if let Some(value) = self.load(name) {
                    queue.push(value.clone());
                    found.push((uri, name.to_owned(), value));
                }
            }
        }
        found
    }
}

/// jsonschema's validator of a schema (see [`oracle::oracle`]), its error on one line.
fn oracle(schema: &Value, file: &str, catalogue: Option<&Catalogue>) -> Result<jsonschema::Validator, String> {
    oracle::oracle(schema, file, catalogue).map_err(|error| first_line(&error))
}

/// jsonschema's first error on an instance: `instance pointer: message (schema path)`.
fn oracle_reason(validator: &jsonschema::Validator, instance: &Value) -> String {
    match validator.iter_errors(instance).next() {
        Some(error) => format!(
            "{}: {} (schema {})",
            if error.instance_path().as_str().is_empty() {
                "(root)"
            } else {
                error.instance_path().as_str()
            },
            truncate(&error.to_string(), 200),
            error.schema_path().as_str()
        ),
        None => String::new(),
    }
}

// ---------------------------------------------------------------------------------------------
// Helpers.

fn first_line(text: &str) -> String {
    truncate(text.lines().next().unwrap_or(""), 300)
}

fn truncate(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        text.to_owned()
    } else {
        let mut out: String = text.chars().take(max).collect();
        out.push('…');
        out
    }
}

// A refusal's reason without its file, pointer, names and numbers: corpus's own key.
use crate::corpus::reason_key;

fn schemas(options: &Options) -> Result<Vec<PathBuf>, String> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(&options.dir)
        .map_err(|e| format!("{}: {e}", options.dir.display()))?
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .filter(|p| {
            options
                .filter
                .as_ref()
                .is_none_or(|f| p.file_name().is_some_and(|n| n.to_string_lossy().contains(f.as_str())))
        })
        .collect();
    files.sort();
    if let Some(limit) = options.limit {
        files.truncate(limit);
    }
    if let Some(sample) = options.sample.filter(|&k| k < files.len()) {
        // The i-th of K is the file at i * len / K: spread over the whole list, deterministic.
        let len = files.len();
        files = (0..sample).map(|i| files[i * len / sample].clone()).collect();
    }
    Ok(files)
}

/// The value at a JSON Pointer of the schema (a jsonschema schema path may cross `$ref`s:
/// then nothing).
fn keyword_at(schema: &Value, pointer: &str) -> Option<String> {
    let pointer = pointer.split('#').next_back().unwrap_or(pointer);
    schema.pointer(pointer).map(|v| truncate(&v.to_string(), 160))
}

// ---------------------------------------------------------------------------------------------
// The run.

/// One schema's state.
struct Entry {
    file: String,
    module: String,
    schema: Value,
    /// Our generator's refusal (or panic).
    refused: Option<String>,
    tokens: Option<String>,
    /// jsonschema's failure to build.
    oracle_failed: Option<String>,
    /// rustc's error on the generated module.
    compile_error: Option<String>,
    /// The cases: instance and jsonschema's verdict.
    cases: Vec<(Value, bool)>,
}

/// The generated validators' answer on one case.
#[derive(Debug, Clone, PartialEq)]
enum Ours {
    Valid,
    /// Invalid, with the first violation.
    Invalid(String),
    /// `is_valid` and `validate` disagree (the text says how).
    Inconsistent(String),
    SchemaError(String),
    Panicked,
    Crashed,
}

struct Disagreement {
    entry: usize,
    instance: Value,
    theirs: bool,
    ours: Ours,
    oracle_reason: String,
    shrunk: Option<Value>,
}

/// What one run found.
struct Outcome {
    /// No disagreement.
    clean: bool,
    /// With `--bench`, the aggregate of the timed schemas.
    speed: Option<bench::Figures>,
}

/// `cargo xtask agree DIR --base URI --sample K --bench` for `cargo xtask bench`: the aggregate
/// of the timed schemas (`None` when none could be timed); the report is written to `report`.
pub fn speed(dir: &Path, base: &str, sample: usize, report: &Path) -> Result<Option<bench::Figures>, String> {
    let options = Options {
        dir: dir.to_owned(),
        instances: 20,
        limit: None,
        report: Some(report.to_owned()),
        filter: None,
        batch: 0,
        base: Some(base.to_owned()),
        sample: Some(sample),
        bench: true,
        echo: false,
    };
    agree(&options).map(|outcome| outcome.speed)
}

fn agree(options: &Options) -> Result<Outcome, String> {
    let started = Instant::now();
    let files = schemas(options)?;
    let catalogue = options.base.clone().map(|base| Catalogue {
        base,
        dir: options.dir.clone(),
    });
    let mut entries: Vec<Entry> = Vec::new();
    let mut unreadable: Vec<(String, String)> = Vec::new();
    let mut skipped_both = 0usize;
    let quiet_panics = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {}));
    for (index, path) in files.iter().enumerate() {
        let file = path.file_name().unwrap_or_default().to_string_lossy().into_owned();
        let schema: Value = match std::fs::read(path)
            .map_err(|e| e.to_string())
            .and_then(|b| serde_json::from_slice(&b).map_err(|e| e.to_string()))
        {
            Ok(v) => v,
            Err(e) => {
                unreadable.push((file, e));
                continue;
            }
        };
        let t = Instant::now();
        let doc = match &schema {
            Value::Bool(true) => json!({}),
            Value::Bool(false) => json!({"not": {}}),
            other => other.clone(),
        };
        let generated = std::panic::catch_unwind(AssertUnwindSafe(|| {
            // Hundreds of schemas in one crate, each run on a few instances.
            let mut set = GenOptions::new().tuning(Tuning::ManySets);
            if let Some(catalogue) = &catalogue {
                set = set.base_uri(format!("{}{file}", catalogue.base));
                for (uri, name, value) in catalogue.closure(&doc) {
                    set = set.document(uri, name, value);
                }
            }
            generate_with(&doc, &file, true, &set)
        }));
        let (tokens, refused) = match generated {
            Ok(Ok(validators)) => {
                let tokens = validators.tokens;
                let text = match syn::parse2::<syn::File>(tokens.clone()) {
                    Ok(parsed) => prettyplease::unparse(&parsed),
                    Err(_) => tokens.to_string(),
                };
                (Some(text), None)
            }
            Ok(Err(error)) => (None, Some(first_line(&error.to_string()))),
            Err(payload) => {
                let message = payload
                    .downcast_ref::<String>()
                    .cloned()
                    .or_else(|| payload.downcast_ref::<&str>().map(|s| (*s).to_owned()))
                    .unwrap_or_default();
                (None, Some(format!("the generator panicked: {}", first_line(&message))))
            }
        };
        let gen_time = t.elapsed();
        let mut entry = Entry {
            file: file.clone(),
            module: format!("s{index}"),
            schema,
            refused,
            tokens,
            oracle_failed: None,
            compile_error: None,
            cases: Vec::new(),
        };
        match oracle(&entry.schema, &file, catalogue.as_ref()) {
            Ok(validator) => {
                if entry.tokens.is_some() {
                    for instance in instances(&entry.schema, &file, options.instances) {
                        let verdict = std::panic::catch_unwind(AssertUnwindSafe(|| validator.is_valid(&instance)));
                        if let Ok(verdict) = verdict {
                            entry.cases.push((instance, verdict));
                        }
                    }
                }
            }
            Err(error) => {
                if entry.tokens.is_none() {
                    skipped_both += 1;
                }
                entry.oracle_failed = Some(error);
            }
        }
        if gen_time > Duration::from_secs(5) {
            eprintln!("agree: {file}: generation took {:.1} s", gen_time.as_secs_f64());
        }
        entries.push(entry);
        if (index + 1) % 50 == 0 {
            eprintln!(
                "agree: {} of {} schemas read ({:.0} s)",
                index + 1,
                files.len(),
                started.elapsed().as_secs_f64()
            );
        }
    }
    std::panic::set_hook(quiet_panics);
    let _ = skipped_both;

    // Compile and run, by batches.
    let generated: Vec<usize> = (0..entries.len()).filter(|&i| entries[i].tokens.is_some()).collect();
    let batch = if options.batch == 0 {
        generated.len().max(1)
    } else {
        options.batch
    };
    let mut answers: HashMap<(usize, usize), Ours> = HashMap::new();
    let mut disagreements: Vec<Disagreement> = Vec::new();
    // The cases the fused path (`parse_slice`'s stream program) decided, and those it was run on.
    let mut fused = (0usize, 0usize);
    for (number, chunk) in generated.chunks(batch).enumerate() {
        let (live, binary) = build(&mut entries, chunk, number)?;
        let mut cases: Vec<(usize, usize)> = Vec::new();
        for &e in &live {
            for c in 0..entries[e].cases.len() {
                cases.push((e, c));
            }
        }
        let list: Vec<(String, Value)> = cases
            .iter()
            .map(|&(e, c)| (entries[e].module.clone(), entries[e].cases[c].0.clone()))
            .collect();
        let (results, (decided, streams)) = run_cases(&binary, &list)?;
        fused.0 += decided;
        fused.1 += streams;
        for (key, ours) in cases.into_iter().zip(results) {
            answers.insert(key, ours);
        }
        // Shrinking of this batch's disagreements (while its binary is there).
        let mut found: Vec<Disagreement> = Vec::new();
        for &e in &live {
            for (c, (instance, theirs)) in entries[e].cases.iter().enumerate() {
                let ours = &answers[&(e, c)];
                if disagree(*theirs, ours) {
                    found.push(Disagreement {
                        entry: e,
                        instance: instance.clone(),
                        theirs: *theirs,
                        ours: ours.clone(),
                        oracle_reason: String::new(),
                        shrunk: None,
                    });
                }
            }
        }
        shrink(&binary, &entries, &mut found, catalogue.as_ref())?;
        disagreements.extend(found);
    }
    // jsonschema's reasons, for the disagreements.
    let mut validators: BTreeMap<usize, jsonschema::Validator> = BTreeMap::new();
    for d in &mut disagreements {
        if let std::collections::btree_map::Entry::Vacant(slot) = validators.entry(d.entry) {
            if let Ok(v) = oracle(&entries[d.entry].schema, &entries[d.entry].file, catalogue.as_ref()) {
                slot.insert(v);
            }
        }
        if let Some(v) = validators.get(&d.entry) {
            if !d.theirs {
                d.oracle_reason = oracle_reason(v, d.shrunk.as_ref().unwrap_or(&d.instance));
            }
        }
    }

    let mut report = summary(&entries, &unreadable, &answers, &disagreements, started.elapsed());
    let _ = writeln!(
        report,
        "\nThe fused path (`parse_slice`'s stream program, from the text and from the value) decided {} of the {} \
         cases it was run on; a decided verdict that differs from `is_valid` is listed above as INCONSISTENT.",
        fused.0, fused.1
    );
    let mut speed = None;
    if options.bench {
        let timed: Vec<bench::Schema> = entries
            .iter()
            .enumerate()
            .filter(|(e, entry)| {
                entry.oracle_failed.is_none()
                    && entry.compile_error.is_none()
                    && !entry.cases.is_empty()
                    && disagreements.iter().all(|d| d.entry != *e)
            })
            .map(|(_, entry)| bench::Schema {
                file: entry.file.clone(),
                module: entry.module.clone(),
                tokens: entry.tokens.clone().unwrap_or_default(),
                instances: entry.cases.iter().map(|(instance, _)| instance.clone()).collect(),
            })
            .collect();
        let (section, figures) = bench::run(&timed, &options.dir, options.base.as_deref())?;
        report.push_str(&section);
        speed = figures;
    }
    if options.echo {
        print!("{report}");
    }
    if let Some(path) = &options.report {
        std::fs::write(path, &report).map_err(|e| format!("{}: {e}", path.display()))?;
    }
    Ok(Outcome {
        clean: disagreements.is_empty(),
        speed,
    })
}

fn disagree(theirs: bool, ours: &Ours) -> bool {
    match ours {
        Ours::Valid => !theirs,
        Ours::Invalid(_) => theirs,
        _ => true,
    }
}

/// Smaller instances of each disagreement that still disagree: members and items removed,
/// one at a time, a few rounds (each round one run of the scratch binary).
fn shrink(
    binary: &Path,
    entries: &[Entry],
    found: &mut [Disagreement],
    catalogue: Option<&Catalogue>,
) -> Result<(), String> {
    let mut validators: BTreeMap<usize, jsonschema::Validator> = BTreeMap::new();
    for d in found.iter() {
        if let std::collections::btree_map::Entry::Vacant(slot) = validators.entry(d.entry) {
            if let Ok(v) = oracle(&entries[d.entry].schema, &entries[d.entry].file, catalogue) {
                slot.insert(v);
            }
        }
    }
    for _round in 0..8 {
        let mut list: Vec<(String, Value)> = Vec::new();
        let mut owners: Vec<(usize, Value, bool)> = Vec::new();
        for (i, d) in found.iter().enumerate() {
            if !matches!(d.ours, Ours::Valid | Ours::Invalid(_)) {
                continue;
            }
            let Some(validator) = validators.get(&d.entry) else {
                continue;
            };
            let current = d.shrunk.clone().unwrap_or_else(|| d.instance.clone());
            let mut all = Vec::new();
            paths(&current, &mut Vec::new(), &mut all);
            let mut candidates = 0;
            for path in all.iter().rev() {
                if path.is_empty() || candidates >= 40 {
                    continue;
                }
                let mut smaller = current.clone();
                let (last, parent) = path.split_last().expect("not empty");
                let Some(parent) = at_mut(&mut smaller, parent) else {
                    continue;
                };
                match (parent, last) {
                    (Value::Object(map), Value::String(k)) => {
                        map.remove(k);
                    }
                    (Value::Array(items), Value::Number(n)) => {
                        items.remove(n.as_u64().unwrap_or(0) as usize);
                    }
                    _ => continue,
                }
                let theirs =
                    std::panic::catch_unwind(AssertUnwindSafe(|| validator.is_valid(&smaller))).unwrap_or(d.theirs);
                if theirs != d.theirs {
                    continue;
                }
                list.push((entries[d.entry].module.clone(), smaller.clone()));
                owners.push((i, smaller, theirs));
                candidates += 1;
            }
        }
        if list.is_empty() {
            break;
        }
        let (results, _) = run_cases(binary, &list)?;
        let mut progressed = false;
        let mut taken: BTreeSet<usize> = BTreeSet::new();
        for ((i, smaller, theirs), ours) in owners.into_iter().zip(results) {
            if taken.contains(&i) {
                continue;
            }
            let same_side = matches!(
                (&found[i].ours, &ours),
                (Ours::Valid, Ours::Valid) | (Ours::Invalid(_), Ours::Invalid(_))
            );
            if same_side && disagree(theirs, &ours) {
                found[i].shrunk = Some(smaller);
                found[i].ours = ours;
                taken.insert(i);
                progressed = true;
            }
        }
        if !progressed {
            break;
        }
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// The scratch crate.

fn crate_dir() -> PathBuf {
    std::env::var_os("AGREE_CRATE_DIR").map_or_else(|| PathBuf::from("/tmp/agree-crate"), PathBuf::from)
}

fn target_dir() -> PathBuf {
    std::env::var_os("AGREE_TARGET_DIR").map_or_else(|| PathBuf::from("/tmp/agree-target"), PathBuf::from)
}

const MAIN_BODY: &str = r#"
fn main() {
    let args: Vec<String> = std::env::args().collect();
    let cases: Vec<(String, serde_json::Value)> =
        serde_json::from_slice(&std::fs::read(&args[1]).expect("the cases file")).expect("the cases");
    let start: usize = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(0);
    let table: std::collections::HashMap<&str, &::pilotage_types::validate::Validators> = TABLE.iter().copied().collect();
    std::panic::set_hook(Box::new(|_| {}));
    let worker = std::thread::Builder::new().stack_size(1 << 29).spawn(move || {
        use std::io::Write as _;
        let stdout = std::io::stdout();
        let mut out = stdout.lock();
        let (mut streams, mut decided) = (0usize, 0usize);
        for (i, (module, instance)) in cases.iter().enumerate().skip(start) {
            let Some(validators) = table.get(module.as_str()) else {
                let _ = writeln!(out, "{i}\tE\tno module {module}");
                continue;
            };
            let answer = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                let verdict = validators.is_valid(".", instance);
                let full = validators.validate(".", instance);
                // The fused path (`parse_slice`'s stream program), from the text and from the value.
                let fused = validators.stream(".").map(|stream| {
                    let text = serde_json::to_vec(instance).expect("a Value serializes");
                    (
                        ::pilotage_types::validate::stream::check_slice(stream, false, &text),
                        ::pilotage_types::validate::stream::check_value(stream, false, instance),
                    )
                });
                (verdict, full, fused)
            }));
            let answer = answer.map(|(verdict, full, fused)| {
                if let Some((from_text, from_value)) = fused {
                    streams += 1;
                    decided += usize::from(from_text.is_some());
                    if let Ok(verdict) = verdict {
                        for (from, answer) in [("text", from_text), ("value", from_value)] {
                            if answer.is_some_and(|a| a != verdict) {
                                return (Err(format!("is_valid {verdict} but the stream program from the {from} says {}", !verdict)), full);
                            }
                        }
                    }
                }
                (verdict.map_err(|e| e.to_string()), full)
            });
            let line = match answer {
                Ok((Err(stream), _)) if stream.starts_with("is_valid") => format!("X\t{stream}"),
                Ok((Ok(true), Ok(Ok(())))) => "V".to_owned(),
                Ok((Ok(false), Ok(Err(errors)))) => {
                    let v = &errors.violations[0];
                    format!("I\t{}", v.to_string().replace(['\n', '\t'], " "))
                }
                Ok((Ok(verdict), Ok(full))) => format!("X\tis_valid {verdict} but validate {}", if full.is_ok() { "accepts" } else { "rejects" }),
                Ok((Err(e), _)) => format!("E\t{}", e.replace(['\n', '\t'], " ")),
                Ok((_, Err(e))) => format!("E\t{}", e.to_string().replace(['\n', '\t'], " ")),
                Err(_) => "P".to_owned(),
            };
            let _ = writeln!(out, "{i}\t{line}");
            let _ = out.flush();
        }
        // Not a case line (no index first): how many cases the fused path decided.
        let _ = writeln!(out, "stream\t{decided}\t{streams}");
    }).expect("a thread");
    let _ = worker.join();
}
"#;

/// Writes a file unless it already holds `text` (so cargo rebuilds only what changed).
fn write_if_changed(path: &Path, text: &str) -> Result<(), String> {
    if std::fs::read(path).is_ok_and(|old| old == text.as_bytes()) {
        return Ok(());
    }
    std::fs::write(path, text).map_err(|e| format!("{}: {e}", path.display()))
}

/// Writes the scratch crate of one batch of entries (`/tmp/agree-crate/bN`, a binary
/// `agree-check-bN`), builds it, drops modules rustc rejects (recording the error) until it
/// builds; returns the entries of the binary, and the binary.
fn build(entries: &mut [Entry], chunk: &[usize], number: usize) -> Result<(Vec<usize>, PathBuf), String> {
    let workspace = crate::codegen::workspace_root();
    let name = format!("agree-check-b{number}");
    let krate = crate_dir().join(format!("b{number}"));
    let src = krate.join("src");
    std::fs::create_dir_all(&src).map_err(|e| e.to_string())?;
    let types = workspace.join("pilotage-types");
    // pilotage-types' `idn` feature, where it still exists (the IDN formats needed it).
    let idn =
        std::fs::read_to_string(types.join("Cargo.toml")).is_ok_and(|t| t.lines().any(|l| l.starts_with("idn = ")));
    let features = if idn { "\"validate\", \"idn\"" } else { "\"validate\"" };
    let manifest = format!(
        "[package]\nname = {name:?}\nversion = \"0.0.0\"\nedition = \"2021\"\npublish = false\n\n\
         [dependencies]\npilotage-types = {{ path = {:?}, default-features = false, features = [{features}] }}\n\
         serde_json = \"1\"\n\n[profile.dev]\ndebug = false\nopt-level = 1\n\n[workspace]\n",
        types.display().to_string()
    );
    write_if_changed(&krate.join("Cargo.toml"), &manifest)?;
    if !krate.join("Cargo.lock").exists() {
        let _ = std::fs::copy(workspace.join("Cargo.lock"), krate.join("Cargo.lock"));
    }
    let wanted: BTreeSet<String> = chunk.iter().map(|&e| format!("{}.rs", entries[e].module)).collect();
    for old in std::fs::read_dir(&src).map_err(|e| e.to_string())?.flatten() {
        let file = old.file_name().to_string_lossy().into_owned();
        if file != "main.rs" && !wanted.contains(&file) {
            let _ = std::fs::remove_file(old.path());
        }
    }
    for &e in chunk {
        let text = entries[e].tokens.as_deref().unwrap_or_default();
        write_if_changed(&src.join(format!("{}.rs", entries[e].module)), text)?;
    }
    let binary = target_dir().join("debug").join(&name);
    let mut live: Vec<usize> = chunk.to_vec();
    for round in 1..=8 {
        let mut main = String::new();
        for &e in &live {
            let _ = writeln!(
                main,
                "#[allow(unused, clippy::all, non_snake_case, non_upper_case_globals, non_camel_case_types)]\nmod {};",
                entries[e].module
            );
        }
        main.push_str("\nstatic TABLE: &[(&str, &::pilotage_types::validate::Validators)] = &[\n");
        for &e in &live {
            let _ = writeln!(
                main,
                "    ({:?}, &{}::VALIDATORS),",
                entries[e].module, entries[e].module
            );
        }
        main.push_str("];\n");
        main.push_str(MAIN_BODY);
        write_if_changed(&src.join("main.rs"), &main)?;
        eprintln!("agree: cargo build of {} module(s), round {round}", live.len());
        let t = Instant::now();
        let output = Command::new(env!("CARGO"))
            .args(["build", "--quiet", "--message-format=short"])
            .current_dir(&krate)
            .env("CARGO_TARGET_DIR", target_dir())
            .env_remove("RUSTFLAGS")
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .output()
            .map_err(|e| e.to_string())?;
        eprintln!("agree: build took {:.0} s", t.elapsed().as_secs_f64());
        if output.status.success() {
            return Ok((live, binary));
        }
        let text = String::from_utf8_lossy(&output.stderr);
        let mut failed: BTreeMap<String, String> = BTreeMap::new();
        for line in text.lines() {
            let Some(path) = line.strip_prefix("src/") else {
                continue;
            };
            let Some((file, rest)) = path.split_once(".rs:") else {
                continue;
            };
            if !rest.contains("error") || file == "main" {
                continue;
            }
            failed.entry(file.to_owned()).or_insert_with(|| truncate(line, 400));
        }
        let before = live.len();
        for &e in &live {
            if let Some(error) = failed.get(&entries[e].module) {
                entries[e].compile_error = Some(error.clone());
            }
        }
        live.retain(|&e| entries[e].compile_error.is_none());
        if live.len() == before {
            return Err(format!(
                "the scratch crate does not build, and no module is to blame:\n{}",
                text.lines().take(40).collect::<Vec<_>>().join("\n")
            ));
        }
    }
    Err("the scratch crate still does not build after 8 rounds".to_owned())
}

/// Runs the scratch binary on cases; a crash (a stack overflow, an abort) or a hang is the
/// answer of the case it happened on, and the run goes on from the next. Also returns how many
/// cases the fused path decided, of those it was run on (the runs that ended normally).
fn run_cases(binary: &Path, cases: &[(String, Value)]) -> Result<(Vec<Ours>, (usize, usize)), String> {
    let file = crate_dir().join("cases.json");
    std::fs::write(&file, serde_json::to_vec(cases).map_err(|e| e.to_string())?).map_err(|e| e.to_string())?;
    let mut answers: Vec<Option<Ours>> = vec![None; cases.len()];
    let mut fused = (0usize, 0usize);
    let mut start = 0;
    while start < cases.len() {
        let mut child = Command::new(binary)
            .arg(&file)
            .arg(start.to_string())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|e| format!("{}: {e}", binary.display()))?;
        let mut stdout = child.stdout.take().expect("piped");
        let reader = std::thread::spawn(move || {
            let mut text = String::new();
            let _ = stdout.read_to_string(&mut text);
            text
        });
        let deadline = Instant::now() + Duration::from_secs(600);
        let status = loop {
            if let Some(status) = child.try_wait().map_err(|e| e.to_string())? {
                break Some(status);
            }
            if Instant::now() > deadline {
                let _ = child.kill();
                let _ = child.wait();
                break None;
            }
            std::thread::sleep(Duration::from_millis(20));
        };
        let text = reader.join().unwrap_or_default();
        let mut last = None;
        for line in text.lines() {
            if let Some(counts) = line.strip_prefix("stream\t") {
                let mut counts = counts.split('\t').map(|n| n.parse::<usize>().unwrap_or(0));
                fused.0 += counts.next().unwrap_or(0);
                fused.1 += counts.next().unwrap_or(0);
                continue;
            }
            let mut parts = line.splitn(3, '\t');
            let (Some(i), Some(kind)) = (parts.next().and_then(|i| i.parse::<usize>().ok()), parts.next()) else {
                continue;
            };
            let rest = parts.next().unwrap_or("").to_owned();
            if i >= cases.len() {
                continue;
            }
            answers[i] = Some(match kind {
                "V" => Ours::Valid,
                "I" => Ours::Invalid(rest),
                "X" => Ours::Inconsistent(rest),
                "E" => Ours::SchemaError(rest),
                _ => Ours::Panicked,
            });
            last = Some(i);
        }
        let next = last.map_or(start, |l| l + 1);
        if status.is_some_and(|s| s.success()) && next >= cases.len() {
            break;
        }
        if next < cases.len() {
            answers[next] = Some(Ours::Crashed);
        }
        start = next + 1;
    }
    Ok((answers.into_iter().map(|a| a.unwrap_or(Ours::Crashed)).collect(), fused))
}

// ---------------------------------------------------------------------------------------------
// The report.

/// The schema location of a violation text (`... (schema POINTER)`).
fn violation_pointer(text: &str) -> Option<&str> {
    let start = text.rfind("(schema ")? + "(schema ".len();
    text[start..].strip_suffix(')')
}

/// Whether a disagreement is on an `idn-*` format (expected: jsonschema has no `idna` here).
fn on_idn_format(entry: &Entry, ours: &Ours) -> bool {
    let Ours::Invalid(text) = ours else { return false };
    let Some(pointer) = violation_pointer(text) else {
        return false;
    };
    pointer.ends_with("/format") && keyword_at(&entry.schema, pointer).is_some_and(|v| v.starts_with("\"idn-"))
}

fn show(value: &Value) -> String {
    truncate(&value.to_string(), 300)
}

fn summary(
    entries: &[Entry],
    unreadable: &[(String, String)],
    answers: &HashMap<(usize, usize), Ours>,
    disagreements: &[Disagreement],
    took: Duration,
) -> String {
    let mut out = String::new();
    let tried = entries.len() + unreadable.len();
    let refused = entries.iter().filter(|e| e.refused.is_some()).count();
    let oracle_failed = entries.iter().filter(|e| e.oracle_failed.is_some()).count();
    let both_failed = entries
        .iter()
        .filter(|e| e.oracle_failed.is_some() && e.refused.is_some())
        .count();
    let generated = entries.iter().filter(|e| e.tokens.is_some()).count();
    let compile_failed = entries.iter().filter(|e| e.compile_error.is_some()).count();
    let compared_schemas = entries
        .iter()
        .enumerate()
        .filter(|(i, e)| !e.cases.is_empty() && answers.contains_key(&(*i, 0)))
        .count();
    let mut valid = 0;
    let mut invalid = 0;
    for &(e, c) in answers.keys() {
        if entries[e].cases[c].1 {
            valid += 1;
        } else {
            invalid += 1;
        }
    }
    let idn: Vec<&Disagreement> = disagreements
        .iter()
        .filter(|d| on_idn_format(&entries[d.entry], &d.ours))
        .collect();
    let real: Vec<&Disagreement> = disagreements
        .iter()
        .filter(|d| !on_idn_format(&entries[d.entry], &d.ours))
        .collect();
    let _ = writeln!(
        out,
        "# cargo xtask agree: generated validators vs jsonschema 0.61 ({:.0} s)\n",
        took.as_secs_f64()
    );
    let _ = writeln!(out, "schemas tried:                      {tried}");
    let _ = writeln!(out, "  unreadable JSON:                  {}", unreadable.len());
    let _ = writeln!(out, "  refused by our generator:         {refused}");
    let _ = writeln!(
        out,
        "  jsonschema failed to build:       {oracle_failed} ({both_failed} of them refused by ours too)"
    );
    let _ = writeln!(out, "  generated:                        {generated}");
    let _ = writeln!(out, "  generated code rustc rejects:     {compile_failed}");
    let _ = writeln!(
        out,
        "  compiled:                         {}",
        generated - compile_failed
    );
    let _ = writeln!(out, "  compared (built by both, cases):  {compared_schemas}");
    let _ = writeln!(out, "instances compared:                 {}", answers.len());
    let _ = writeln!(out, "  valid by jsonschema:              {valid}");
    let _ = writeln!(out, "  invalid by jsonschema:            {invalid}");
    let _ = writeln!(out, "disagreements:                      {}", disagreements.len());
    let _ = writeln!(out, "  on an idn-* format (expected):    {}", idn.len());
    let _ = writeln!(out, "  others:                           {}", real.len());
    let _ = writeln!(
        out,
        "  in schemas:                       {}",
        real.iter().map(|d| d.entry).collect::<BTreeSet<_>>().len()
    );

    let mut reasons: BTreeMap<String, Vec<&str>> = BTreeMap::new();
    for e in entries {
        if let Some(r) = &e.refused {
            reasons.entry(reason_key(r)).or_default().push(&e.file);
        }
    }
    let _ = writeln!(out, "\n## Refused by our generator, by reason\n");
    let mut reasons: Vec<_> = reasons.into_iter().collect();
    reasons.sort_by(|a, b| b.1.len().cmp(&a.1.len()).then(a.0.cmp(&b.0)));
    for (reason, files) in &reasons {
        let _ = writeln!(
            out,
            "- {} × {reason}  ({}{})",
            files.len(),
            files.iter().take(4).copied().collect::<Vec<_>>().join(", "),
            if files.len() > 4 { ", …" } else { "" }
        );
    }
    let _ = writeln!(out, "\n### Every refusal\n");
    for e in entries.iter().filter(|e| e.refused.is_some()) {
        let _ = writeln!(out, "- {}: {}", e.file, e.refused.as_deref().unwrap_or(""));
    }
    let _ = writeln!(out, "\n## jsonschema failed to build\n");
    for e in entries.iter().filter(|e| e.oracle_failed.is_some()) {
        let _ = writeln!(
            out,
            "- {}{}: {}",
            e.file,
            if e.refused.is_some() {
                " (refused by ours too)"
            } else {
                ""
            },
            e.oracle_failed.as_deref().unwrap_or("")
        );
    }
    let _ = writeln!(out, "\n## Generated code rustc rejects\n");
    for e in entries.iter().filter(|e| e.compile_error.is_some()) {
        let _ = writeln!(
            out,
            "- {} ({}): {}",
            e.file,
            e.module,
            e.compile_error.as_deref().unwrap_or("")
        );
    }
    for (title, list) in [
        ("Disagreements", &real),
        ("Disagreements on an idn-* format (expected)", &idn),
    ] {
        let _ = writeln!(out, "\n## {title}\n");
        for d in list.iter() {
            let entry = &entries[d.entry];
            let _ = writeln!(out, "- {} ({})", entry.file, entry.module);
            let _ = writeln!(out, "  instance: {}", show(&d.instance));
            if let Some(s) = &d.shrunk {
                let _ = writeln!(out, "  shrunk:   {}", show(s));
            }
            let ours = match &d.ours {
                Ours::Valid => "valid".to_owned(),
                Ours::Invalid(v) => format!("invalid: {v}"),
                Ours::Inconsistent(v) => format!("INCONSISTENT: {v}"),
                Ours::SchemaError(v) => format!("schema error: {v}"),
                Ours::Panicked => "PANICKED".to_owned(),
                Ours::Crashed => "CRASHED (or hung)".to_owned(),
            };
            let _ = writeln!(out, "  ours: {ours}");
            if let Some(pointer) = match &d.ours {
                Ours::Invalid(v) => violation_pointer(v),
                _ => None,
            } {
                if let Some(k) = keyword_at(&entry.schema, pointer) {
                    let _ = writeln!(out, "    keyword: {k}");
                }
            }
            let _ = writeln!(
                out,
                "  jsonschema: {}",
                if d.theirs {
                    "valid".to_owned()
                } else {
                    format!("invalid: {}", d.oracle_reason)
                }
            );
            if !d.theirs {
                if let Some(pointer) = violation_pointer(&d.oracle_reason) {
                    if let Some(k) = keyword_at(&entry.schema, pointer) {
                        let _ = writeln!(out, "    keyword: {k}");
                    }
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_catalogue_names_its_files_and_follows_their_references() {
        let dir = std::env::temp_dir().join(format!("agree-catalogue-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("partial.json"), r#"{"$ref": "base.json#/definitions/x"}"#).unwrap();
        std::fs::write(dir.join("base.json"), r#"{"definitions": {"x": {"type": "string"}}}"#).unwrap();
        let catalogue = Catalogue {
            base: "https://json.schemastore.org/".to_owned(),
            dir: dir.clone(),
        };
        assert_eq!(
            catalogue.name_of("https://json.schemastore.org/base.json#/a"),
            Some("base.json")
        );
        assert_eq!(catalogue.name_of("./partial.json"), Some("partial.json"));
        assert_eq!(catalogue.name_of("https://example.com/x.json"), None);
        assert_eq!(catalogue.name_of("#/definitions/x"), None);
        assert!(catalogue.load("base").is_some(), "a name without .json");
        std::fs::write(dir.join("member.json"), r#"{"type": "integer"}"#).unwrap();
        std::fs::write(dir.join("value.json"), r#"{"type": "integer"}"#).unwrap();
        let closure = catalogue.closure(&json!({"properties": {
            "p": {"$ref": "https://json.schemastore.org/partial.json"},
            "default": {"$ref": "member.json"},
            "e": {"enum": [{"$ref": "value.json"}]}}}));
        let mut names: Vec<&str> = closure.iter().map(|(_, name, _)| name.as_str()).collect();
        names.sort_unstable();
        // A member named `default` is a schema; an `enum` value is not.
        assert_eq!(names, ["base.json", "member.json", "partial.json"]);
        assert!(closure
            .iter()
            .any(|(uri, name, _)| name == "base.json" && uri == "https://json.schemastore.org/base.json"));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn instances_are_deterministic_and_follow_the_schema() {
        let schema = json!({
            "type": "object",
            "required": ["name"],
            "properties": {
                "name": {"type": "string", "examples": ["x"]},
                "size": {"$ref": "#/definitions/size"}
            },
            "definitions": {"size": {"type": "integer", "minimum": 1, "maximum": 9}}
        });
        let a = instances(&schema, "a.json", 20);
        assert_eq!(a, instances(&schema, "a.json", 20));
        assert!(a.len() > 10);
        assert!(a.iter().any(|v| v.get("name").is_some_and(Value::is_string)));
    }
}
