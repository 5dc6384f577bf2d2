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

/// A group as the generated validators run it: the group's check and its instances.
#[derive(Clone, Copy)]
struct Ours<'a> {
    check: pilotage_types::validate::runtime::Check,
    tests: &'a [Value],
}

/// A group as jsonschema runs it: its validator (built before timing) and the same instances.
#[derive(Clone, Copy)]
struct Theirs<'a> {
    validator: &'a jsonschema::Validator,
    tests: &'a [Value],
}

/// The groups a benchmark times, one table a side, row for row the same groups and the very
/// same instances (each side reads the same `Value`s at the same addresses). Each side reads a
/// table of its own, as a program holding only one kind of validator would: until the
/// twenty-sixth session of #33 both read one table of `(Check, jsonschema::Validator,
/// Vec<Value>)`, whose rows (the size of jsonschema's `Validator` apart) cost the generated
/// validators' pass a cache line a group for two words, a miss beyond L2 for half the groups
/// in callgrind's simulation (BENCHMARKS.md, #33).
struct Tables<'a> {
    ours: Vec<Ours<'a>>,
    theirs: Vec<Theirs<'a>>,
}

/// `PILOTAGE_SUITE_PROFILE=1`: each group's time, both ways, the 20 slowest of ours first (to
/// find what dominates the aggregate). Any other value keeps only the groups whose name
/// (`draft/file#index`) contains it, each printed with its ratio and the filtered sums
/// (`PILOTAGE_SUITE_PROFILE=format/uri` for the URI family).
fn profile(tables: &Tables, names: &[String], only: Option<&str>) {
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
    let mut rows: Vec<(f64, f64, &str)> = tables
        .ours
        .iter()
        .zip(&tables.theirs)
        .zip(names)
        .map(|((ours, theirs), name)| {
            let ours = time(&|| {
                ours.tests
                    .iter()
                    .filter(|t| pilotage_types::validate::verdict(ours.check, t, false))
                    .count()
            });
            let base = time(&|| theirs.tests.iter().filter(|t| theirs.validator.is_valid(t)).count());
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

/// One pass of the generated validators over `groups` (a function of its own, for callgrind:
/// `PILOTAGE_SUITE_PASSES`).
#[inline(never)]
fn pass_ours(groups: &[Ours]) -> usize {
    over_instances(
        groups,
        |group| group.tests,
        |group, test| usize::from(pilotage_types::validate::verdict(group.check, test, false)),
    )
}

/// One pass of jsonschema's validators over `groups`.
#[inline(never)]
fn pass_theirs(groups: &[Theirs]) -> usize {
    over_instances(
        groups,
        |group| group.tests,
        |group, test| usize::from(group.validator.is_valid(test)),
    )
}

/// The sum of `count` over every instance of `groups` (`tests` of each), each instance behind
/// `black_box`: the loop of every pass below, inlined into each so that callgrind still names
/// the pass.
#[inline(always)]
fn over_instances<'a, G>(
    groups: &[G],
    tests: impl Fn(&G) -> &'a [Value],
    count: impl Fn(&G, &Value) -> usize,
) -> usize {
    let mut sum = 0usize;
    for group in groups {
        for test in tests(group) {
            sum += count(group, black_box(test));
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
fn pass_walk(groups: &[Ours]) -> usize {
    over_instances(groups, |group| group.tests, |_, test| walk(test))
}

/// One pass over `cases` that reads only each instance's kind (the least any validator reads).
#[inline(never)]
fn pass_touch(groups: &[Ours]) -> usize {
    over_instances(groups, |group| group.tests, |_, test| usize::from(test.is_object()))
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
fn passes(n: usize, tables: &Tables) {
    if std::env::var_os("PILOTAGE_SUITE_PAIRED").is_some() {
        return paired(n, tables);
    }
    let runs: [(&str, &dyn Fn() -> usize); 4] = [
        ("ours", &|| pass_ours(&tables.ours)),
        ("jsonschema", &|| pass_theirs(&tables.theirs)),
        ("walk (no validator)", &|| pass_walk(&tables.ours)),
        ("touch (no validator)", &|| pass_touch(&tables.ours)),
    ];
    for (name, pass) in runs {
        let start = std::time::Instant::now();
        for _ in 0..n {
            black_box(pass());
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
fn paired(n: usize, tables: &Tables) {
    if n == 0 {
        return;
    }
    let time = |pass: &dyn Fn() -> usize| {
        black_box(pass());
        let start = std::time::Instant::now();
        black_box(pass());
        start.elapsed().as_secs_f64()
    };
    let mut rounds: Vec<(f64, f64)> = (0..n)
        .map(|_| (time(&|| pass_ours(&tables.ours)), time(&|| pass_theirs(&tables.theirs))))
        .collect();
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
    // The owners: each group's check, jsonschema's validator and instances, row for row.
    let mut checks = Vec::new();
    let mut validators = Vec::new();
    let mut instances: Vec<Vec<Value>> = Vec::new();
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
        checks.push(check);
        validators.push(theirs);
        instances.push(tests);
        names.push(format!("{}/{}#{}", group.draft, group.file, group.index));
    }
    // The tables of the groups whose name `keep` keeps.
    let tables = |keep: &dyn Fn(&str) -> bool| -> Tables {
        let rows = || (0..names.len()).filter(|&i| keep(&names[i]));
        Tables {
            ours: rows()
                .map(|i| Ours {
                    check: checks[i],
                    tests: &instances[i],
                })
                .collect(),
            theirs: rows()
                .map(|i| Theirs {
                    validator: &validators[i],
                    tests: &instances[i],
                })
                .collect(),
        }
    };
    let all = tables(&|_| true);
    if let Some(only) = std::env::var_os("PILOTAGE_SUITE_PROFILE") {
        let only = only.to_string_lossy();
        profile(&all, &names, (only != "1").then_some(&*only));
    }
    let count: usize = instances.iter().map(Vec::len).sum();
    eprintln!("suite/is_valid: {} groups, {count} instances", names.len());
    measure(c, "suite/is_valid", &all);
    measure(
        c,
        "suite/is_valid_formats",
        &tables(&|name| name.contains("/optional/format/")),
    );
    // The required tests alone: the keywords, without the optional formats and regex dialect.
    let required = tables(&is_required);
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

fn measure(c: &mut Criterion, name: &str, tables: &Tables) {
    let mut group = c.benchmark_group(name);
    group.bench_function("toolkit", |b| b.iter(|| pass_ours(&tables.ours)));
    group.bench_function("baseline", |b| b.iter(|| pass_theirs(&tables.theirs)));
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
