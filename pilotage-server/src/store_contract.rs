//! The [`RunStore`] contract, written once and run against every implementation (the memory,
//! SQLite and Postgres stores in this crate's tests; any store of yours): isolation between
//! identities, expiry by retention on read and by sweep, session-bound records, the fair share
//! of each identity (its own oldest evicted, nobody else's) and the store-wide backstop after a
//! sweep (the identity holding the most gives way), overwrites, idempotency records and their
//! bounds, and records that come back equal to what was put.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use serde_json::json;

use super::runs::{Expiry, IdempotencyHit, RunRecord, RunStore, StoreError, StoreLimits};
use pilotage_types::{ExecuteResponse, Outcome, TraceLevel, TraceStep};

/// Makes a fresh, empty store with the given limits.
pub type MakeStore = dyn Fn(StoreLimits) -> Pin<Box<dyn Future<Output = Result<Arc<dyn RunStore>, StoreError>> + Send>>;

fn record(tag: &str, padding: usize) -> RunRecord {
    let step = TraceStep::new("s1", Outcome::success("success"))
        .with_input(json!({"tag": tag}))
        .with_output(json!({"padding": "x".repeat(padding)}));
    RunRecord::new(
        "probe/v1",
        Outcome::success("success"),
        Some(json!({"tag": tag})),
        vec![step],
        TraceLevel::Full,
    )
}

fn later() -> Expiry {
    Expiry::At(SystemTime::now() + Duration::from_secs(3600))
}

struct Findings(Vec<String>);

impl Findings {
    fn check(&mut self, ok: bool, what: &str) {
        if !ok {
            self.0.push(what.to_owned());
        }
    }
}

/// Runs the contract against stores made by `make`; `Err` lists every violation.
pub async fn contract<F>(make: F) -> Result<(), Vec<String>>
where
    F: Fn(StoreLimits) -> Pin<Box<dyn Future<Output = Result<Arc<dyn RunStore>, StoreError>> + Send>>,
{
    let mut found = Findings(Vec::new());
    if let Err(error) = run(&make, &mut found).await {
        found.0.push(format!("the store failed: {error}"));
    }
    if found.0.is_empty() {
        Ok(())
    } else {
        Err(found.0)
    }
}

async fn run<F>(make: &F, found: &mut Findings) -> Result<(), StoreError>
where
    F: Fn(StoreLimits) -> Pin<Box<dyn Future<Output = Result<Arc<dyn RunStore>, StoreError>> + Send>>,
{
    // Isolation and round trips.
    let store = make(StoreLimits::default()).await?;
    let kept = record("a", 10);
    found.check(
        store.put("alice", "run_1", kept.clone(), later()).await?,
        "a record is kept",
    );
    found.check(
        store.get("alice", "run_1").await? == Some(kept.clone()),
        "a record comes back equal to what was put",
    );
    found.check(
        store.get("bob", "run_1").await?.is_none(),
        "another identity does not see a record",
    );
    found.check(
        store.get("alice", "run_2").await?.is_none(),
        "an unknown id is not found",
    );
    store.put("alice", "run_1", record("b", 10), later()).await?;
    found.check(
        store.get("alice", "run_1").await?.and_then(|r| r.output) == Some(json!({"tag": "b"})),
        "putting the same id again replaces the record",
    );
    found.check(store.sizes().await?.runs == 1, "a replaced record is counted once");

    // Expiry on read and by sweep.
    let store = make(StoreLimits::default()).await?;
    store
        .put(
            "a",
            "past",
            record("x", 10),
            Expiry::At(SystemTime::now() - Duration::from_secs(1)),
        )
        .await?;
    found.check(
        store.get("a", "past").await?.is_none(),
        "an expired record is not found",
    );
    store
        .put(
            "a",
            "soon",
            record("x", 10),
            Expiry::At(SystemTime::now() + Duration::from_millis(300)),
        )
        .await?;
    found.check(
        store.get("a", "soon").await?.is_some(),
        "a record is found within its retention",
    );
    tokio::time::sleep(Duration::from_millis(450)).await;
    found.check(
        store.get("a", "soon").await?.is_none(),
        "a record is gone after its retention",
    );
    store
        .put(
            "a",
            "gone",
            record("x", 10),
            Expiry::At(SystemTime::now() - Duration::from_secs(1)),
        )
        .await?;
    store.put("a", "stays", record("x", 10), later()).await?;
    store.sweep().await?;
    let sizes = store.sizes().await?;
    found.check(sizes.runs == 1, "a sweep removes the expired records and only them");

    // Session-bound records.
    let store = make(StoreLimits::default()).await?;
    store.put("s1", "bound", record("x", 10), Expiry::WithSession).await?;
    store.put("s1", "timed", record("x", 10), later()).await?;
    store.put("s2", "other", record("x", 10), Expiry::WithSession).await?;
    store.forget_session("s1").await?;
    found.check(
        store.get("s1", "bound").await?.is_none(),
        "a session-bound record goes with its session",
    );
    found.check(
        store.get("s1", "timed").await?.is_some(),
        "a duration retention outlives the session",
    );
    found.check(
        store.get("s2", "other").await?.is_some(),
        "another session's records stay",
    );

    // The fair share: one identity past its share evicts its own oldest, never another's.
    let store = make(StoreLimits::new(100, 1 << 20).with_identity_share(3, 1 << 20)).await?;
    for i in 0..3 {
        store.put("alice", &format!("a_{i}"), record("x", 10), later()).await?;
    }
    for i in 0..10 {
        store.put("bob", &format!("b_{i}"), record("x", 10), later()).await?;
    }
    let mut alice_kept = true;
    for i in 0..3 {
        alice_kept &= store.get("alice", &format!("a_{i}")).await?.is_some();
    }
    found.check(alice_kept, "another identity's flood takes none of an identity's runs");
    found.check(
        store.get("bob", "b_9").await?.is_some() && store.get("bob", "b_6").await?.is_none(),
        "an identity past its run share gives way its own oldest",
    );
    found.check(store.sizes().await?.runs == 6, "each identity keeps at most its share");
    let size = record("x", 500).size();
    let store = make(StoreLimits::new(100, 1 << 20).with_identity_share(100, size * 2)).await?;
    store.put("alice", "a", record("x", 500), later()).await?;
    for i in 0..4 {
        store.put("bob", &format!("b_{i}"), record("x", 500), later()).await?;
    }
    found.check(
        store.get("alice", "a").await?.is_some() && store.get("bob", "b_1").await?.is_none(),
        "the byte share evicts only the identity's own oldest",
    );
    found.check(
        !store.put("bob", "huge", record("x", size * 3), later()).await?,
        "a record larger than one identity's byte share alone is not kept",
    );

    // The store-wide backstop, at the latest after a sweep: the holders of the most give way.
    let store = make(StoreLimits::new(5, 1 << 20).with_identity_share(4, 1 << 20)).await?;
    store.put("alice", "a_0", record("x", 10), later()).await?;
    for owner in ["bob", "carol"] {
        for i in 0..4 {
            store
                .put(owner, &format!("{owner}_{i}"), record("x", 10), later())
                .await?;
        }
    }
    store.sweep().await?;
    found.check(
        store.sizes().await?.runs <= 5,
        "after a sweep, at most max_runs records are kept",
    );
    found.check(
        store.get("alice", "a_0").await?.is_some(),
        "the store-wide bound takes from the identities holding the most, not the one holding least",
    );
    found.check(
        store.get("bob", "bob_3").await?.is_some() && store.get("carol", "carol_3").await?.is_some(),
        "the identities giving way lose their oldest first",
    );

    // The count bound of one identity alone: the oldest evicted.
    let store = make(StoreLimits::new(3, 1 << 20)).await?;
    for i in 0..5 {
        store.put("a", &format!("run_{i}"), record("x", 10), later()).await?;
    }
    store.sweep().await?;
    found.check(store.sizes().await?.runs == 3, "at most max_runs records are kept");
    found.check(
        store.get("a", "run_0").await?.is_none(),
        "the oldest record is evicted first",
    );
    found.check(store.get("a", "run_4").await?.is_some(), "the newest record is kept");

    // The byte bound.
    let size = record("x", 500).size();
    let store = make(StoreLimits::new(100, size * 3)).await?;
    for i in 0..6 {
        store.put("a", &format!("run_{i}"), record("x", 500), later()).await?;
    }
    store.sweep().await?;
    let sizes = store.sizes().await?;
    found.check(sizes.bytes <= size * 3, "at most max_bytes of records are kept");
    found.check(
        sizes.runs == 3,
        "the byte bound evicts the oldest until the record fits",
    );
    found.check(
        !store.put("a", "huge", record("x", size * 4), later()).await?,
        "a record larger than the byte bound alone is not kept",
    );

    // Idempotency records.
    let store = make(StoreLimits::default()).await?;
    let response = ExecuteResponse::new("run_1", Outcome::success("success"));
    found.check(
        store.idempotency("a", "k", "f1").await? == IdempotencyHit::Miss,
        "an unknown key misses",
    );
    store.remember("a", "k", "f1", &response).await?;
    found.check(
        store.idempotency("a", "k", "f1").await? == IdempotencyHit::Replay(Box::new(response.clone())),
        "the same key and request replay the response",
    );
    found.check(
        store.idempotency("a", "k", "f2").await? == IdempotencyHit::Conflict,
        "the same key with another request conflicts",
    );
    found.check(
        store.idempotency("b", "k", "f1").await? == IdempotencyHit::Miss,
        "keys are per identity",
    );
    store.forget_session("a").await?;
    found.check(
        store.idempotency("a", "k", "f1").await? == IdempotencyHit::Miss,
        "a session's idempotency records go with it",
    );
    let store = make(StoreLimits::default().with_max_idempotency(2)).await?;
    for key in ["k1", "k2", "k3"] {
        store.remember("a", key, "f", &response).await?;
    }
    store.sweep().await?;
    found.check(
        store.sizes().await?.idempotency == 2,
        "at most max_idempotency records are kept",
    );
    found.check(
        store.idempotency("a", "k1", "f").await? == IdempotencyHit::Miss,
        "the oldest key is evicted",
    );
    let store = make(StoreLimits::default().with_max_idempotency_per_identity(2)).await?;
    store.remember("alice", "k", "f", &response).await?;
    for key in ["k1", "k2", "k3", "k4"] {
        store.remember("bob", key, "f", &response).await?;
    }
    found.check(
        store.idempotency("alice", "k", "f").await? != IdempotencyHit::Miss,
        "another identity's keys take none of an identity's idempotency records",
    );
    found.check(
        store.idempotency("bob", "k2", "f").await? == IdempotencyHit::Miss
            && store.idempotency("bob", "k4", "f").await? != IdempotencyHit::Miss,
        "an identity past its idempotency share gives way its own oldest",
    );
    Ok(())
}
