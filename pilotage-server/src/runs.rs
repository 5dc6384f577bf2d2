//! Runs (Part III 4.3, 8.1, 8.4): unguessable run ids, the [`RunStore`] trait every store of
//! run records and idempotency records implements, and its in-memory implementation
//! ([`MemoryStore`], the default). The trait's contract, which
//! [`contract`](super::store_contract::contract) checks on any implementation:
//!
//! - a run id carries 128 random bits from the operating system (`getrandom`);
//! - a record is found only under the identity that stored it: any other identity gets the
//!   same `None` as for an unknown id (the handler answers both with one `not_found`);
//! - records expire with their retention (checked on every read, and swept on writes and by
//!   [`RunStore::sweep`]); session-bound records go when their session does
//!   ([`RunStore::forget_session`]);
//! - each identity keeps at most its share ([`StoreLimits::max_runs_per_identity`],
//!   [`StoreLimits::max_bytes_per_identity`]), its own oldest evicted first; the whole store
//!   at most [`StoreLimits::max_runs`] records and [`StoreLimits::max_bytes`] of them, the
//!   identity holding the most giving way first (at once in memory, by the sweep in the
//!   database stores); the idempotency records have bounds of their own, alike.

use std::collections::{HashMap, VecDeque};
use std::future::Future;
use std::pin::Pin;
use std::sync::Mutex;
use std::time::{Duration, SystemTime};

use serde_json::Value;

use pilotage_types::{ExecuteResponse, Outcome, TraceLevel, TraceStep};

/// A new run id: `run_` and 32 hexadecimal digits, 128 bits from the operating system's
/// random source.
pub fn new_run_id() -> String {
    let mut bytes = [0u8; 16];
    // The OS random source failing is not recoverable for id generation; fall back to a
    // hash of the time and a process-wide counter keyed by std's random SipHash keys, which
    // are themselves seeded from the OS (never sequential, still unpredictable).
    if getrandom::fill(&mut bytes).is_err() {
        use std::hash::{BuildHasher, Hasher};
        static COUNTER: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let n = COUNTER.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        for (i, chunk) in bytes.chunks_mut(8).enumerate() {
            let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
            hasher.write_u64(n);
            hasher.write_usize(i);
            hasher.write_u128(
                SystemTime::now()
                    .duration_since(SystemTime::UNIX_EPOCH)
                    .map_or(0, |d| d.as_nanos()),
            );
            chunk.copy_from_slice(&hasher.finish().to_le_bytes());
        }
    }
    let mut id = String::with_capacity(36);
    id.push_str("run_");
    for byte in bytes {
        id.push_str(&format!("{byte:02x}"));
    }
    id
}

/// Milliseconds since the Unix epoch (how the database stores keep expiry times).
#[cfg(any(feature = "sqlite", feature = "postgres"))]
pub(crate) fn millis(time: SystemTime) -> i64 {
    time.duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
}

/// Opens the store `spec` names: `memory` (the default), `sqlite:PATH` (feature `sqlite`), or
/// a Postgres connection string `postgres://...` / `postgresql://...` (feature `postgres`).
pub async fn open_store(spec: &str, limits: StoreLimits) -> Result<std::sync::Arc<dyn RunStore>, StoreError> {
    if spec == "memory" {
        return Ok(std::sync::Arc::new(MemoryStore::new(limits)));
    }
    if let Some(path) = spec.strip_prefix("sqlite:") {
        #[cfg(feature = "sqlite")]
        {
            let store = super::store_sqlite::SqliteStore::open(path, limits).await?;
            return Ok(std::sync::Arc::new(store));
        }
        #[cfg(not(feature = "sqlite"))]
        {
            let _ = path;
            return Err(StoreError(format!(
                "{spec}: this build has no SQLite store (feature `sqlite`)"
            )));
        }
    }
    if spec.starts_with("postgres://") || spec.starts_with("postgresql://") {
        #[cfg(feature = "postgres")]
        {
            let store = super::store_postgres::PostgresStore::connect(spec, limits).await?;
            return Ok(std::sync::Arc::new(store));
        }
        #[cfg(not(feature = "postgres"))]
        {
            return Err(StoreError(format!(
                "{spec}: this build has no Postgres store (feature `postgres`)"
            )));
        }
    }
    Err(StoreError(format!(
        "`{spec}`: expected `memory`, `sqlite:PATH` or a postgres:// connection string"
    )))
}

/// The bounds of a [`RunStore`]: a fair share per requester identity (Part III 8.4: the
/// session, or the authorization identity), and a store-wide backstop.
///
/// - **The share.** One identity keeps at most [`StoreLimits::max_runs_per_identity`] runs
///   and [`StoreLimits::max_bytes_per_identity`] bytes of them (defaults 1,000 and 8 MiB),
///   and [`StoreLimits::max_idempotency_per_identity`] idempotency records (default 1,000).
///   A new record past its share evicts *that identity's own* oldest ones, at once; nobody
///   else's.
/// - **The backstop.** The whole store keeps at most [`StoreLimits::max_runs`] runs,
///   [`StoreLimits::max_bytes`] bytes and [`StoreLimits::max_idempotency`] idempotency
///   records (defaults 10,000, 64 MiB, 10,000). Over it, the identity holding the most
///   records gives way first (its oldest), so a flood by one identity, or by a few, never
///   takes the runs of one that holds fewer. The memory store applies the backstop on every
///   write; the database stores in their sweep ([`RunStore::sweep`], which an HTTP engine runs
///   periodically and the stores run every few hundred writes), so that a write never
///   aggregates over the whole table.
///
/// On stateless HTTP without an identity function every request is the one requester
/// `stateless`, whose share is then the whole of what it keeps: raise the share, or give the
/// engine an identity ([`crate::EngineBuilder::identity`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct StoreLimits {
    /// At most this many run records in the store (default 10,000).
    pub max_runs: usize,
    /// At most this many bytes of run records in the store, as serialized JSON (default 64
    /// MiB). A record larger than this (or than one identity's share) alone is not kept.
    pub max_bytes: usize,
    /// At most this many idempotency records in the store (default 10,000).
    pub max_idempotency: usize,
    /// How long an idempotency record is kept (default 24 hours).
    pub idempotency_ttl: Duration,
    /// At most this many run records of one identity (default 1,000).
    pub max_runs_per_identity: usize,
    /// At most this many bytes of one identity's run records (default 8 MiB).
    pub max_bytes_per_identity: usize,
    /// At most this many idempotency records of one identity (default 1,000).
    pub max_idempotency_per_identity: usize,
}

impl Default for StoreLimits {
    fn default() -> Self {
        Self {
            max_runs: 10_000,
            max_bytes: 64 * 1024 * 1024,
            max_idempotency: 10_000,
            idempotency_ttl: Duration::from_secs(24 * 3600),
            max_runs_per_identity: 1_000,
            max_bytes_per_identity: 8 * 1024 * 1024,
            max_idempotency_per_identity: 1_000,
        }
    }
}

impl StoreLimits {
    /// Whether a record of `size` bytes may be kept at all: the rule every store applies
    /// before evicting anything (a record larger than the store's byte bound or one
    /// identity's byte share alone is not kept).
    pub fn admits(&self, size: usize) -> bool {
        size <= self.max_bytes.min(self.max_bytes_per_identity) && self.max_runs > 0 && self.max_runs_per_identity > 0
    }

    /// Sets one identity's share: at most `runs` run records and `bytes` bytes of them.
    pub fn with_identity_share(mut self, runs: usize, bytes: usize) -> Self {
        self.max_runs_per_identity = runs;
        self.max_bytes_per_identity = bytes;
        self
    }

    /// Sets the bound on one identity's idempotency records.
    pub fn with_max_idempotency_per_identity(mut self, records: usize) -> Self {
        self.max_idempotency_per_identity = records;
        self
    }

    /// Whether an identity holding `runs` records of `bytes` bytes must give way its oldest
    /// before a new record of `size` bytes is kept (its share is full).
    pub fn share_is_full(&self, runs: usize, bytes: usize, size: usize) -> bool {
        runs >= self.max_runs_per_identity || bytes + size > self.max_bytes_per_identity
    }

    /// The default limits with `max_runs` runs and `max_bytes` bytes.
    pub fn new(max_runs: usize, max_bytes: usize) -> Self {
        Self {
            max_runs,
            max_bytes,
            ..Self::default()
        }
    }

    /// Sets the bound on idempotency records.
    pub fn with_max_idempotency(mut self, max_idempotency: usize) -> Self {
        self.max_idempotency = max_idempotency;
        self
    }

    /// Sets how long an idempotency record is kept.
    pub fn with_idempotency_ttl(mut self, ttl: Duration) -> Self {
        self.idempotency_ttl = ttl;
        self
    }
}

/// What is kept of one Run for trace fetch (stored as JSON by the database stores).
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[non_exhaustive]
pub struct RunRecord {
    /// The Language it ran.
    pub language: String,
    /// Its outcome.
    pub outcome: Outcome,
    /// Its output, when it has one.
    pub output: Option<Value>,
    /// The steps, as recorded at [`RunRecord::recorded`].
    pub steps: Vec<TraceStep>,
    /// The level the steps were recorded at.
    pub recorded: TraceLevel,
}

impl RunRecord {
    /// A record of a Run of `language`.
    pub fn new(
        language: impl Into<String>,
        outcome: Outcome,
        output: Option<Value>,
        steps: Vec<TraceStep>,
        recorded: TraceLevel,
    ) -> Self {
        Self {
            language: language.into(),
            outcome,
            output,
            steps,
            recorded,
        }
    }

    /// The bytes the bounds count for this record: its serialized steps and output, and a
    /// fixed overhead.
    pub fn size(&self) -> usize {
        let steps: usize = self
            .steps
            .iter()
            .map(|s| serde_json::to_vec(s).map_or(0, |b| b.len()))
            .sum();
        let output = self
            .output
            .as_ref()
            .map_or(0, |o| serde_json::to_vec(o).map_or(0, |b| b.len()));
        steps + output + self.language.len() + 128
    }
}

/// When a record stops being visible.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Expiry {
    /// At this time (a duration retention; wall-clock time, so that every process sharing a
    /// store agrees).
    At(SystemTime),
    /// When the session `forget_session` names ends (session retention).
    WithSession,
}

struct Stored {
    record: RunRecord,
    expiry: Expiry,
    size: usize,
}

struct Idempotent {
    fingerprint: String,
    response: ExecuteResponse,
    expires: SystemTime,
}

/// What one identity holds: its run ids oldest first, and their bytes.
#[derive(Default)]
struct Owner {
    order: VecDeque<String>,
    bytes: usize,
}

#[derive(Default)]
struct Inner {
    runs: HashMap<(String, String), Stored>,
    owners: HashMap<String, Owner>,
    bytes: usize,
    idempotency: HashMap<(String, String), Idempotent>,
    /// Per identity, its idempotency keys oldest first.
    keys: HashMap<String, VecDeque<String>>,
}

impl Inner {
    /// Removes the run `run_id` of `identity`, keeping the owner's order and the byte counts.
    fn remove_run(&mut self, identity: &str, run_id: &str) -> Option<Stored> {
        let stored = self.runs.remove(&(identity.to_owned(), run_id.to_owned()))?;
        self.bytes -= stored.size;
        if let Some(owner) = self.owners.get_mut(identity) {
            owner.bytes -= stored.size;
            if let Some(at) = owner.order.iter().position(|id| id == run_id) {
                owner.order.remove(at);
            }
            if owner.order.is_empty() {
                self.owners.remove(identity);
            }
        }
        Some(stored)
    }

    /// Evicts the oldest run of `identity`; whether there was one.
    fn evict_oldest_of(&mut self, identity: &str) -> bool {
        let Some(oldest) = self.owners.get(identity).and_then(|o| o.order.front().cloned()) else {
            return false;
        };
        self.remove_run(identity, &oldest).is_some()
    }

    /// The identity holding the most runs (then the most bytes, then the smallest name): the
    /// one that gives way when the whole store is full.
    fn largest_owner(&self) -> Option<String> {
        self.owners
            .iter()
            .max_by(|(a, x), (b, y)| {
                (x.order.len(), x.bytes)
                    .cmp(&(y.order.len(), y.bytes))
                    .then_with(|| b.cmp(a))
            })
            .map(|(identity, _)| identity.clone())
    }

    /// The store-wide backstop of runs: while the store (with a new record of `incoming`
    /// bytes, when one is coming) is over its bounds, the largest owner gives way.
    fn backstop(&mut self, limits: &StoreLimits, incoming: Option<usize>) {
        let (count, bytes) = incoming.map_or((0, 0), |size| (1, size));
        while self.runs.len() + count > limits.max_runs || self.bytes + bytes > limits.max_bytes {
            let Some(largest) = self.largest_owner() else { break };
            if !self.evict_oldest_of(&largest) {
                break;
            }
        }
    }

    /// The store-wide backstop of idempotency records: at most `max`, the identity holding
    /// the most giving way.
    fn backstop_keys(&mut self, max: usize) {
        while self.idempotency.len() > max {
            let largest = self
                .keys
                .iter()
                .max_by(|(a, x), (b, y)| x.len().cmp(&y.len()).then_with(|| b.cmp(a)))
                .map(|(identity, _)| identity.clone());
            let Some(largest) = largest else { break };
            if !self.evict_oldest_key_of(&largest) {
                break;
            }
        }
    }

    /// Evicts the oldest idempotency record of `identity`; whether there was one.
    fn evict_oldest_key_of(&mut self, identity: &str) -> bool {
        let Some(keys) = self.keys.get_mut(identity) else {
            return false;
        };
        let Some(oldest) = keys.pop_front() else { return false };
        if keys.is_empty() {
            self.keys.remove(identity);
        }
        self.idempotency.remove(&(identity.to_owned(), oldest)).is_some()
    }

    /// Removes the idempotency record `key` of `identity`.
    fn remove_key(&mut self, identity: &str, key: &str) {
        self.idempotency.remove(&(identity.to_owned(), key.to_owned()));
        if let Some(keys) = self.keys.get_mut(identity) {
            keys.retain(|k| k != key);
            if keys.is_empty() {
                self.keys.remove(identity);
            }
        }
    }
}

/// A boxed future, for the dyn-compatible [`RunStore`] trait.
pub type StoreFuture<'a, T> = Pin<Box<dyn Future<Output = Result<T, StoreError>> + Send + 'a>>;

/// Why a store could not do what it was asked (the engine answers the request with an
/// `internal` request error naming it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoreError(pub String);

impl std::fmt::Display for StoreError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "run store: {}", self.0)
    }
}

impl std::error::Error for StoreError {}

/// What a store holds now.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct StoreSizes {
    /// Run records.
    pub runs: usize,
    /// Their bytes, as [`RunRecord::size`] counts them.
    pub bytes: usize,
    /// Idempotency records.
    pub idempotency: usize,
}

/// A store of run records and idempotency records, keyed by the identity that may see them.
/// [`MemoryStore`] is the default; the features `sqlite` and `postgres` add stores that
/// outlive a process and span many.
///
/// The contract, which [`contract`](super::store_contract::contract) checks on any
/// implementation: a record is found only under the identity that stored it (any other gets
/// the same `None` as for an unknown id); records expire with their retention, checked on
/// every read, and session-bound ones go with [`RunStore::forget_session`]; one identity
/// keeps at most its share ([`StoreLimits`]), its own oldest evicted first and nobody
/// else's; after a [`RunStore::sweep`] at the latest, the whole store is within
/// [`StoreLimits::max_runs`] and [`StoreLimits::max_bytes`], the identity holding the most
/// giving way first; a record larger than the byte bound alone is not kept; the idempotency
/// records answer replay, conflict or miss, per identity, within their own bounds.
pub trait RunStore: Send + Sync + 'static {
    /// The store's bounds.
    fn limits(&self) -> StoreLimits;
    /// Keeps `record` of `run_id`, visible to `identity` only, until `expiry`, evicting
    /// `identity`'s own oldest records while it is past its share. `Ok(false)`: not kept
    /// (larger than the byte bound alone).
    fn put<'a>(
        &'a self,
        identity: &'a str,
        run_id: &'a str,
        record: RunRecord,
        expiry: Expiry,
    ) -> StoreFuture<'a, bool>;
    /// The record of `run_id` if `identity` stored it and it has not expired.
    fn get<'a>(&'a self, identity: &'a str, run_id: &'a str) -> StoreFuture<'a, Option<RunRecord>>;
    /// Forgets the session-bound records and the idempotency records of `identity`.
    fn forget_session<'a>(&'a self, identity: &'a str) -> StoreFuture<'a, ()>;
    /// Removes every expired record, then applies the store-wide backstop (the identity
    /// holding the most gives way while the store is over its bounds); returns how many
    /// expired records were removed.
    fn sweep(&self) -> StoreFuture<'_, usize>;
    /// Looks up idempotency `key` of `identity` for the request whose canonical form is
    /// `fingerprint`.
    fn idempotency<'a>(
        &'a self,
        identity: &'a str,
        key: &'a str,
        fingerprint: &'a str,
    ) -> StoreFuture<'a, IdempotencyHit>;
    /// Remembers the `response` to `key` of `identity` for the request `fingerprint`.
    fn remember<'a>(
        &'a self,
        identity: &'a str,
        key: &'a str,
        fingerprint: &'a str,
        response: &'a ExecuteResponse,
    ) -> StoreFuture<'a, ()>;
    /// What the store holds now.
    fn sizes(&self) -> StoreFuture<'_, StoreSizes>;

    /// Whether the store answers (the HTTP router's `GET /readyz`): a cheap round trip. The
    /// default asks for [`RunStore::sizes`]; database stores answer with a trivial query.
    fn ping(&self) -> StoreFuture<'_, ()> {
        Box::pin(async move { self.sizes().await.map(|_| ()) })
    }
}

/// The bounded in-memory store (see the module docs): shared by every session and request of
/// one engine process, gone with it.
pub struct MemoryStore {
    limits: StoreLimits,
    inner: Mutex<Inner>,
}

impl std::fmt::Debug for MemoryStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let (runs, bytes, idempotency) = self.counts();
        f.debug_struct("MemoryStore")
            .field("limits", &self.limits)
            .field("runs", &runs)
            .field("bytes", &bytes)
            .field("idempotency", &idempotency)
            .finish()
    }
}

/// The outcome of looking up an idempotency key.
#[derive(Debug, Clone, PartialEq)]
pub enum IdempotencyHit {
    /// No record: run, then [`RunStore::remember`].
    Miss,
    /// The same key and request ran before: answer this again.
    Replay(Box<ExecuteResponse>),
    /// The same key came with another request: `idempotency_conflict`.
    Conflict,
}

impl MemoryStore {
    /// An empty store with `limits`.
    pub fn new(limits: StoreLimits) -> Self {
        Self {
            limits,
            inner: Mutex::new(Inner::default()),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        // A panic while holding the lock leaves consistent data (every update is a whole
        // insert or remove), so a poisoned lock is still usable.
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// (runs, bytes, idempotency records) kept now.
    fn counts(&self) -> (usize, usize, usize) {
        let inner = self.lock();
        (inner.runs.len(), inner.bytes, inner.idempotency.len())
    }

    /// Keeps `record` of `run_id`, visible to `identity` only, until `expiry`; evicts the
    /// oldest records while over the bounds. Returns whether it was kept (a record larger
    /// than the byte bound alone is not).
    fn put_now(&self, identity: &str, run_id: &str, record: RunRecord, expiry: Expiry) -> bool {
        let size = record.size();
        if !self.limits.admits(size) {
            return false;
        }
        let mut inner = self.lock();
        let now = SystemTime::now();
        inner.remove_run(identity, run_id);
        // This identity's expired runs go first; then, past its share, its own oldest.
        let expired: Vec<String> = inner
            .owners
            .get(identity)
            .map(|owner| {
                owner
                    .order
                    .iter()
                    .filter(|id| {
                        let key = (identity.to_owned(), (*id).clone());
                        inner
                            .runs
                            .get(&key)
                            .is_some_and(|s| matches!(s.expiry, Expiry::At(at) if at <= now))
                    })
                    .cloned()
                    .collect()
            })
            .unwrap_or_default();
        for id in expired {
            inner.remove_run(identity, &id);
        }
        while inner
            .owners
            .get(identity)
            .is_some_and(|o| self.limits.share_is_full(o.order.len(), o.bytes, size))
        {
            if !inner.evict_oldest_of(identity) {
                break;
            }
        }
        inner.backstop(&self.limits, Some(size));
        inner.bytes += size;
        let owner = inner.owners.entry(identity.to_owned()).or_default();
        owner.order.push_back(run_id.to_owned());
        owner.bytes += size;
        inner.runs.insert(
            (identity.to_owned(), run_id.to_owned()),
            Stored { record, expiry, size },
        );
        true
    }

    /// The record of `run_id` if `identity` stored it and it has not expired; `None` for an
    /// unknown id, an expired one and one another identity stored alike.
    fn get_now(&self, identity: &str, run_id: &str) -> Option<RunRecord> {
        let mut inner = self.lock();
        let key = (identity.to_owned(), run_id.to_owned());
        let expired = match inner.runs.get(&key)?.expiry {
            Expiry::At(at) => SystemTime::now() >= at,
            Expiry::WithSession => false,
        };
        if expired {
            inner.remove_run(identity, run_id);
            return None;
        }
        inner.runs.get(&key).map(|s| s.record.clone())
    }

    /// Forgets every session-bound record of `identity` (its session ended).
    fn forget_now(&self, identity: &str) {
        let mut inner = self.lock();
        let gone: Vec<String> = inner
            .owners
            .get(identity)
            .map(|owner| {
                owner
                    .order
                    .iter()
                    .filter(|id| {
                        let key = (identity.to_owned(), (*id).clone());
                        inner.runs.get(&key).is_some_and(|s| s.expiry == Expiry::WithSession)
                    })
                    .cloned()
                    .collect()
            })
            .unwrap_or_default();
        for id in gone {
            inner.remove_run(identity, &id);
        }
        if let Some(keys) = inner.keys.remove(identity) {
            for key in keys {
                inner.idempotency.remove(&(identity.to_owned(), key));
            }
        }
    }

    fn sweep_now(&self) -> usize {
        sweep(&mut self.lock(), &self.limits, SystemTime::now())
    }

    /// Looks up `key` of `identity` for a request whose canonical form is `fingerprint`.
    fn idempotency_now(&self, identity: &str, key: &str, fingerprint: &str) -> IdempotencyHit {
        let mut inner = self.lock();
        let now = SystemTime::now();
        let slot = (identity.to_owned(), key.to_owned());
        match inner.idempotency.get(&slot) {
            None => IdempotencyHit::Miss,
            Some(record) if record.expires <= now => {
                inner.remove_key(identity, key);
                IdempotencyHit::Miss
            }
            Some(record) if record.fingerprint == fingerprint => {
                IdempotencyHit::Replay(Box::new(record.response.clone()))
            }
            Some(_) => IdempotencyHit::Conflict,
        }
    }

    /// Remembers the `response` to `key` of `identity` for the request `fingerprint`.
    fn remember_now(&self, identity: &str, key: &str, fingerprint: &str, response: &ExecuteResponse) {
        if self.limits.max_idempotency == 0 || self.limits.max_idempotency_per_identity == 0 {
            return;
        }
        let mut inner = self.lock();
        let slot = (identity.to_owned(), key.to_owned());
        inner.remove_key(identity, key);
        while inner
            .keys
            .get(identity)
            .is_some_and(|keys| keys.len() >= self.limits.max_idempotency_per_identity)
        {
            if !inner.evict_oldest_key_of(identity) {
                break;
            }
        }
        // Room for this one within the store-wide bound.
        inner.backstop_keys(self.limits.max_idempotency - 1);
        inner
            .keys
            .entry(identity.to_owned())
            .or_default()
            .push_back(key.to_owned());
        inner.idempotency.insert(
            slot,
            Idempotent {
                fingerprint: fingerprint.to_owned(),
                response: response.clone(),
                expires: SystemTime::now() + self.limits.idempotency_ttl,
            },
        );
    }
}

fn sweep(inner: &mut Inner, limits: &StoreLimits, now: SystemTime) -> usize {
    let expired: Vec<(String, String)> = inner
        .runs
        .iter()
        .filter(|(_, stored)| matches!(stored.expiry, Expiry::At(at) if at <= now))
        .map(|(key, _)| key.clone())
        .collect();
    for (identity, run_id) in &expired {
        inner.remove_run(identity, run_id);
    }
    let stale: Vec<(String, String)> = inner
        .idempotency
        .iter()
        .filter(|(_, record)| record.expires <= now)
        .map(|(slot, _)| slot.clone())
        .collect();
    for (identity, key) in &stale {
        inner.remove_key(identity, key);
    }
    inner.backstop(limits, None);
    inner.backstop_keys(limits.max_idempotency);
    expired.len()
}

fn ready<'a, T: Send + 'a>(value: T) -> StoreFuture<'a, T> {
    Box::pin(std::future::ready(Ok(value)))
}

impl RunStore for MemoryStore {
    fn limits(&self) -> StoreLimits {
        self.limits
    }

    fn put<'a>(
        &'a self,
        identity: &'a str,
        run_id: &'a str,
        record: RunRecord,
        expiry: Expiry,
    ) -> StoreFuture<'a, bool> {
        ready(self.put_now(identity, run_id, record, expiry))
    }

    fn get<'a>(&'a self, identity: &'a str, run_id: &'a str) -> StoreFuture<'a, Option<RunRecord>> {
        ready(self.get_now(identity, run_id))
    }

    fn forget_session<'a>(&'a self, identity: &'a str) -> StoreFuture<'a, ()> {
        self.forget_now(identity);
        ready(())
    }

    fn sweep(&self) -> StoreFuture<'_, usize> {
        ready(self.sweep_now())
    }

    fn idempotency<'a>(
        &'a self,
        identity: &'a str,
        key: &'a str,
        fingerprint: &'a str,
    ) -> StoreFuture<'a, IdempotencyHit> {
        ready(self.idempotency_now(identity, key, fingerprint))
    }

    fn remember<'a>(
        &'a self,
        identity: &'a str,
        key: &'a str,
        fingerprint: &'a str,
        response: &'a ExecuteResponse,
    ) -> StoreFuture<'a, ()> {
        self.remember_now(identity, key, fingerprint, response);
        ready(())
    }

    fn sizes(&self) -> StoreFuture<'_, StoreSizes> {
        let (runs, bytes, idempotency) = self.counts();
        ready(StoreSizes {
            runs,
            bytes,
            idempotency,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn run_ids_are_128_random_bits() {
        let ids: std::collections::BTreeSet<String> = (0..1000).map(|_| new_run_id()).collect();
        assert_eq!(ids.len(), 1000);
        for id in &ids {
            assert_eq!(id.len(), 36, "{id}");
            assert!(id[4..].chars().all(|c| c.is_ascii_hexdigit()), "{id}");
        }
        // No shared prefix beyond chance: the first 8 hex digits of 1000 ids are distinct.
        let prefixes: std::collections::BTreeSet<&str> = ids.iter().map(|id| &id[4..12]).collect();
        assert!(prefixes.len() > 990, "{}", prefixes.len());
    }

    #[test]
    fn the_memory_store_keeps_the_contract() {
        let outcome = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap()
            .block_on(super::super::store_contract::contract(|limits| {
                Box::pin(
                    async move { Ok(std::sync::Arc::new(MemoryStore::new(limits)) as std::sync::Arc<dyn RunStore>) },
                )
            }));
        if let Err(violations) = outcome {
            panic!("{}", violations.join("\n"));
        }
    }
}
