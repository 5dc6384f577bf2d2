//! The generation function against parsing the schema alone (its floor), in one run.

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, Criterion};
use pilotage_codegen::{generate_types, TypesSettings};

const SCHEMA: &[u8] = include_bytes!("../../schemas/pilotage.schema.json");

fn codegen(c: &mut Criterion) {
    let settings = TypesSettings {
        source_name: "schemas/pilotage.schema.json".into(),
        ..TypesSettings::default()
    };
    let mut group = c.benchmark_group("codegen/pilotage_schema");
    group.sample_size(20);
    group.bench_function("toolkit", |b| {
        b.iter(|| generate_types(black_box(SCHEMA), &settings).unwrap().code.len())
    });
    group.bench_function("baseline", |b| {
        b.iter(|| {
            serde_json::from_slice::<serde_json::Value>(black_box(SCHEMA))
                .unwrap()
                .is_object()
        })
    });
    group.finish();
}

criterion_group!(benches, codegen);
criterion_main!(benches);
