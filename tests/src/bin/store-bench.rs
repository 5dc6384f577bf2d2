//! `cargo run --release -p pilotage-tests --bin store-bench [N]`: the cost of keeping runs in a
//! database, as ratios in one run. An engine of a small Language is built on each store
//! (memory, SQLite in a temporary file, Postgres at `PILOTAGE_POSTGRES_URL` when set), and
//! driven in-process: N executes with `store: true`, then N trace fetches of those runs.
//! Prints p50 and p99 of each, and each store's ratio to the memory store's.
//!
//! `... --bin store-bench -- --execute-prefill 0,9000 [--executes N]`: the stored execute through
//! the engine on a fresh store of each kind, empty and after other identities' runs.
//!
//! `... --bin store-bench -- --writers 1,32 --prefill 0,9000 [--seconds 3]`: the stores under
//! concurrent writers instead. For each store, each number of writers and each prefill: a
//! fresh store (default limits) gets that many runs first (spread over identities of 900
//! runs each), then the writers, each its own identity, put runs (the shape the engine's
//! executes store) for the given seconds. Prints the runs stored per second, all writers
//! together, and the p50 and p99 of one put.

use std::sync::Arc;
use std::time::{Duration, Instant};

use pilotage_server::prelude::*;
use pilotage_server::{new_run_id, Expiry, PostgresStore, RunRecord};
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

/// A run as the engine's `Echo` executes store it: five steps echoing a small program.
fn echo_record() -> RunRecord {
    let program = json!({"steps": [1, 2, 3], "name": "a program of a few members"});
    let steps = (0..5)
        .map(|i| {
            TraceStep::new(format!("s{i}"), Outcome::success("success"))
                .with_input(json!({"i": i}))
                .with_output(json!({"echo": program.clone()}))
        })
        .collect();
    RunRecord::new(
        "echo/v1",
        Outcome::success("success"),
        Some(program),
        steps,
        TraceLevel::Full,
    )
}

fn later() -> Expiry {
    Expiry::At(std::time::SystemTime::now() + Duration::from_secs(3600))
}

/// Puts `count` runs into `store`, 900 per identity, on eight tasks at once.
async fn prefill(store: &Arc<dyn RunStore>, count: usize) {
    let tasks: Vec<_> = (0..8)
        .map(|task| {
            let store = store.clone();
            tokio::spawn(async move {
                for i in (task..count).step_by(8) {
                    let identity = format!("prefill_{}", i / 900);
                    store
                        .put(&identity, &format!("run_{i}"), echo_record(), later())
                        .await
                        .unwrap();
                }
            })
        })
        .collect();
    for task in tasks {
        task.await.unwrap();
    }
}

/// (runs stored per second, put p50, put p99) of `writers` writers, each its own identity,
/// putting runs into `store` for `seconds`.
async fn write_for(store: &Arc<dyn RunStore>, writers: usize, seconds: f64) -> (f64, Duration, Duration) {
    let until = Instant::now() + Duration::from_secs_f64(seconds);
    let started = Instant::now();
    let tasks: Vec<_> = (0..writers)
        .map(|writer| {
            let store = store.clone();
            tokio::spawn(async move {
                let identity = format!("writer_{writer}");
                let mut latencies = Vec::new();
                while Instant::now() < until {
                    let id = new_run_id();
                    let put = Instant::now();
                    store.put(&identity, &id, echo_record(), later()).await.unwrap();
                    latencies.push(put.elapsed());
                }
                latencies
            })
        })
        .collect();
    let mut latencies = Vec::new();
    for task in tasks {
        latencies.extend(task.await.unwrap());
    }
    let elapsed = started.elapsed().as_secs_f64();
    latencies.sort();
    (
        latencies.len() as f64 / elapsed,
        percentile(&latencies, 0.5),
        percentile(&latencies, 0.99),
    )
}

/// The list of numbers after `flag` (`--writers 1,32`), if given.
fn numbers(args: &[String], flag: &str) -> Option<Vec<usize>> {
    let at = args.iter().position(|a| a == flag)?;
    let list = args
        .get(at + 1)
        .unwrap_or_else(|| panic!("{flag} takes a number, or numbers with commas"));
    Some(
        list.split(',')
            .map(|n| n.parse().unwrap_or_else(|_| panic!("{flag} {list}: not a number")))
            .collect(),
    )
}

async fn writers_mode(writers: Vec<usize>, prefills: Vec<usize>, seconds: f64) {
    let limits = StoreLimits::default();
    let dir = std::env::temp_dir().join(format!("pilotage-store-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let url = std::env::var("PILOTAGE_POSTGRES_URL").ok();
    if url.is_none() {
        println!("(Postgres skipped: PILOTAGE_POSTGRES_URL is not set)");
    }
    println!("writers each their own identity, putting runs for {seconds} s into a fresh store (default limits)");
    println!(
        "{:<10} {:>8} {:>8} {:>10} {:>12} {:>12} {:>12}",
        "store", "writers", "prefill", "puts", "runs/s", "put p50", "put p99"
    );
    let mut fresh = 0;
    for name in ["memory", "sqlite", "postgres"] {
        for &prefilled in &prefills {
            for &count in &writers {
                fresh += 1;
                let store: Arc<dyn RunStore> = match name {
                    "memory" => open_store("memory", limits).await.unwrap(),
                    "sqlite" => open_store(
                        &format!("sqlite:{}", dir.join(format!("runs-{fresh}.db")).display()),
                        limits,
                    )
                    .await
                    .unwrap(),
                    _ => {
                        let Some(url) = &url else { continue };
                        let schema = format!("pilotage_bench_{}_{fresh}", std::process::id());
                        Arc::new(PostgresStore::connect_in(url, &schema, limits).await.unwrap())
                    }
                };
                prefill(&store, prefilled).await;
                let (rate, p50, p99) = write_for(&store, count, seconds).await;
                println!(
                    "{name:<10} {count:>8} {prefilled:>8} {:>10} {rate:>12.0} {p50:>12?} {p99:>12?}",
                    (rate * seconds).round()
                );
            }
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if let Some(prefills) = numbers(&args, "--execute-prefill") {
        let n = numbers(&args, "--executes").map_or(1000, |n| n[0]);
        tokio::runtime::Builder::new_multi_thread()
            .enable_all()
            .build()
            .unwrap()
            .block_on(execute_prefill_mode(prefills, n));
        return;
    }
    let writers = numbers(&args, "--writers");
    let prefills = numbers(&args, "--prefill");
    if writers.is_some() || prefills.is_some() {
        let seconds = numbers(&args, "--seconds").map_or(3.0, |s| s[0] as f64);
        tokio::runtime::Builder::new_multi_thread()
            .enable_all()
            .build()
            .unwrap()
            .block_on(writers_mode(
                writers.unwrap_or_else(|| vec![1]),
                prefills.unwrap_or_else(|| vec![0]),
                seconds,
            ));
        return;
    }
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
        .block_on(engine_mode(&args));
}

/// `--execute-prefill 0,9000 [N]`: for each store and each prefill, a fresh store gets that
/// many runs of other identities first, then N (default 1,000, one identity's share) stored
/// executes and trace fetches through the engine: the stored execute's p50 and p99 as the
/// store fills, and their ratio to the empty store's.
async fn execute_prefill_mode(prefills: Vec<usize>, n: usize) {
    let limits = StoreLimits::default();
    let dir = std::env::temp_dir().join(format!("pilotage-store-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let url = std::env::var("PILOTAGE_POSTGRES_URL").ok();
    println!("{n} stored executes through the engine after a prefill of other identities' runs");
    println!(
        "{:<10} {:>8} {:>12} {:>12}   ratios to the empty store (p50 / p99)",
        "store", "prefill", "exec p50", "exec p99"
    );
    let mut fresh = 0;
    for name in ["memory", "sqlite", "postgres"] {
        let mut empty: Option<[Duration; 4]> = None;
        for &prefilled in &prefills {
            fresh += 1;
            let store: Arc<dyn RunStore> = match name {
                "memory" => open_store("memory", limits).await.unwrap(),
                "sqlite" => open_store(
                    &format!("sqlite:{}", dir.join(format!("exec-{fresh}.db")).display()),
                    limits,
                )
                .await
                .unwrap(),
                _ => {
                    let Some(url) = &url else { continue };
                    let schema = format!("pilotage_exec_{}_{fresh}", std::process::id());
                    Arc::new(PostgresStore::connect_in(url, &schema, limits).await.unwrap())
                }
            };
            prefill(&store, prefilled).await;
            let figures = measure(store, n).await;
            let base = *empty.get_or_insert(figures);
            println!(
                "{name:<10} {prefilled:>8} {:>12?} {:>12?}   {:.2} / {:.2}",
                figures[0],
                figures[1],
                figures[0].as_secs_f64() / base[0].as_secs_f64(),
                figures[1].as_secs_f64() / base[1].as_secs_f64()
            );
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}

async fn engine_mode(args: &[String]) {
    let n: usize = args.get(1).and_then(|a| a.parse().ok()).unwrap_or(2000);
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
