//! The Postgres run store beyond the contract (tests/store.rs runs that one): its migrations
//! (two engines starting at once, a database newer than the engine, a version-1 schema
//! counted into `owners`), the per-identity row locks under concurrent writers (the `owners`
//! counts stay exact), its own sweep every 256 writes, the sweep lock, the statement timeout,
//! and a database that goes away and comes back under one store. Postgres at
//! `PILOTAGE_POSTGRES_URL` (as tests/store.rs: required under `CI=true`, otherwise skipped,
//! loudly); the recovery test starts a server of its own (tests/postgres/start.sh) to stop and
//! restart it. Rows are read and written behind the store's back with `psql`.

use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

use pilotage_server::{Expiry, PostgresOptions, PostgresStore, RunRecord, RunStore, StoreLimits};
use pilotage_types::{ExecuteResponse, Outcome, TraceLevel, TraceStep};
use serde_json::json;

static COUNTER: AtomicUsize = AtomicUsize::new(0);

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
}

/// The Postgres connection string, or `None` (skipped) outside CI.
fn postgres_url() -> Option<String> {
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

/// A schema no other test uses.
fn fresh_schema(what: &str) -> String {
    format!(
        "pilotage_{what}_{}_{}",
        std::process::id(),
        COUNTER.fetch_add(1, Ordering::SeqCst)
    )
}

/// `sql` run by `psql` on `url`: its rows, `|`-separated, one a line.
fn psql(url: &str, sql: &str) -> String {
    let output = Command::new("psql")
        .args([url, "-v", "ON_ERROR_STOP=1", "-X", "-A", "-t", "-q", "-c", sql])
        .output()
        .expect("psql runs (Debian's postgresql-client)");
    assert!(
        output.status.success(),
        "psql failed on {sql}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout).unwrap().trim().to_owned()
}

fn record(padding: usize) -> RunRecord {
    let step = TraceStep::new("s1", Outcome::success("success")).with_output(json!({"padding": "x".repeat(padding)}));
    RunRecord::new(
        "probe/v1",
        Outcome::success("success"),
        Some(json!({"ok": true})),
        vec![step],
        TraceLevel::Full,
    )
}

fn later() -> Expiry {
    Expiry::At(SystemTime::now() + Duration::from_secs(3600))
}

/// Starts `psql` on `url` running `sql` (which should end in a `pg_sleep` and mention `marker`)
/// in the background; returns once its `pg_sleep` runs, so that what came before it holds.
fn hold(url: &str, sql: &str, marker: &str) -> std::process::Child {
    let child = Command::new("psql")
        .args([url, "-X", "-q", "-v", "ON_ERROR_STOP=1", "-c", sql])
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let started = Instant::now();
    let sleeping =
        format!("SELECT COUNT(*) FROM pg_stat_activity WHERE wait_event = 'PgSleep' AND query LIKE '%{marker}%'");
    while psql(url, &sleeping) != "1" {
        assert!(
            started.elapsed() < Duration::from_secs(20),
            "psql did not start holding"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    child
}

/// Every identity whose `owners` row differs from what its rows add up to (none: exact).
fn owner_mismatches(url: &str, schema: &str) -> String {
    psql(
        url,
        &format!(
            "SELECT COALESCE(o.identity, h.identity), o.runs, h.runs, o.bytes, h.bytes, o.idempotency, h.keys
             FROM {schema}.owners o FULL OUTER JOIN (
                 SELECT identity, SUM(runs)::BIGINT AS runs, SUM(bytes)::BIGINT AS bytes, SUM(keys)::BIGINT AS keys FROM (
                     SELECT identity, COUNT(*) AS runs, SUM(size) AS bytes, 0 AS keys FROM {schema}.runs GROUP BY identity
                     UNION ALL SELECT identity, 0, 0, COUNT(*) FROM {schema}.idempotency GROUP BY identity
                 ) AS t GROUP BY identity
             ) AS h ON o.identity = h.identity
             WHERE o.identity IS NULL OR h.identity IS NULL
                OR o.runs <> h.runs OR o.bytes <> h.bytes OR o.idempotency <> h.keys"
        ),
    )
}

#[test]
fn two_stores_connecting_at_once_to_an_empty_schema_both_come_up() {
    let Some(url) = postgres_url() else { return };
    let schema = fresh_schema("migrate");
    let runtime = runtime();
    let (first, second, third) = runtime.block_on(async {
        tokio::join!(
            PostgresStore::connect_in(&url, &schema, StoreLimits::default()),
            PostgresStore::connect_in(&url, &schema, StoreLimits::default()),
            PostgresStore::connect_with(&url, PostgresOptions::new().schema(&schema).pool_size(2)),
        )
    });
    let (first, second, third) = (first.unwrap(), second.unwrap(), third.unwrap());
    assert_eq!(
        psql(&url, &format!("SELECT COUNT(*), MIN(version) FROM {schema}.meta")),
        "1|2",
        "one version row, at the latest version"
    );
    runtime.block_on(async {
        assert!(first.put("a", "run_1", record(10), later()).await.unwrap());
        assert!(second.get("a", "run_1").await.unwrap().is_some());
        assert!(third.get("a", "run_1").await.unwrap().is_some());
    });
}

#[test]
fn a_database_at_a_newer_version_is_refused_naming_both() {
    let Some(url) = postgres_url() else { return };
    let schema = fresh_schema("newer");
    let runtime = runtime();
    runtime
        .block_on(PostgresStore::connect_in(&url, &schema, StoreLimits::default()))
        .unwrap();
    psql(&url, &format!("UPDATE {schema}.meta SET version = 7"));
    let error = runtime
        .block_on(PostgresStore::connect_in(&url, &schema, StoreLimits::default()))
        .unwrap_err()
        .to_string();
    assert!(
        error.contains("the database's schema is at version 7; this engine knows versions up to 2: upgrade the engine"),
        "{error}"
    );
    assert_eq!(
        psql(&url, &format!("SELECT version FROM {schema}.meta")),
        "7",
        "a refused connect changes nothing"
    );
}

#[test]
fn a_version_1_schema_is_migrated_with_what_each_identity_holds() {
    let Some(url) = postgres_url() else { return };
    let schema = fresh_schema("v1");
    // Version 1 as an engine before the fair share left it, with rows.
    psql(
        &url,
        &format!(
            "CREATE SCHEMA {schema};
             CREATE TABLE {schema}.meta (version BIGINT NOT NULL);
             INSERT INTO {schema}.meta VALUES (1);
             CREATE TABLE {schema}.runs (seq BIGSERIAL PRIMARY KEY, identity TEXT NOT NULL, run_id TEXT NOT NULL,
                 record TEXT NOT NULL, size BIGINT NOT NULL, expires_at BIGINT, UNIQUE (identity, run_id));
             CREATE INDEX ON {schema}.runs (expires_at);
             CREATE TABLE {schema}.idempotency (seq BIGSERIAL PRIMARY KEY, identity TEXT NOT NULL, key TEXT NOT NULL,
                 fingerprint TEXT NOT NULL, response TEXT NOT NULL, expires_at BIGINT NOT NULL, UNIQUE (identity, key));
             INSERT INTO {schema}.runs (identity, run_id, record, size, expires_at) VALUES
                 ('alice', 'r1', '{{}}', 100, NULL), ('alice', 'r2', '{{}}', 50, NULL), ('bob', 'r1', '{{}}', 7, NULL);
             INSERT INTO {schema}.idempotency (identity, key, fingerprint, response, expires_at) VALUES
                 ('bob', 'k', 'f', '{{}}', 9999999999999), ('carol', 'k', 'f', '{{}}', 9999999999999);"
        ),
    );
    let runtime = runtime();
    let store = runtime
        .block_on(PostgresStore::connect_in(&url, &schema, StoreLimits::default()))
        .unwrap();
    assert_eq!(
        psql(
            &url,
            &format!("SELECT identity, runs, bytes, idempotency FROM {schema}.owners ORDER BY identity")
        ),
        "alice|2|150|0\nbob|1|7|1\ncarol|0|0|1"
    );
    assert_eq!(psql(&url, &format!("SELECT version FROM {schema}.meta")), "2");
    runtime.block_on(async {
        store.forget_session("carol").await.unwrap();
        store.put("alice", "r3", record(10), later()).await.unwrap();
    });
    assert_eq!(owner_mismatches(&url, &schema), "");
    assert_eq!(
        psql(
            &url,
            &format!("SELECT COUNT(*) FROM {schema}.owners WHERE identity = 'carol'")
        ),
        "0",
        "an owner row at zero is deleted"
    );
}

#[test]
fn concurrent_writers_keep_each_share_and_the_owner_counts_exact() {
    let Some(url) = postgres_url() else { return };
    let schema = fresh_schema("owners");
    let runtime = runtime();
    let limits = StoreLimits::new(10_000, 1 << 30)
        .with_identity_share(20, 1 << 30)
        .with_max_idempotency_per_identity(5);
    let store = Arc::new(
        runtime
            .block_on(PostgresStore::connect_with(
                &url,
                PostgresOptions::new().schema(&schema).pool_size(8).limits(limits),
            ))
            .unwrap(),
    );
    let response = ExecuteResponse::new("run_1", Outcome::success("success"));
    runtime.block_on(async {
        let mut tasks = Vec::new();
        // Four writers per identity, on four identities: same-identity writers contend for
        // one owner row, the others not at all.
        for writer in 0..16 {
            let store = store.clone();
            let response = response.clone();
            tasks.push(tokio::spawn(async move {
                let identity = format!("id{}", writer % 4);
                for i in 0..40 {
                    let expiry = match i % 4 {
                        0 => Expiry::WithSession,
                        1 => Expiry::At(SystemTime::now() - Duration::from_secs(1)),
                        _ => later(),
                    };
                    let run = format!("w{writer}_{}", i % 30);
                    store.put(&identity, &run, record(i * 3), expiry).await.unwrap();
                    store
                        .remember(&identity, &format!("k{}", i % 7), "f", &response)
                        .await
                        .unwrap();
                    if i == 25 && writer % 4 == 0 {
                        store.forget_session(&identity).await.unwrap();
                    }
                }
            }));
        }
        for task in tasks {
            task.await.unwrap();
        }
    });
    assert_eq!(owner_mismatches(&url, &schema), "", "the owners rows are exact");
    let most = psql(
        &url,
        &format!("SELECT MAX(runs), MAX(idempotency) FROM {schema}.owners"),
    );
    assert_eq!(most, "20|5", "every identity at its share, none past it");
    runtime.block_on(store.sweep()).unwrap();
    assert_eq!(owner_mismatches(&url, &schema), "", "exact after a sweep");
    assert_eq!(
        psql(
            &url,
            &format!(
                "SELECT COUNT(*) FROM {schema}.runs WHERE expires_at <= (extract(epoch FROM now()) * 1000)::BIGINT"
            )
        ),
        "0",
        "the sweep took the expired runs"
    );
}

#[test]
fn the_store_sweeps_itself_every_256_writes() {
    let Some(url) = postgres_url() else { return };
    let schema = fresh_schema("autosweep");
    let runtime = runtime();
    let store = runtime
        .block_on(PostgresStore::connect_in(&url, &schema, StoreLimits::new(100, 1 << 30)))
        .unwrap();
    let sizes = runtime.block_on(async {
        for i in 0..400 {
            let identity = if i % 3 == 0 { "small" } else { "large" };
            if identity == "small" && i > 30 {
                continue;
            }
            store.put(identity, &format!("r{i}"), record(1), later()).await.unwrap();
        }
        store.sizes().await.unwrap()
    });
    // 11 + 266 writes; the 256th swept the store down to 100, 21 came after it.
    assert_eq!(sizes.runs, 121, "{sizes:?}");
    assert_eq!(
        psql(
            &url,
            &format!("SELECT runs FROM {schema}.owners WHERE identity = 'small'")
        ),
        "11",
        "the identity holding the most gave way, not the one holding least"
    );
    assert_eq!(owner_mismatches(&url, &schema), "");
}

/// The key of the sweep lock of `schema`, as the store computes it (FNV-1a, shifted to 63
/// bits).
fn sweep_lock(schema: &str) -> i64 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in format!("pilotage-sweep:{schema}").as_bytes() {
        hash ^= u64::from(*byte);
        hash = hash.wrapping_mul(0x0100_0000_01b3);
    }
    (hash >> 1) as i64
}

#[test]
fn a_sweep_that_finds_another_sweeping_returns_at_once() {
    let Some(url) = postgres_url() else { return };
    let schema = fresh_schema("sweeplock");
    let runtime = runtime();
    let store = runtime
        .block_on(PostgresStore::connect_in(&url, &schema, StoreLimits::new(2, 1 << 30)))
        .unwrap();
    runtime.block_on(async {
        for i in 0..5 {
            store.put("a", &format!("r{i}"), record(1), later()).await.unwrap();
        }
    });
    // Another "instance" holds the sweep lock for a few seconds.
    let mut holder = hold(
        &url,
        &format!(
            "BEGIN; SELECT pg_advisory_xact_lock({}); SELECT pg_sleep(4) /* {schema} */; COMMIT;",
            sweep_lock(&schema)
        ),
        &schema,
    );
    let started = Instant::now();
    let swept = runtime.block_on(store.sweep()).unwrap();
    assert!(started.elapsed() < Duration::from_secs(2), "{:?}", started.elapsed());
    assert_eq!(swept, 0);
    assert_eq!(runtime.block_on(store.sizes()).unwrap().runs, 5, "nothing was swept");
    assert!(holder.wait().unwrap().success());
    runtime.block_on(store.sweep()).unwrap();
    assert_eq!(runtime.block_on(store.sizes()).unwrap().runs, 2, "then the sweep runs");
}

#[test]
fn a_statement_timeout_bounds_a_call_that_waits_on_a_lock() {
    let Some(url) = postgres_url() else { return };
    let schema = fresh_schema("timeout");
    let runtime = runtime();
    let store = runtime
        .block_on(PostgresStore::connect_with(
            &url,
            PostgresOptions::new()
                .schema(&schema)
                .statement_timeout(Duration::from_millis(500)),
        ))
        .unwrap();
    runtime.block_on(store.put("a", "r0", record(1), later())).unwrap();
    // Another session holds the owner row of `a` for three seconds.
    let mut holder = Command::new("psql")
        .args([
            url.as_str(),
            "-X",
            "-q",
            "-c",
            &format!(
                "BEGIN; SELECT * FROM {schema}.owners WHERE identity = 'a' FOR UPDATE; SELECT pg_sleep(3); COMMIT;"
            ),
        ])
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(700));
    let started = Instant::now();
    let error = runtime
        .block_on(store.put("a", "r1", record(1), later()))
        .unwrap_err()
        .to_string();
    assert!(started.elapsed() < Duration::from_secs(2), "{:?}", started.elapsed());
    assert!(error.contains("statement timeout"), "{error}");
    // Another identity writes meanwhile: no lock of `a` is in its way.
    let started = Instant::now();
    assert!(runtime.block_on(store.put("b", "r1", record(1), later())).unwrap());
    assert!(
        started.elapsed() < Duration::from_millis(400),
        "{:?}",
        started.elapsed()
    );
    assert!(holder.wait().unwrap().success());
    assert!(runtime.block_on(store.put("a", "r1", record(1), later())).unwrap());
    assert_eq!(owner_mismatches(&url, &schema), "");
}

/// A Postgres server of this test's own, stopped and removed when dropped.
struct OwnServer {
    url: String,
    dir: String,
}

impl OwnServer {
    fn start() -> Self {
        let output = Command::new("bash")
            .arg(concat!(env!("CARGO_MANIFEST_DIR"), "/postgres/start.sh"))
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
        assert!(output.status.success(), "start.sh: {stderr}");
        Self {
            url: String::from_utf8(output.stdout).unwrap().trim().to_owned(),
            dir: stderr.lines().last().unwrap().trim().to_owned(),
        }
    }

    fn restart(&self, what: &str) {
        let status = Command::new("bash")
            .arg(concat!(env!("CARGO_MANIFEST_DIR"), "/postgres/restart.sh"))
            .args([&self.dir, what])
            .status()
            .unwrap();
        assert!(status.success(), "restart.sh {what}");
    }
}

impl Drop for OwnServer {
    fn drop(&mut self) {
        let _ = Command::new("bash")
            .arg(concat!(env!("CARGO_MANIFEST_DIR"), "/postgres/stop.sh"))
            .arg(&self.dir)
            .status();
    }
}

#[test]
fn the_store_fails_while_its_database_is_down_and_recovers_when_it_is_back() {
    let Some(_) = postgres_url() else { return };
    let server = OwnServer::start();
    let runtime = runtime();
    let options = PostgresOptions::new()
        .pool_size(4)
        .wait_timeout(Duration::from_secs(2))
        .connect_timeout(Duration::from_secs(2))
        .statement_timeout(Duration::from_secs(2));
    let store = runtime
        .block_on(PostgresStore::connect_with(&server.url, options))
        .unwrap();
    runtime.block_on(async {
        // Several connections in the pool, all to be broken by the stop.
        let (a, b, c) = tokio::join!(
            store.put("a", "before", record(10), later()),
            store.put("b", "before", record(10), later()),
            store.put("c", "before", record(10), later()),
        );
        assert!(a.unwrap() && b.unwrap() && c.unwrap());
        assert!(store.get("a", "before").await.unwrap().is_some());
    });

    server.restart("down");
    for call in 0..3 {
        let started = Instant::now();
        let outcome = runtime.block_on(store.put("a", &format!("down_{call}"), record(10), later()));
        let error = outcome.unwrap_err().to_string();
        eprintln!("a put while the database is down: {error} ({:?})", started.elapsed());
        assert!(started.elapsed() < Duration::from_secs(10), "{:?}", started.elapsed());
        assert!(error.contains("postgres"), "{error}");
        let started = Instant::now();
        assert!(runtime.block_on(store.get("a", "before")).is_err());
        assert!(started.elapsed() < Duration::from_secs(10), "{:?}", started.elapsed());
    }

    server.restart("up");
    runtime.block_on(async {
        assert!(store.put("a", "after", record(10), later()).await.unwrap());
        assert!(store.get("a", "after").await.unwrap().is_some());
        assert!(
            store.get("a", "before").await.unwrap().is_some(),
            "what was kept is still there"
        );
        let (b, c) = tokio::join!(store.get("b", "before"), store.get("c", "before"));
        assert!(b.unwrap().is_some() && c.unwrap().is_some());
    });
}

#[test]
fn a_server_that_never_answers_fails_within_the_connect_timeout() {
    // A socket that accepts connections (the kernel's backlog) and never says a word.
    let silent = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("postgres://postgres@{}/postgres", silent.local_addr().unwrap());
    let options = PostgresOptions::new().connect_timeout(Duration::from_secs(1));
    let started = Instant::now();
    let error = runtime()
        .block_on(PostgresStore::connect_with(&url, options))
        .unwrap_err()
        .to_string();
    assert!(started.elapsed() < Duration::from_secs(5), "{:?}", started.elapsed());
    assert!(error.contains("no connection"), "{error}");
}

#[test]
fn the_backstop_takes_from_the_largest_down_to_one_level() {
    let Some(url) = postgres_url() else { return };
    let runtime = runtime();
    let held = |schema: &str, column: &str| {
        psql(
            &url,
            &format!("SELECT string_agg(identity || '=' || {column}, ' ' ORDER BY identity) FROM {schema}.owners"),
        )
    };
    let response = ExecuteResponse::new("run_1", Outcome::success("success"));

    // Counts: ten identities of 8 runs and one of 2, bound 50: 32 go, 3 from each of the
    // ten, then one more from the first two (ties: the most bytes, then the identity).
    let schema = fresh_schema("backstop");
    let store = runtime
        .block_on(PostgresStore::connect_in(&url, &schema, StoreLimits::new(50, 1 << 30)))
        .unwrap();
    runtime.block_on(async {
        for i in 0..8 {
            for owner in 0..10 {
                store
                    .put(&format!("id{owner}"), &format!("r{i}"), record(10), later())
                    .await
                    .unwrap();
            }
        }
        store.put("small", "r0", record(10), later()).await.unwrap();
        store.put("small", "r1", record(10), later()).await.unwrap();
        store.sweep().await.unwrap();
        assert!(store.get("id5", "r2").await.unwrap().is_none(), "the oldest go");
        assert!(store.get("id5", "r3").await.unwrap().is_some());
    });
    assert_eq!(
        held(&schema, "runs"),
        "id0=4 id1=4 id2=5 id3=5 id4=5 id5=5 id6=5 id7=5 id8=5 id9=5 small=2"
    );
    assert_eq!(owner_mismatches(&url, &schema), "");

    // Bytes: four identities of 6 runs of one size, bound 12 of them: 3 go from each.
    let schema = fresh_schema("backstop");
    let size = record(500).size();
    let store = runtime
        .block_on(PostgresStore::connect_in(
            &url,
            &schema,
            StoreLimits::new(1000, size * 12),
        ))
        .unwrap();
    runtime.block_on(async {
        for i in 0..6 {
            for owner in 0..4 {
                store
                    .put(&format!("id{owner}"), &format!("r{i}"), record(500), later())
                    .await
                    .unwrap();
            }
        }
        store.sweep().await.unwrap();
    });
    assert_eq!(held(&schema, "runs"), "id0=3 id1=3 id2=3 id3=3");
    assert_eq!(owner_mismatches(&url, &schema), "");

    // Idempotency records: four identities of 3 keys, bound 6: one from each, then one more
    // from the first two.
    let schema = fresh_schema("backstop");
    let store = runtime
        .block_on(PostgresStore::connect_in(
            &url,
            &schema,
            StoreLimits::default().with_max_idempotency(6),
        ))
        .unwrap();
    runtime.block_on(async {
        for key in 0..3 {
            for owner in 0..4 {
                store
                    .remember(&format!("id{owner}"), &format!("k{key}"), "f", &response)
                    .await
                    .unwrap();
            }
        }
        store.sweep().await.unwrap();
    });
    assert_eq!(held(&schema, "idempotency"), "id0=1 id1=1 id2=2 id3=2");
    assert_eq!(owner_mismatches(&url, &schema), "");
}
