//! The generated validators against jsonschema on the official suite's schemas: every test of
//! every group both can build (every draft: 2020-12, 2019-09, draft-07, -06 and -04, required and optional), checked for
//! its verdict (`is_valid`), in one run: `suite/is_valid` is the aggregate over all of them.
//! jsonschema's validators are built before measuring (its compile time is not counted).
//! jsonschema has its `idna` feature here, so both sides check the IDN formats.
//! `suite/is_valid_formats` is the `optional/format/` groups alone (#33: formats no slower than
//! jsonschema's); `suite/is_valid_required` is the required tests alone (the keywords, without
//! the optional formats and regex dialect).

#[path = "../tests/common/mod.rs"]
mod common;

use std::hint::black_box;
use std::path::Path;

use criterion::{criterion_group, criterion_main, Criterion};
use pilotage_json_schema_suite::{GROUPS, SUITE};
use serde_json::Value;

type Case = (
    pilotage_types::validate::runtime::Check,
    jsonschema::Validator,
    Vec<Value>,
);

/// `PILOTAGE_SUITE_PROFILE=1`: each group's time, both ways, the 20 slowest of ours first (to
/// find what dominates the aggregate). Any other value keeps only the groups whose name
/// (`draft/file#index`) contains it, each printed with its ratio and the filtered sums
/// (`PILOTAGE_SUITE_PROFILE=format/uri` for the URI family).
fn profile(cases: &[Case], names: &[String], only: Option<&str>) {
    // The fastest of seven rounds of 100 runs: a group's few instances take well under a
    // microsecond, where one interruption would otherwise decide its rank.
    let time = |f: &dyn Fn() -> usize| {
        (0..7)
            .map(|_| {
                let start = std::time::Instant::now();
                for _ in 0..100 {
                    black_box(f());
                }
                start.elapsed().as_secs_f64() / 100.0
            })
            .fold(f64::INFINITY, f64::min)
    };
    let mut rows: Vec<(f64, f64, &str)> = cases
        .iter()
        .zip(names)
        .map(|((check, theirs, tests), name)| {
            let ours = time(&|| {
                tests
                    .iter()
                    .filter(|t| pilotage_types::validate::verdict(*check, t, false))
                    .count()
            });
            let base = time(&|| tests.iter().filter(|t| theirs.is_valid(t)).count());
            (ours, base, name.as_str())
        })
        .collect();
    if let Some(only) = only {
        let (mut ours_sum, mut base_sum) = (0.0, 0.0);
        for (ours, base, name) in rows.iter().filter(|r| r.2.contains(only)) {
            eprintln!(
                "{:>10.3} µs {:>10.3} µs {:>6.3}x  {name}",
                ours * 1e6,
                base * 1e6,
                ours / base
            );
            ours_sum += ours;
            base_sum += base;
        }
        eprintln!(
            "{only}: {:.2} µs ours, {:.2} µs jsonschema, {:.3}x",
            ours_sum * 1e6,
            base_sum * 1e6,
            ours_sum / base_sum
        );
        return;
    }
    rows.sort_by(|a, b| b.0.total_cmp(&a.0));
    for (ours, base, name) in rows.iter().take(20) {
        eprintln!("{:>10.2} µs {:>10.2} µs  {name}", ours * 1e6, base * 1e6);
    }
    // The required tests: where ours takes more than 0.3x jsonschema's (#33's goal for them), the
    // largest excess first.
    let mut required: Vec<_> = rows.iter().filter(|(_, _, name)| is_required(name)).collect();
    let (ours, base) = required.iter().fold((0.0, 0.0), |(o, b), r| (o + r.0, b + r.1));
    eprintln!(
        "required: {:.2} µs ours, {:.2} µs jsonschema, {:.3}x",
        ours * 1e6,
        base * 1e6,
        ours / base
    );
    let excess = |r: &(f64, f64, &str)| r.0 - 0.3 * r.1;
    required.sort_by(|a, b| excess(b).total_cmp(&excess(a)));
    for (ours, base, name) in required.iter().take(60) {
        eprintln!(
            "{:>10.3} µs {:>10.3} µs {:>6.2}x  {name}",
            ours * 1e6,
            base * 1e6,
            ours / base
        );
    }
}

/// One pass of the generated validators over `cases` (a function of its own, for callgrind:
/// `PILOTAGE_SUITE_PASSES`).
#[inline(never)]
fn pass_ours(cases: &[&Case]) -> usize {
    over_instances(cases, |(check, _, _), test| {
        usize::from(pilotage_types::validate::verdict(*check, test, false))
    })
}

/// One pass of jsonschema's validators over `cases`.
#[inline(never)]
fn pass_theirs(cases: &[&Case]) -> usize {
    over_instances(cases, |(_, theirs, _), test| usize::from(theirs.is_valid(test)))
}

/// The sum of `count` over every instance of `cases`, each instance behind `black_box`: the
/// loop of every pass below, inlined into each so that callgrind still names the pass.
#[inline(always)]
fn over_instances(cases: &[&Case], count: impl Fn(&Case, &Value) -> usize) -> usize {
    let mut sum = 0usize;
    for case in cases.iter().copied() {
        for test in &case.2 {
            sum += count(case, black_box(test));
        }
    }
    sum
}

/// The nodes of `value` (itself, its items and members, theirs, ...) and the bytes of its
/// strings and member names: what reading the whole instance touches.
fn walk(value: &Value) -> usize {
    match value {
        Value::Null | Value::Bool(_) | Value::Number(_) => 1,
        Value::String(s) => 1 + s.len(),
        Value::Array(items) => 1 + items.iter().map(walk).sum::<usize>(),
        Value::Object(members) => 1 + members.iter().map(|(k, v)| k.len() + walk(v)).sum::<usize>(),
    }
}

/// One pass over `cases` that reads every instance whole and checks nothing: the data a
/// validator that reads all of each instance touches, without any validator's code.
#[inline(never)]
fn pass_walk(cases: &[&Case]) -> usize {
    over_instances(cases, |_, test| walk(test))
}

/// One pass over `cases` that reads only each instance's kind (the least any validator reads).
#[inline(never)]
fn pass_touch(cases: &[&Case]) -> usize {
    over_instances(cases, |_, test| usize::from(test.is_object()))
}

/// `PILOTAGE_SUITE_PASSES=n`: `n` passes of each side over the required tests, one after the
/// other, in the functions `pass_ours` and `pass_theirs`, then each pass's mean time. Under
/// `valgrind --tool=callgrind`, their inclusive instruction counts divided by `n` are the
/// deterministic figures behind `suite/is_valid_required` (which the wall clock is not). With
/// `PILOTAGE_SUITE_PASSES_OVER=all`, the passes are over every group: the figures behind
/// `suite/is_valid`.
///
/// Two passes that validate nothing come after them, for the floor of the cold pass (#33's
/// 0.3x): `walk` reads every instance whole, `touch` only each one's kind.
fn passes(n: usize, cases: &[&Case]) {
    if std::env::var_os("PILOTAGE_SUITE_PAIRED").is_some() {
        return paired(n, cases);
    }
    for (name, pass) in [
        ("ours", pass_ours as fn(&[&Case]) -> usize),
        ("jsonschema", pass_theirs),
        ("walk (no validator)", pass_walk),
        ("touch (no validator)", pass_touch),
    ] {
        let start = std::time::Instant::now();
        for _ in 0..n {
            black_box(pass(cases));
        }
        eprintln!(
            "{name}: {:.2} µs a pass",
            start.elapsed().as_secs_f64() * 1e6 / n as f64
        );
    }
}

/// `PILOTAGE_SUITE_PAIRED=1` with `PILOTAGE_SUITE_PASSES=n`: `n` rounds of a pass of ours then
/// one of jsonschema's, each timed after an untimed pass of the same side (as criterion's
/// back-to-back iterations run it); the median of the rounds' ratios and their quartiles. On a
/// machine whose shared cache other tenants use, the time of a pass drifts by 2x over seconds;
/// two sides timed seconds apart (`passes`) inherit that drift, two passes in one round do not.
fn paired(n: usize, cases: &[&Case]) {
    if n == 0 {
        return;
    }
    let time = |pass: fn(&[&Case]) -> usize| {
        black_box(pass(cases));
        let start = std::time::Instant::now();
        black_box(pass(cases));
        start.elapsed().as_secs_f64()
    };
    let mut rounds: Vec<(f64, f64)> = (0..n).map(|_| (time(pass_ours), time(pass_theirs))).collect();
    let mut ratios: Vec<f64> = rounds.iter().map(|(ours, theirs)| ours / theirs).collect();
    ratios.sort_by(f64::total_cmp);
    rounds.sort_by(|a, b| a.0.total_cmp(&b.0));
    let quartile = |q: usize| ratios[(ratios.len() - 1) * q / 4];
    eprintln!(
        "paired: {n} rounds, ratio median {:.3} (quartiles {:.3} {:.3}); ours median {:.2} µs a pass",
        quartile(2),
        quartile(1),
        quartile(3),
        rounds[rounds.len() / 2].0 * 1e6
    );
}

fn bench(c: &mut Criterion) {
    let Some(suite) = SUITE else {
        eprintln!("SKIPPED: the official JSON-Schema-Test-Suite was not found; no suite benchmark");
        return;
    };
    let suite = Path::new(suite);
    let remotes = common::remotes(suite);
    let mut cases: Vec<Case> = Vec::new();
    let mut names: Vec<String> = Vec::new();
    let mut files: std::collections::BTreeMap<(&str, &str), Vec<Value>> = std::collections::BTreeMap::new();
    for group in GROUPS {
        let Some(check) = group.check else { continue };
        let groups = files.entry((group.draft, group.file)).or_insert_with(|| {
            serde_json::from_slice(&std::fs::read(group.path).expect("the suite is readable"))
                .expect("the suite is JSON")
        });
        let data = &groups[group.index];
        let Some(theirs) = common::jsonschema_validator(group, &data["schema"], &remotes) else {
            continue;
        };
        let tests = data["tests"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|t| t["data"].clone())
            .collect();
        cases.push((check, theirs, tests));
        names.push(format!("{}/{}#{}", group.draft, group.file, group.index));
    }
    if let Some(only) = std::env::var_os("PILOTAGE_SUITE_PROFILE") {
        let only = only.to_string_lossy();
        profile(&cases, &names, (only != "1").then_some(&*only));
    }
    let instances: usize = cases.iter().map(|(_, _, tests)| tests.len()).sum();
    eprintln!("suite/is_valid: {} groups, {instances} instances", cases.len());
    let all: Vec<&Case> = cases.iter().collect();
    measure(c, "suite/is_valid", &all);
    let pick = |keep: &dyn Fn(&str) -> bool| -> Vec<&Case> {
        cases
            .iter()
            .zip(&names)
            .filter(|(_, name)| keep(name))
            .map(|(case, _)| case)
            .collect()
    };
    measure(
        c,
        "suite/is_valid_formats",
        &pick(&|name| name.contains("/optional/format/")),
    );
    // The required tests alone: the keywords, without the optional formats and regex dialect.
    let required = pick(&is_required);
    if let Some(n) = std::env::var("PILOTAGE_SUITE_PASSES").ok().and_then(|n| n.parse().ok()) {
        if std::env::var_os("PILOTAGE_SUITE_PASSES_OVER").is_some_and(|over| over == "all") {
            passes(n, &all);
        } else {
            passes(n, &required);
        }
    }
    measure(c, "suite/is_valid_required", &required);
}

/// Whether the group `name` is one of the official suite's required tests: neither under
/// `optional/` (formats, the regex dialect, bignums) nor one of the crate's own `cases/`.
fn is_required(name: &str) -> bool {
    !name.contains("/optional/") && !name.contains("cases/")
}

fn measure(c: &mut Criterion, name: &str, cases: &[&Case]) {
    let mut group = c.benchmark_group(name);
    group.bench_function("toolkit", |b| b.iter(|| pass_ours(cases)));
    group.bench_function("baseline", |b| b.iter(|| pass_theirs(cases)));
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
