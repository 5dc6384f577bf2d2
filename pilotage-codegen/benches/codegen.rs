//! The generation function against parsing the schema alone (its floor), in one run.

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, Criterion};
use pilotage_codegen::{generate_types, TypesSettings};

fn codegen(c: &mut Criterion) {
    // Read at run time, not embedded: the packaged crate carries no copy of the schema.
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../schemas/pilotage.schema.json");
    let schema = std::fs::read(path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let schema = schema.as_slice();
    let settings = TypesSettings::new("schemas/pilotage.schema.json");
    let mut group = c.benchmark_group("codegen/pilotage_schema");
    group.sample_size(20);
    group.bench_function("toolkit", |b| {
        b.iter(|| generate_types(black_box(schema), &settings).unwrap().code.len())
    });
    group.bench_function("baseline", |b| {
        b.iter(|| {
            serde_json::from_slice::<serde_json::Value>(black_box(schema))
                .unwrap()
                .is_object()
        })
    });
    group.finish();
}

criterion_group!(benches, codegen);
criterion_main!(benches);
