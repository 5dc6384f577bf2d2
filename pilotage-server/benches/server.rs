//! The per-call in-process cost of the framework's Pilotage surface (`cargo xtask bench`
//! reads these groups): each toolkit figure is `Engine::call` (argument routing, the stage,
//! the envelope, the structuredContent), each baseline the least a hand-written engine does
//! for the same answer (its stage function and serializing the response).

use std::hint::black_box;
use std::sync::Arc;

use criterion::{criterion_group, criterion_main, Criterion};
use pilotage_server::prelude::*;
use pilotage_types::{CatalogListResult, GuideFetchResult, ValidateResponse};
use serde_json::{json, Value};

/// A Language whose guides and catalog are loaded once, as an engine keeps them.
struct Bench {
    guides: Arc<[GuideText]>,
    catalog: Arc<Catalog>,
}

impl Bench {
    fn new() -> Self {
        let guide = Guide::new(
            "intro",
            "Intro",
            GuideLevel::Core,
            ["a".to_owned()],
            LanguageIdentifier("bench/v1".to_owned()),
            "1",
            0u64,
        );
        let entries = (0..200).map(|i| {
            CatalogEntry::new(
                format!("e{i}"),
                "fn",
                format!("Entry {i}"),
                "safe",
                RiskHints::new().with_read_only(true),
            )
        });
        Self {
            guides: vec![GuideText::new(guide, "# Intro\n\n## a\nText.\n".repeat(20))].into(),
            catalog: Arc::new(Catalog::new("v1", entries)),
        }
    }
}

#[derive(serde::Deserialize)]
struct Program {
    steps: Vec<String>,
}

impl Bench {
    fn check(program: &Program) -> Validated {
        let unknown = program.steps.iter().enumerate().filter(|(_, s)| s.starts_with('x'));
        Validated::with_diagnostics(
            unknown.map(|(i, _)| Diagnostic::error("unknown", format!("/steps/{i}"), "no such step")),
        )
    }
}

impl Language for Bench {
    type Program = Program;

    fn declaration(&self) -> Declaration {
        Declaration::new("bench/v1", "Bench").with_search()
    }

    fn guides(&self) -> Arc<[GuideText]> {
        self.guides.clone()
    }

    fn catalog(&self) -> Option<Arc<Catalog>> {
        Some(self.catalog.clone())
    }

    async fn validate(&self, program: &Program, _: Option<&Value>, _: &StageContext) -> Validated {
        Self::check(program)
    }

    async fn execute(&self, run: ExecuteInput<Program>, _: &StageContext) -> Result<Ran, RequestError> {
        let steps = run
            .program
            .steps
            .iter()
            .map(|s| TraceStep::new(s.clone(), Outcome::success("success")));
        Ok(Ran::success(run.program.steps.len(), steps))
    }
}

fn benches(c: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let engine = Engine::builder("bench", "1").language(Bench::new()).build().unwrap();
    let call = |name: &str, arguments: &Value| {
        runtime
            .block_on(engine.call(name, arguments, "bench"))
            .unwrap()
            .unwrap()
            .structured_content
    };
    let program = json!({"steps": ["a", "b", "c", "d"]});

    let mut group = c.benchmark_group("server/manifest");
    group.bench_function("toolkit", |b| {
        b.iter(|| call("pilotage_manifest", black_box(&json!({}))))
    });
    let manifest = engine.manifest().clone();
    group.bench_function("baseline", |b| {
        b.iter(|| serde_json::to_value(black_box(&manifest)).unwrap())
    });
    group.finish();

    let mut group = c.benchmark_group("server/guide_fetch");
    let fetch = json!({"language": "bench/v1", "id": "intro"});
    group.bench_function("toolkit", |b| b.iter(|| call("pilotage_get_guide", black_box(&fetch))));
    let text = Bench::new().guides()[0].clone();
    let mut guide = text.guide.clone();
    guide.body = Some(text.body.clone());
    let fetched = GuideFetchResult::new(guide);
    group.bench_function("baseline", |b| {
        b.iter(|| serde_json::to_value(black_box(&fetched)).unwrap())
    });
    group.finish();

    let mut group = c.benchmark_group("server/catalog_page");
    let list = json!({"language": "bench/v1", "verb": "list", "q": "entry", "limit": 50});
    group.bench_function("toolkit", |b| b.iter(|| call("pilotage_catalog", black_box(&list))));
    let catalog = Bench::new().catalog().unwrap();
    group.bench_function("baseline", |b| {
        b.iter(|| {
            let page = CatalogListResult::new(
                catalog
                    .entries
                    .iter()
                    .filter(|e| e.name.to_lowercase().contains("entry"))
                    .take(50)
                    .cloned(),
                catalog.version.clone(),
            );
            serde_json::to_value(black_box(&page)).unwrap()
        })
    });
    group.finish();

    let mut group = c.benchmark_group("server/validate_dispatch");
    let arguments = json!({"program": program});
    group.bench_function("toolkit", |b| {
        b.iter(|| call("bench_v1_validate", black_box(&arguments)))
    });
    group.bench_function("baseline", |b| {
        b.iter(|| {
            let parsed: Program = serde_json::from_value(black_box(&arguments)["program"].clone()).unwrap();
            let checked = Bench::check(&parsed);
            serde_json::to_value(ValidateResponse::new(checked.is_valid(), checked.diagnostics)).unwrap()
        })
    });
    group.finish();

    let mut group = c.benchmark_group("server/execute_dispatch");
    let arguments = json!({"program": program, "store": false, "trace_level": "none"});
    group.bench_function("toolkit", |b| {
        b.iter(|| call("bench_v1_execute", black_box(&arguments)))
    });
    group.bench_function("baseline", |b| {
        b.iter(|| {
            let parsed: Program = serde_json::from_value(black_box(&arguments)["program"].clone()).unwrap();
            let _ = Bench::check(&parsed);
            let response =
                pilotage_types::ExecuteResponse::new(pilotage_server::new_run_id(), Outcome::success("success"))
                    .with_output(parsed.steps.len());
            serde_json::to_value(response).unwrap()
        })
    });
    group.finish();
}

criterion_group!(server, benches);
criterion_main!(server);
