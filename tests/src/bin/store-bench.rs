//! `cargo run --release -p pilotage-tests --bin store-bench [N]`: the cost of keeping runs in a
//! database, as ratios in one run. An engine of a small Language is built on each store
//! (memory, SQLite in a temporary file, Postgres at `PILOTAGE_POSTGRES_URL` when set), and
//! driven in-process: N executes with `store: true`, then N trace fetches of those runs.
//! Prints p50 and p99 of each, and each store's ratio to the memory store's.

use std::sync::Arc;
use std::time::{Duration, Instant};

use pilotage_server::prelude::*;
use pilotage_server::{open_store, PostgresStore, RunStore};
use serde_json::{json, Value};

struct Echo;

impl Language for Echo {
    type Program = Value;

    fn declaration(&self) -> Declaration {
        Declaration::new("echo/v1", "Echo")
    }

    async fn validate(&self, _program: &Value, _context: Option<&Value>, _cx: &StageContext) -> Validated {
        Validated::valid()
    }

    async fn execute(&self, run: ExecuteInput<Value>, _cx: &StageContext) -> Result<Ran, RequestError> {
        let steps = (0..5).map(|i| {
            TraceStep::new(format!("s{i}"), Outcome::success("success"))
                .with_input(json!({"i": i}))
                .with_output(json!({"echo": run.program.clone()}))
        });
        Ok(Ran::success(run.program.clone(), steps))
    }
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    sorted[((sorted.len() as f64 - 1.0) * p).round() as usize]
}

/// (execute p50, p99, fetch p50, p99) over `n` runs.
async fn measure(store: Arc<dyn RunStore>, n: usize) -> [Duration; 4] {
    let engine = Engine::builder("bench", "1")
        .language(Echo)
        .run_store(store)
        .build()
        .unwrap();
    let program = json!({"steps": [1, 2, 3], "name": "a program of a few members"});
    let mut ids = Vec::with_capacity(n);
    let mut execute = Vec::with_capacity(n);
    for _ in 0..n {
        let started = Instant::now();
        let result = engine
            .call("echo_v1_execute", &json!({"program": program, "store": true}), "bench")
            .await
            .unwrap()
            .unwrap();
        execute.push(started.elapsed());
        ids.push(
            result.structured_content.unwrap()["run_id"]
                .as_str()
                .unwrap()
                .to_owned(),
        );
    }
    let mut fetch = Vec::with_capacity(n);
    for id in &ids {
        let started = Instant::now();
        let result = engine
            .call("echo_v1_trace", &json!({"run_id": id}), "bench")
            .await
            .unwrap()
            .unwrap();
        fetch.push(started.elapsed());
        assert_eq!(result.is_error, Some(false), "every stored run is fetched");
    }
    execute.sort();
    fetch.sort();
    [
        percentile(&execute, 0.5),
        percentile(&execute, 0.99),
        percentile(&fetch, 0.5),
        percentile(&fetch, 0.99),
    ]
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let n: usize = std::env::args().nth(1).and_then(|a| a.parse().ok()).unwrap_or(2000);
    let limits = StoreLimits::default();
    let dir = std::env::temp_dir().join(format!("pilotage-store-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut stores: Vec<(&str, Arc<dyn RunStore>)> = vec![
        ("memory", open_store("memory", limits).await.unwrap()),
        (
            "sqlite",
            open_store(&format!("sqlite:{}", dir.join("runs.db").display()), limits)
                .await
                .unwrap(),
        ),
    ];
    match std::env::var("PILOTAGE_POSTGRES_URL") {
        Ok(url) => {
            let schema = format!("pilotage_bench_{}", std::process::id());
            let store = PostgresStore::connect_in(&url, &schema, limits).await.unwrap();
            stores.push(("postgres", Arc::new(store)));
        }
        Err(_) => println!("(Postgres skipped: PILOTAGE_POSTGRES_URL is not set)"),
    }
    println!("{n} executes with store: true, then {n} trace fetches, per store (in-process, one identity)");
    println!(
        "{:<10} {:>12} {:>12} {:>12} {:>12}   ratios to memory (execute p50/p99, fetch p50/p99)",
        "store", "exec p50", "exec p99", "fetch p50", "fetch p99"
    );
    let mut memory = None;
    for (name, store) in stores {
        let figures = measure(store, n).await;
        let base = *memory.get_or_insert(figures);
        let ratios: Vec<String> = figures
            .iter()
            .zip(base)
            .map(|(f, b)| format!("{:.2}", f.as_secs_f64() / b.as_secs_f64()))
            .collect();
        println!(
            "{name:<10} {:>12?} {:>12?} {:>12?} {:>12?}   {}",
            figures[0],
            figures[1],
            figures[2],
            figures[3],
            ratios.join(" / ")
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}
