//! Runs (Part III 4.3, 8.1, 8.4): unguessable run ids, and the bounded in-memory store of run
//! records and idempotency records, every record keyed by the identity that may see it.
//!
//! - a run id carries 128 random bits from the operating system (`getrandom`);
//! - a record is found only under the identity that stored it: any other identity gets the
//!   same `None` as for an unknown id (the handler answers both with one `not_found`);
//! - records expire with their retention (checked on every read, and swept on every write);
//!   session-bound records go when their session does ([`RunStore::forget_session`]);
//! - at most [`StoreLimits::max_runs`] records and [`StoreLimits::max_bytes`] of them are
//!   kept, the oldest evicted first; the idempotency records have a count bound of their own.

use std::collections::{HashMap, VecDeque};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::{ExecuteResponse, Outcome, TraceLevel, TraceStep};

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
            hasher.write_u128(Instant::now().elapsed().as_nanos());
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

/// The bounds of a [`RunStore`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct StoreLimits {
    /// At most this many run records (default 10,000).
    pub max_runs: usize,
    /// At most this many bytes of run records, as serialized JSON (default 64 MiB). A record
    /// larger than this alone is not kept.
    pub max_bytes: usize,
    /// At most this many idempotency records (default 10,000).
    pub max_idempotency: usize,
    /// How long an idempotency record is kept (default 24 hours).
    pub idempotency_ttl: Duration,
}

impl Default for StoreLimits {
    fn default() -> Self {
        Self {
            max_runs: 10_000,
            max_bytes: 64 * 1024 * 1024,
            max_idempotency: 10_000,
            idempotency_ttl: Duration::from_secs(24 * 3600),
        }
    }
}

impl StoreLimits {
    /// The default limits with `max_runs` runs and `max_bytes` bytes.
    pub fn new(max_runs: usize, max_bytes: usize) -> Self {
        Self {
            max_runs,
            max_bytes,
            ..Self::default()
        }
    }
}

/// What is kept of one Run for trace fetch.
#[derive(Debug, Clone, PartialEq)]
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

    fn size(&self) -> usize {
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
    /// At this instant (a duration retention).
    At(Instant),
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
    expires: Instant,
}

#[derive(Default)]
struct Inner {
    runs: HashMap<(String, String), Stored>,
    order: VecDeque<(String, String)>,
    bytes: usize,
    idempotency: HashMap<(String, String), Idempotent>,
    idempotency_order: VecDeque<(String, String)>,
}

/// The bounded in-memory store of runs and idempotency records (see the module docs). Shared
/// by every session and request of one engine process.
pub struct RunStore {
    limits: StoreLimits,
    inner: Mutex<Inner>,
}

impl std::fmt::Debug for RunStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let (runs, bytes, idempotency) = self.sizes();
        f.debug_struct("RunStore")
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

impl RunStore {
    /// An empty store with `limits`.
    pub fn new(limits: StoreLimits) -> Self {
        Self {
            limits,
            inner: Mutex::new(Inner::default()),
        }
    }

    /// The store's limits.
    pub fn limits(&self) -> StoreLimits {
        self.limits
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        // A panic while holding the lock leaves consistent data (every update is a whole
        // insert or remove), so a poisoned lock is still usable.
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// (runs, bytes, idempotency records) kept now.
    pub fn sizes(&self) -> (usize, usize, usize) {
        let inner = self.lock();
        (inner.runs.len(), inner.bytes, inner.idempotency.len())
    }

    /// Keeps `record` of `run_id`, visible to `identity` only, until `expiry`; evicts the
    /// oldest records while over the bounds. Returns whether it was kept (a record larger
    /// than the byte bound alone is not).
    pub fn put(&self, identity: &str, run_id: &str, record: RunRecord, expiry: Expiry) -> bool {
        let size = record.size();
        if size > self.limits.max_bytes || self.limits.max_runs == 0 {
            return false;
        }
        let mut inner = self.lock();
        sweep(&mut inner, Instant::now());
        let key = (identity.to_owned(), run_id.to_owned());
        if let Some(old) = inner.runs.remove(&key) {
            inner.bytes -= old.size;
            inner.order.retain(|k| k != &key);
        }
        while inner.runs.len() >= self.limits.max_runs || inner.bytes + size > self.limits.max_bytes {
            let Some(oldest) = inner.order.pop_front() else { break };
            if let Some(evicted) = inner.runs.remove(&oldest) {
                inner.bytes -= evicted.size;
            }
        }
        inner.bytes += size;
        inner.order.push_back(key.clone());
        inner.runs.insert(key, Stored { record, expiry, size });
        true
    }

    /// The record of `run_id` if `identity` stored it and it has not expired; `None` for an
    /// unknown id, an expired one and one another identity stored alike.
    pub fn get(&self, identity: &str, run_id: &str) -> Option<RunRecord> {
        let mut inner = self.lock();
        let key = (identity.to_owned(), run_id.to_owned());
        let expired = match inner.runs.get(&key)?.expiry {
            Expiry::At(at) => Instant::now() >= at,
            Expiry::WithSession => false,
        };
        if expired {
            if let Some(gone) = inner.runs.remove(&key) {
                inner.bytes -= gone.size;
                inner.order.retain(|k| k != &key);
            }
            return None;
        }
        inner.runs.get(&key).map(|s| s.record.clone())
    }

    /// Forgets every session-bound record of `identity` (its session ended).
    pub fn forget_session(&self, identity: &str) {
        let mut inner = self.lock();
        let gone: Vec<(String, String)> = inner
            .runs
            .iter()
            .filter(|((owner, _), stored)| owner == identity && stored.expiry == Expiry::WithSession)
            .map(|(key, _)| key.clone())
            .collect();
        for key in gone {
            if let Some(stored) = inner.runs.remove(&key) {
                inner.bytes -= stored.size;
            }
            inner.order.retain(|k| k != &key);
        }
        inner.idempotency.retain(|(owner, _), _| owner != identity);
        inner.idempotency_order.retain(|(owner, _)| owner != identity);
    }

    /// Removes every expired record.
    pub fn sweep(&self) {
        sweep(&mut self.lock(), Instant::now());
    }

    /// Looks up `key` of `identity` for a request whose canonical form is `fingerprint`.
    pub fn idempotency(&self, identity: &str, key: &str, fingerprint: &str) -> IdempotencyHit {
        let mut inner = self.lock();
        let now = Instant::now();
        let slot = (identity.to_owned(), key.to_owned());
        match inner.idempotency.get(&slot) {
            None => IdempotencyHit::Miss,
            Some(record) if record.expires <= now => {
                inner.idempotency.remove(&slot);
                inner.idempotency_order.retain(|k| k != &slot);
                IdempotencyHit::Miss
            }
            Some(record) if record.fingerprint == fingerprint => {
                IdempotencyHit::Replay(Box::new(record.response.clone()))
            }
            Some(_) => IdempotencyHit::Conflict,
        }
    }

    /// Remembers the `response` to `key` of `identity` for the request `fingerprint`.
    pub fn remember(&self, identity: &str, key: &str, fingerprint: &str, response: &ExecuteResponse) {
        if self.limits.max_idempotency == 0 {
            return;
        }
        let mut inner = self.lock();
        let slot = (identity.to_owned(), key.to_owned());
        if inner.idempotency.contains_key(&slot) {
            inner.idempotency_order.retain(|k| k != &slot);
        }
        while inner.idempotency.len() >= self.limits.max_idempotency {
            let Some(oldest) = inner.idempotency_order.pop_front() else {
                break;
            };
            inner.idempotency.remove(&oldest);
        }
        inner.idempotency_order.push_back(slot.clone());
        inner.idempotency.insert(
            slot,
            Idempotent {
                fingerprint: fingerprint.to_owned(),
                response: response.clone(),
                expires: Instant::now() + self.limits.idempotency_ttl,
            },
        );
    }
}

fn sweep(inner: &mut Inner, now: Instant) {
    let expired: Vec<(String, String)> = inner
        .runs
        .iter()
        .filter(|(_, stored)| matches!(stored.expiry, Expiry::At(at) if at <= now))
        .map(|(key, _)| key.clone())
        .collect();
    if expired.is_empty() {
        return;
    }
    for key in &expired {
        if let Some(stored) = inner.runs.remove(key) {
            inner.bytes -= stored.size;
        }
    }
    inner.order.retain(|k| inner.runs.contains_key(k));
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(output: &str) -> RunRecord {
        RunRecord::new(
            "calc/v1",
            Outcome::success("success"),
            Some(output.into()),
            Vec::new(),
            TraceLevel::Full,
        )
    }

    fn later() -> Expiry {
        Expiry::At(Instant::now() + Duration::from_secs(3600))
    }

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
    fn a_record_is_visible_only_to_the_identity_that_stored_it() {
        let store = RunStore::new(StoreLimits::default());
        assert!(store.put("alice", "run_1", record("a"), later()));
        assert_eq!(store.get("alice", "run_1"), Some(record("a")));
        assert_eq!(store.get("bob", "run_1"), None, "another identity: as unknown");
        assert_eq!(store.get("alice", "run_2"), None);
    }

    #[test]
    fn expired_records_are_gone_on_read_and_swept() {
        let store = RunStore::new(StoreLimits::default());
        store.put("a", "run_1", record("x"), Expiry::At(Instant::now()));
        assert_eq!(store.get("a", "run_1"), None);
        store.put("a", "run_2", record("x"), Expiry::At(Instant::now()));
        store.sweep();
        assert_eq!(store.sizes().0, 0);
        assert_eq!(store.sizes().1, 0, "bytes accounted");
    }

    #[test]
    fn bounds_evict_the_oldest() {
        let store = RunStore::new(StoreLimits::new(3, 1 << 20));
        for i in 0..5 {
            store.put("a", &format!("run_{i}"), record("x"), later());
        }
        assert_eq!(store.sizes().0, 3);
        assert_eq!(store.get("a", "run_0"), None);
        assert!(store.get("a", "run_4").is_some());
        let small = RunStore::new(StoreLimits::new(100, 1000));
        for i in 0..50 {
            small.put("a", &format!("run_{i}"), record(&"y".repeat(100)), later());
        }
        let (runs, bytes, _) = small.sizes();
        assert!(bytes <= 1000 && runs < 50, "{runs} runs, {bytes} bytes");
        assert!(
            !small.put("a", "huge", record(&"z".repeat(2000)), later()),
            "larger than the bound alone"
        );
    }

    #[test]
    fn session_records_go_with_their_session() {
        let store = RunStore::new(StoreLimits::default());
        store.put("s1", "run_1", record("x"), Expiry::WithSession);
        store.put("s1", "run_2", record("x"), later());
        store.put("s2", "run_3", record("x"), Expiry::WithSession);
        store.forget_session("s1");
        assert_eq!(store.get("s1", "run_1"), None);
        assert!(
            store.get("s1", "run_2").is_some(),
            "a duration retention outlives the session"
        );
        assert!(store.get("s2", "run_3").is_some());
    }

    #[test]
    fn idempotency_replays_the_same_request_and_refuses_another() {
        let store = RunStore::new(StoreLimits::default());
        let response = ExecuteResponse::new("run_1", Outcome::success("success"));
        assert_eq!(store.idempotency("a", "k", "f1"), IdempotencyHit::Miss);
        store.remember("a", "k", "f1", &response);
        assert_eq!(
            store.idempotency("a", "k", "f1"),
            IdempotencyHit::Replay(Box::new(response))
        );
        assert_eq!(store.idempotency("a", "k", "f2"), IdempotencyHit::Conflict);
        assert_eq!(
            store.idempotency("b", "k", "f1"),
            IdempotencyHit::Miss,
            "keys are per identity"
        );
    }
}
