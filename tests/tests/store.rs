//! The run-store contract (`pilotage_server::store_contract`) on every implementation:
//! the memory store, SQLite (a temporary file) and Postgres (`PILOTAGE_POSTGRES_URL`, which
//! `.ci/run` sets after starting a server of its own; under `CI=true` its absence fails, and
//! elsewhere the Postgres case is skipped, loudly). Each store of the contract gets a fresh
//! file or Postgres schema.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use pilotage_server::store_contract::contract;
use pilotage_server::{MemoryStore, PostgresStore, RunStore, SqliteStore, StoreLimits};

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

#[test]
fn a_sqlite_file_from_a_newer_engine_is_refused_naming_both_versions() {
    let dir = std::env::temp_dir().join(format!("pilotage-store-newer-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("runs.db");
    let runtime = runtime();
    let known = pilotage_server::SQLITE_MIGRATIONS.len();
    runtime.block_on(SqliteStore::open(&path, Default::default())).unwrap();
    {
        let connection = rusqlite::Connection::open(&path).unwrap();
        connection
            .execute("UPDATE pilotage_schema SET version = ?1", [known as i64 + 3])
            .unwrap();
    }
    let error = runtime
        .block_on(SqliteStore::open(&path, Default::default()))
        .unwrap_err()
        .to_string();
    let _ = std::fs::remove_dir_all(&dir);
    assert!(error.contains(&format!("version {}", known + 3)), "{error}");
    assert!(error.contains(&format!("up to {known}")), "{error}");
}

#[test]
fn a_sqlite_store_from_version_1_is_migrated_with_what_each_identity_holds() {
    let dir = std::env::temp_dir().join(format!("pilotage-store-v1-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("runs.db");
    {
        // A file as the first version of the store left it, with runs of two identities.
        let connection = rusqlite::Connection::open(&path).unwrap();
        connection.execute_batch(pilotage_server::SQLITE_MIGRATIONS[0]).unwrap();
        connection
            .execute_batch(
                "CREATE TABLE pilotage_schema (version INTEGER NOT NULL);
                 INSERT INTO pilotage_schema (version) VALUES (1);
                 INSERT INTO pilotage_runs (identity, run_id, record, size, expires_at)
                     VALUES ('a', 'r1', '{}', 10, NULL), ('a', 'r2', '{}', 20, NULL), ('b', 'r3', '{}', 5, NULL);",
            )
            .unwrap();
    }
    let runtime = runtime();
    let limits = StoreLimits::default().with_identity_share(2, 1 << 20);
    let store = runtime.block_on(SqliteStore::open(&path, limits)).unwrap();
    let sizes = runtime.block_on(store.sizes()).unwrap();
    assert_eq!((sizes.runs, sizes.bytes), (3, 35));
    // `a` holds two already: its share is full, so its oldest gives way; `b`'s run stays.
    let record = pilotage_server::RunRecord::new(
        "probe/v1",
        pilotage_types::Outcome::success("success"),
        None,
        Vec::new(),
        pilotage_types::TraceLevel::Full,
    );
    runtime
        .block_on(store.put("a", "r4", record, pilotage_server::Expiry::WithSession))
        .unwrap();
    let held = rusqlite::Connection::open(&path)
        .unwrap()
        .query_row("SELECT runs FROM pilotage_owners WHERE identity = 'a'", [], |row| {
            row.get::<_, i64>(0)
        })
        .unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    assert_eq!(
        held, 2,
        "the owners table was populated from the version-1 rows and kept exact"
    );
}
