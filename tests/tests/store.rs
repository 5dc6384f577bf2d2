//! The run-store contract (`pilotage_server::store_contract`) on every implementation:
//! the memory store, SQLite (a temporary file) and Postgres (`PILOTAGE_POSTGRES_URL`, which
//! `.ci/run` sets after starting a server of its own; under `CI=true` its absence fails, and
//! elsewhere the Postgres case is skipped, loudly). Each store of the contract gets a fresh
//! file or Postgres schema.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use pilotage_server::store_contract::contract;
use pilotage_server::{MemoryStore, PostgresStore, RunStore, SqliteStore};

static COUNTER: AtomicUsize = AtomicUsize::new(0);

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
}

fn assert_kept(outcome: Result<(), Vec<String>>, store: &str) {
    if let Err(violations) = outcome {
        panic!("the {store} store breaks the contract:\n  {}", violations.join("\n  "));
    }
}

#[test]
fn the_memory_store_keeps_the_contract() {
    let outcome = runtime().block_on(contract(|limits| {
        Box::pin(async move { Ok(Arc::new(MemoryStore::new(limits)) as Arc<dyn RunStore>) })
    }));
    assert_kept(outcome, "memory");
}

#[test]
fn the_sqlite_store_keeps_the_contract() {
    let dir = std::env::temp_dir().join(format!("pilotage-store-contract-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let base = dir.clone();
    let outcome = runtime().block_on(contract(move |limits| {
        let path = base.join(format!("runs-{}.db", COUNTER.fetch_add(1, Ordering::SeqCst)));
        Box::pin(async move { Ok(Arc::new(SqliteStore::open(path, limits).await?) as Arc<dyn RunStore>) })
    }));
    let _ = std::fs::remove_dir_all(&dir);
    assert_kept(outcome, "SQLite");
}

/// The Postgres connection string the tests use, or `None` (skipped) outside CI.
pub fn postgres_url() -> Option<String> {
    match std::env::var("PILOTAGE_POSTGRES_URL") {
        Ok(url) if !url.is_empty() => Some(url),
        _ => {
            assert!(
                std::env::var("CI").as_deref() != Ok("true"),
                "CI=true and PILOTAGE_POSTGRES_URL is not set (.ci/run starts a Postgres server and sets it)"
            );
            eprintln!("SKIPPED: the Postgres run store: PILOTAGE_POSTGRES_URL is not set");
            None
        }
    }
}

#[test]
fn the_postgres_store_keeps_the_contract() {
    let Some(url) = postgres_url() else { return };
    let outcome = runtime().block_on(contract(move |limits| {
        let url = url.clone();
        let schema = format!(
            "pilotage_contract_{}_{}",
            std::process::id(),
            COUNTER.fetch_add(1, Ordering::SeqCst)
        );
        Box::pin(
            async move { Ok(Arc::new(PostgresStore::connect_in(&url, &schema, limits).await?) as Arc<dyn RunStore>) },
        )
    }));
    assert_kept(outcome, "Postgres");
}

#[test]
fn a_store_that_cannot_open_says_where() {
    let runtime = runtime();
    let error = runtime
        .block_on(SqliteStore::open("/nonexistent-dir/runs.db", Default::default()))
        .unwrap_err();
    assert!(error.to_string().contains("/nonexistent-dir/runs.db"), "{error}");
    let error = runtime
        .block_on(pilotage_server::open_store("redis://x", Default::default()))
        .err()
        .unwrap();
    assert!(
        error.to_string().contains("expected `memory`, `sqlite:PATH`"),
        "{error}"
    );
    let error = runtime
        .block_on(PostgresStore::connect_in(
            "postgres://127.0.0.1:1/x",
            "Bad-Name",
            Default::default(),
        ))
        .unwrap_err();
    assert!(error.to_string().contains("not a schema name"), "{error}");
}
