//! The Postgres run store (feature `postgres`): runs shared by engine processes on several
//! hosts. Its tables live in a schema of their own (default `pilotage`). Connections are plain
//! TCP or a Unix socket (no TLS: put the database on a trusted network or a socket).
//!
//! What this module owns:
//!
//! - **The pool.** Every call takes a connection from a `deadpool-postgres` pool of
//!   [`PostgresOptions::pool_size`] connections (default 16), waiting at most
//!   [`PostgresOptions::wait_timeout`] for one; there is no process-wide lock in front of
//!   reads or writes. Each connection is opened with a [`PostgresOptions::connect_timeout`] and
//!   a server-side `statement_timeout` ([`PostgresOptions::statement_timeout`]); a call whose
//!   connection stops answering altogether fails after twice that and a second, and the
//!   connection is dropped.
//! - **The locks.** The schema is created and migrated from [`MIGRATIONS`] under a
//!   transaction-scoped advisory lock of the schema, taken only by `connect`: a second engine
//!   starting at once waits, then finds the version done; a database at a newer version than
//!   this engine knows is refused, naming both. A write locks one row, its identity's in
//!   `owners` (`SELECT ... FOR UPDATE`), which keeps what the identity holds (runs, bytes,
//!   idempotency records): it evicts that identity's own oldest past its share
//!   ([`StoreLimits::share_is_full`]) and touches no other identity's rows, so writes of
//!   different identities run side by side, and a write costs the same whatever the table
//!   holds (no aggregate over it). Every deletion, by a write, [`RunStore::forget_session`]
//!   or the sweep, keeps `owners` exact; a row that reaches zero is deleted.
//! - **The backstop.** The store-wide bounds ([`StoreLimits::max_runs`], `max_bytes`,
//!   `max_idempotency`) are kept by [`RunStore::sweep`]: expired rows go, then, while over, the
//!   identity holding the most runs (ties: the most bytes, then the identity) gives way its
//!   oldest; likewise for idempotency records. A sweep runs in one transaction holding the
//!   schema's *sweep* advisory lock (`pg_try_advisory_xact_lock`): when another process is
//!   sweeping, it returns at once. Each store also sweeps after every [`SWEEP_EVERY`]th write
//!   of its process, so that an engine without the HTTP router's periodic sweep (stdio) keeps
//!   the backstop too. Which identities give way how many is worked out from `owners`, so a
//!   sweep is a few statements per identity that gives way, not per record. No deadlock: a
//!   record's rows are only touched by a holder of its identity's owner row, a write holds
//!   one owner row, and only the sweep (one at a time per schema) holds several.
//! - **Recovery.** A broken connection is not handed out again (the pool checks it on the
//!   way out) and a new one is made when needed: while the database is down every call fails
//!   within the wait and connect timeouts with a [`StoreError`]; when it is back, calls succeed
//!   again on the same store, without a restart.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, SystemTime};

use deadpool_postgres::{Manager, ManagerConfig, Object, Pool, RecyclingMethod, Runtime, Transaction};
use tokio_postgres::types::ToSql;
use tokio_postgres::NoTls;

use super::runs::{
    millis, Expiry, IdempotencyHit, RunRecord, RunStore, StoreError, StoreFuture, StoreLimits, StoreSizes,
};
use pilotage_types::ExecuteResponse;

/// The schema, one migration per version; `{schema}` is the store's schema name. A migration
/// is never edited once released: a change is a new one, appended.
pub const MIGRATIONS: &[&str] = &[
    "
    CREATE TABLE {schema}.runs (
        seq BIGSERIAL PRIMARY KEY,
        identity TEXT NOT NULL,
        run_id TEXT NOT NULL,
        record TEXT NOT NULL,
        size BIGINT NOT NULL,
        expires_at BIGINT,
        UNIQUE (identity, run_id)
    );
    CREATE INDEX ON {schema}.runs (expires_at);
    CREATE TABLE {schema}.idempotency (
        seq BIGSERIAL PRIMARY KEY,
        identity TEXT NOT NULL,
        key TEXT NOT NULL,
        fingerprint TEXT NOT NULL,
        response TEXT NOT NULL,
        expires_at BIGINT NOT NULL,
        UNIQUE (identity, key)
    );
",
    // Version 2: what each identity holds, kept by every write, and the indexes a write of one
    // identity reads (its oldest, its expired).
    "
    CREATE TABLE {schema}.owners (
        identity TEXT PRIMARY KEY,
        runs BIGINT NOT NULL,
        bytes BIGINT NOT NULL,
        idempotency BIGINT NOT NULL
    );
    INSERT INTO {schema}.owners (identity, runs, bytes, idempotency)
        SELECT identity, SUM(runs)::BIGINT, SUM(bytes)::BIGINT, SUM(idempotency)::BIGINT FROM (
            SELECT identity, COUNT(*) AS runs, SUM(size) AS bytes, 0 AS idempotency
                FROM {schema}.runs GROUP BY identity
            UNION ALL
            SELECT identity, 0, 0, COUNT(*) FROM {schema}.idempotency GROUP BY identity
        ) AS held GROUP BY identity;
    CREATE INDEX ON {schema}.runs (identity, seq);
    CREATE INDEX ON {schema}.runs (identity, expires_at);
    CREATE INDEX ON {schema}.idempotency (identity, seq);
    CREATE INDEX ON {schema}.idempotency (identity, expires_at);
    CREATE INDEX ON {schema}.idempotency (expires_at);
",
];

/// Every this many writes ([`RunStore::put`], [`RunStore::remember`]) of one store, it runs
/// [`RunStore::sweep`] itself after the write.
pub const SWEEP_EVERY: usize = 256;

/// At most this many rounds in one sweep's backstop (each evicts from every identity that gives
/// way); the next sweep goes on where it stopped.
const BACKSTOP_ROUNDS: usize = 16;

/// A [`StoreError`] naming `error` and its causes (tokio-postgres says `db error` and puts the
/// server's message in the cause).
fn failed(error: impl std::error::Error) -> StoreError {
    StoreError(format!("postgres: {}", describe(error)))
}

/// `error` and its causes.
fn describe(error: impl std::error::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        let cause_text = cause.to_string();
        if !text.contains(&cause_text) {
            text.push_str(": ");
            text.push_str(&cause_text);
        }
        source = cause.source();
    }
    text
}

/// How a [`PostgresStore`] connects: its schema, pool and timeouts, and the store's bounds.
/// `PostgresOptions::new().pool_size(32).limits(limits)`.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct PostgresOptions {
    /// The schema of the store's tables (default `pilotage`): lowercase letters, digits and
    /// `_`, not starting with a digit, at most 63 bytes.
    pub schema: String,
    /// At most this many connections at once (default 16).
    pub pool_size: usize,
    /// How long a call waits for a free connection before it fails (default 5 s).
    pub wait_timeout: Duration,
    /// How long opening a connection may take (default 3 s).
    pub connect_timeout: Duration,
    /// The server-side `statement_timeout` of every connection (default 5 s).
    pub statement_timeout: Duration,
    /// The store's bounds.
    pub limits: StoreLimits,
}

impl Default for PostgresOptions {
    fn default() -> Self {
        Self {
            schema: "pilotage".to_owned(),
            pool_size: 16,
            wait_timeout: Duration::from_secs(5),
            connect_timeout: Duration::from_secs(3),
            statement_timeout: Duration::from_secs(5),
            limits: StoreLimits::default(),
        }
    }
}

impl PostgresOptions {
    /// The defaults: schema `pilotage`, 16 connections, waits of 5 s for a connection, 3 s to
    /// open one, 5 s per statement, and the default [`StoreLimits`].
    pub fn new() -> Self {
        Self::default()
    }

    /// Sets the schema of the store's tables.
    pub fn schema(mut self, schema: impl Into<String>) -> Self {
        self.schema = schema.into();
        self
    }

    /// Sets the number of connections (at least 1).
    pub fn pool_size(mut self, connections: usize) -> Self {
        self.pool_size = connections;
        self
    }

    /// Sets how long a call waits for a free connection.
    pub fn wait_timeout(mut self, timeout: Duration) -> Self {
        self.wait_timeout = timeout;
        self
    }

    /// Sets how long opening a connection may take.
    pub fn connect_timeout(mut self, timeout: Duration) -> Self {
        self.connect_timeout = timeout;
        self
    }

    /// Sets the server-side `statement_timeout` of every connection.
    pub fn statement_timeout(mut self, timeout: Duration) -> Self {
        self.statement_timeout = timeout;
        self
    }

    /// Sets the store's bounds.
    pub fn limits(mut self, limits: StoreLimits) -> Self {
        self.limits = limits;
        self
    }
}

/// The store's statements, written once for its schema (each is prepared once per connection).
struct Sql {
    ensure_owner: String,
    lock_owner: String,
    set_owner: String,
    drop_owner: String,
    clear_runs: String,
    evict_runs: String,
    recount_runs: String,
    insert_run: String,
    get_run: String,
    forget_runs: String,
    clear_keys: String,
    evict_keys: String,
    recount_keys: String,
    insert_key: String,
    get_key: String,
    forget_keys: String,
    expired_owners: String,
    lock_owners: String,
    expire_runs: String,
    expire_keys: String,
    drop_empty_owners: String,
    totals: String,
    all_owners: String,
    sizes: String,
}

impl Sql {
    fn new(schema: &str) -> Self {
        let owners = format!("{schema}.owners");
        let runs = format!("{schema}.runs");
        let keys = format!("{schema}.idempotency");
        Self {
            ensure_owner: format!(
                "INSERT INTO {owners} (identity, runs, bytes, idempotency) VALUES ($1, 0, 0, 0) ON CONFLICT (identity) DO NOTHING"
            ),
            lock_owner: format!("SELECT runs, bytes, idempotency FROM {owners} WHERE identity = $1 FOR UPDATE"),
            set_owner: format!("UPDATE {owners} SET runs = $2, bytes = $3, idempotency = $4 WHERE identity = $1"),
            drop_owner: format!("DELETE FROM {owners} WHERE identity = $1"),
            clear_runs: format!(
                "DELETE FROM {runs} WHERE identity = $1 AND (run_id = $2 OR expires_at <= $3) RETURNING size"
            ),
            // The oldest runs of $1 (at most $2 of them) while fewer than $3 runs or $4 bytes
            // have gone: rows that are one prefix of its runs in age order.
            evict_runs: format!(
                "DELETE FROM {runs} WHERE seq IN (
                    SELECT seq FROM (
                        SELECT seq, ROW_NUMBER() OVER w AS n, (SUM(size) OVER w - size)::BIGINT AS before
                        FROM (SELECT seq, size FROM {runs} WHERE identity = $1 ORDER BY seq LIMIT $2) AS oldest
                        WINDOW w AS (ORDER BY seq)
                    ) AS ranked WHERE n <= $3 OR before < $4
                ) RETURNING size"
            ),
            recount_runs: format!("SELECT COUNT(*), COALESCE(SUM(size), 0)::BIGINT FROM {runs} WHERE identity = $1"),
            insert_run: format!(
                "WITH added AS (
                    INSERT INTO {runs} (identity, run_id, record, size, expires_at) VALUES ($1, $2, $3, $4, $5)
                ) UPDATE {owners} SET runs = $6, bytes = $7 WHERE identity = $1"
            ),
            get_run: format!("SELECT record, expires_at FROM {runs} WHERE identity = $1 AND run_id = $2"),
            forget_runs: format!("DELETE FROM {runs} WHERE identity = $1 AND expires_at IS NULL RETURNING size"),
            clear_keys: format!("DELETE FROM {keys} WHERE identity = $1 AND (key = $2 OR expires_at <= $3)"),
            evict_keys: format!(
                "DELETE FROM {keys} WHERE seq IN (SELECT seq FROM {keys} WHERE identity = $1 ORDER BY seq LIMIT $2)"
            ),
            recount_keys: format!("SELECT COUNT(*) FROM {keys} WHERE identity = $1"),
            insert_key: format!(
                "WITH added AS (
                    INSERT INTO {keys} (identity, key, fingerprint, response, expires_at) VALUES ($1, $2, $3, $4, $5)
                ) UPDATE {owners} SET idempotency = $6 WHERE identity = $1"
            ),
            get_key: format!("SELECT fingerprint, response, expires_at FROM {keys} WHERE identity = $1 AND key = $2"),
            forget_keys: format!("DELETE FROM {keys} WHERE identity = $1"),
            expired_owners: format!(
                "SELECT identity FROM {runs} WHERE expires_at <= $1 UNION SELECT identity FROM {keys} WHERE expires_at <= $1"
            ),
            lock_owners: format!(
                "SELECT identity FROM {owners} WHERE identity = ANY($1) ORDER BY identity COLLATE \"C\" FOR UPDATE"
            ),
            expire_runs: format!(
                "WITH gone AS (
                    DELETE FROM {runs} WHERE expires_at <= $1 AND identity = ANY($2) RETURNING identity, size
                ), held AS (
                    SELECT identity, COUNT(*) AS n, SUM(size)::BIGINT AS b FROM gone GROUP BY identity
                ) UPDATE {owners} SET runs = {owners}.runs - held.n, bytes = {owners}.bytes - held.b
                FROM held WHERE {owners}.identity = held.identity RETURNING held.n"
            ),
            expire_keys: format!(
                "WITH gone AS (
                    DELETE FROM {keys} WHERE expires_at <= $1 AND identity = ANY($2) RETURNING identity
                ), held AS (
                    SELECT identity, COUNT(*) AS n FROM gone GROUP BY identity
                ) UPDATE {owners} SET idempotency = {owners}.idempotency - held.n
                FROM held WHERE {owners}.identity = held.identity RETURNING held.n"
            ),
            drop_empty_owners: format!(
                "DELETE FROM {owners} WHERE identity = ANY($1) AND runs <= 0 AND idempotency <= 0"
            ),
            totals: format!(
                "SELECT COALESCE(SUM(runs), 0)::BIGINT, COALESCE(SUM(bytes), 0)::BIGINT, COALESCE(SUM(idempotency), 0)::BIGINT FROM {owners}"
            ),
            all_owners: format!("SELECT identity, runs, bytes, idempotency FROM {owners}"),
            sizes: format!(
                "SELECT (SELECT COUNT(*) FROM {runs}), (SELECT COALESCE(SUM(size), 0)::BIGINT FROM {runs}), (SELECT COUNT(*) FROM {keys})"
            ),
        }
    }
}

/// What one identity holds, as its `owners` row says.
#[derive(Debug, Clone, Copy)]
struct Held {
    runs: i64,
    bytes: i64,
    keys: i64,
}

/// A run store in a Postgres database (see the module docs): a pool of connections, a row
/// lock per identity on writes, and the store-wide backstop in [`RunStore::sweep`].
pub struct PostgresStore {
    pool: Pool,
    schema: String,
    limits: StoreLimits,
    sql: Sql,
    /// The key of the schema's sweep advisory lock.
    sweep_lock: i64,
    /// How long a call's work may take once it has a connection (client side).
    deadline: Duration,
    /// Writes of this store since it was made (every [`SWEEP_EVERY`]th also sweeps).
    writes: AtomicUsize,
}

impl std::fmt::Debug for PostgresStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let status = self.pool.status();
        f.debug_struct("PostgresStore")
            .field("schema", &self.schema)
            .field("limits", &self.limits)
            .field("connections", &status.size)
            .field("idle", &status.available)
            .finish_non_exhaustive()
    }
}

/// A stable 63-bit key of `name` for an advisory lock.
fn lock_key(name: &str) -> i64 {
    // FNV-1a: stable across processes and versions, unlike std's hasher.
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in name.as_bytes() {
        hash ^= u64::from(*byte);
        hash = hash.wrapping_mul(0x0100_0000_01b3);
    }
    (hash >> 1) as i64
}

fn valid_schema(schema: &str) -> bool {
    schema
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_lowercase() || c == '_')
        && schema
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
        && schema.len() <= 63
}

fn held(row: tokio_postgres::Row) -> Held {
    held_at(&row, 0)
}

/// The (runs, bytes, idempotency) columns of `row` from column `at` on.
fn held_at(row: &tokio_postgres::Row, at: usize) -> Held {
    Held {
        runs: row.get(at),
        bytes: row.get(at + 1),
        keys: row.get(at + 2),
    }
}

/// One identity's `owners` row.
struct Owner {
    identity: String,
    held: Held,
}

/// Which identities give way how many records, oldest first, for `runs` records and `bytes`
/// bytes to go: one at a time, the identity holding the most records (ties: the most bytes,
/// then the identity, in byte order) gives way one, of its mean size (the bytes are an
/// estimate, which the caller measures). Sorted by identity, the order the caller locks in.
fn plan_evictions(owners: &[Owner], runs: i64, bytes: i64) -> std::collections::BTreeMap<String, i64> {
    use std::cmp::Reverse;
    let mut heap: std::collections::BinaryHeap<(i64, i64, Reverse<&str>)> = owners
        .iter()
        .filter(|owner| owner.held.runs > 0)
        .map(|owner| (owner.held.runs, owner.held.bytes, Reverse(owner.identity.as_str())))
        .collect();
    let mut plan = std::collections::BTreeMap::new();
    let (mut runs, mut bytes) = (runs, bytes);
    while runs > 0 || bytes > 0 {
        let Some((count, size, Reverse(identity))) = heap.pop() else {
            break;
        };
        let mean = size / count;
        *plan.entry(identity.to_owned()).or_insert(0) += 1;
        runs -= 1;
        bytes -= mean.max(1);
        if count > 1 {
            heap.push((count - 1, size - mean, Reverse(identity)));
        }
    }
    plan
}

fn as_count(value: i64) -> usize {
    usize::try_from(value).unwrap_or(0)
}

impl PostgresStore {
    /// Connects with `url` (`postgres://user@host:port/db`, or `host=/run/postgresql ...`) and
    /// keeps the store's tables in the schema `pilotage`, with the default
    /// [`PostgresOptions`] (16 connections).
    pub async fn connect(url: &str, limits: StoreLimits) -> Result<Self, StoreError> {
        Self::connect_with(url, PostgresOptions::new().limits(limits)).await
    }

    /// [`PostgresStore::connect`] with the tables in `schema` (lowercase letters, digits and
    /// `_`, not starting with a digit).
    pub async fn connect_in(url: &str, schema: &str, limits: StoreLimits) -> Result<Self, StoreError> {
        Self::connect_with(url, PostgresOptions::new().schema(schema).limits(limits)).await
    }

    /// Connects with `url` as `options` say, creating or migrating the schema. Fails when the
    /// database cannot be reached within the connect timeout, or when its schema is at a
    /// newer version than this engine knows.
    pub async fn connect_with(url: &str, options: PostgresOptions) -> Result<Self, StoreError> {
        let schema = options.schema.clone();
        if !valid_schema(&schema) {
            return Err(StoreError(format!(
                "`{schema}` is not a schema name this store uses (lowercase letters, digits, _)"
            )));
        }
        if options.pool_size == 0 {
            return Err(StoreError("postgres: a pool of 0 connections".to_owned()));
        }
        let mut config: tokio_postgres::Config = url.parse().map_err(failed)?;
        config.connect_timeout(options.connect_timeout);
        let statement = format!("-c statement_timeout={}", options.statement_timeout.as_millis().max(1));
        let startup = match config.get_options() {
            Some(given) if !given.is_empty() => format!("{given} {statement}"),
            _ => statement,
        };
        config.options(startup);
        if config.get_application_name().is_none() {
            config.application_name("pilotage-run-store");
        }
        let manager = Manager::from_config(
            config,
            NoTls,
            ManagerConfig {
                recycling_method: RecyclingMethod::Fast,
            },
        );
        let pool = Pool::builder(manager)
            .max_size(options.pool_size)
            .runtime(Runtime::Tokio1)
            .wait_timeout(Some(options.wait_timeout))
            .create_timeout(Some(options.connect_timeout))
            .recycle_timeout(Some(options.connect_timeout))
            .build()
            .map_err(failed)?;
        let store = Self {
            pool,
            sql: Sql::new(&schema),
            sweep_lock: lock_key(&format!("pilotage-sweep:{schema}")),
            limits: options.limits,
            deadline: options.statement_timeout * 2 + Duration::from_secs(1),
            writes: AtomicUsize::new(0),
            schema,
        };
        let mut client = store.client().await?;
        // The lock wait and the migrations may take longer than one statement usually does.
        let migrated = tokio::time::timeout(Duration::from_secs(120), migrate(&mut client, &store.schema)).await;
        match migrated {
            Ok(outcome) => outcome?,
            Err(_) => {
                drop(Object::take(client));
                return Err(StoreError(format!(
                    "postgres: schema `{}`: the migration did not finish within 120 s",
                    store.schema
                )));
            }
        }
        Ok(store)
    }

    /// A connection from the pool, within the wait and connect timeouts.
    async fn client(&self) -> Result<Object, StoreError> {
        self.pool
            .get()
            .await
            .map_err(|error| StoreError(format!("postgres: no connection: {}", describe(error))))
    }

    /// The outcome of a call's work on `client`, bounded by `deadline`: past it, the
    /// connection is dropped (not handed out again) and the call fails.
    fn settle<T>(
        &self,
        client: Object,
        deadline: Duration,
        outcome: Result<Result<T, tokio_postgres::Error>, tokio::time::error::Elapsed>,
    ) -> Result<T, StoreError> {
        match outcome {
            Ok(outcome) => outcome.map_err(failed),
            Err(_) => {
                drop(Object::take(client));
                Err(StoreError(format!(
                    "postgres: no answer within {} ms; the connection is dropped",
                    deadline.as_millis()
                )))
            }
        }
    }

    /// Whether this write is one that also sweeps.
    fn sweep_due(&self) -> bool {
        self.writes.fetch_add(1, Ordering::Relaxed) % SWEEP_EVERY == SWEEP_EVERY - 1
    }

    /// `identity`'s owner row, locked until the transaction ends; `None` when it has none.
    async fn lock_owner(
        &self,
        transaction: &Transaction<'_>,
        identity: &str,
    ) -> Result<Option<Held>, tokio_postgres::Error> {
        let lock = transaction.prepare_cached(&self.sql.lock_owner).await?;
        Ok(transaction.query_opt(&lock, &[&identity]).await?.map(held))
    }

    /// `identity`'s owner row, created at zero when it has none, locked until the transaction
    /// ends.
    async fn own(&self, transaction: &Transaction<'_>, identity: &str) -> Result<Held, tokio_postgres::Error> {
        let ensure = transaction.prepare_cached(&self.sql.ensure_owner).await?;
        let lock = transaction.prepare_cached(&self.sql.lock_owner).await?;
        // A row at zero may be deleted between the insert and the lock (its last record went
        // meanwhile): then insert again.
        let params: [&(dyn ToSql + Sync); 1] = [&identity];
        loop {
            // Pipelined: one round trip.
            let (_, row) = tokio::try_join!(
                transaction.execute(&ensure, &params),
                transaction.query_opt(&lock, &params)
            )?;
            if let Some(row) = row {
                return Ok(held(row));
            }
        }
    }

    /// Writes `held` to `identity`'s owner row, or deletes the row when it holds nothing.
    async fn set_owner(
        &self,
        transaction: &Transaction<'_>,
        identity: &str,
        held: Held,
    ) -> Result<(), tokio_postgres::Error> {
        if held.runs <= 0 && held.keys <= 0 {
            let drop = transaction.prepare_cached(&self.sql.drop_owner).await?;
            transaction.execute(&drop, &[&identity]).await?;
        } else {
            let set = transaction.prepare_cached(&self.sql.set_owner).await?;
            transaction
                .execute(&set, &[&identity, &held.runs, &held.bytes, &held.keys])
                .await?;
        }
        Ok(())
    }

    /// Evicts the oldest runs of `identity` (at most `batch`) while fewer than `runs` runs and
    /// `bytes` bytes have gone; (runs, bytes) evicted.
    async fn evict_runs(
        &self,
        transaction: &Transaction<'_>,
        identity: &str,
        batch: i64,
        runs: i64,
        bytes: i64,
    ) -> Result<(i64, i64), tokio_postgres::Error> {
        let evict = transaction.prepare_cached(&self.sql.evict_runs).await?;
        let rows = transaction.query(&evict, &[&identity, &batch, &runs, &bytes]).await?;
        Ok((rows.len() as i64, rows.iter().map(|row| row.get::<_, i64>(0)).sum()))
    }

    async fn put_on(
        &self,
        client: &mut Object,
        identity: &str,
        run_id: &str,
        text: &str,
        size: i64,
        expires: Option<i64>,
    ) -> Result<(), tokio_postgres::Error> {
        let limits = self.limits;
        let transaction = client.transaction().await?;
        let mut held = self.own(&transaction, identity).await?;
        // This identity's expired runs and the run this one replaces go first (its rows only).
        let clear = transaction.prepare_cached(&self.sql.clear_runs).await?;
        let now = millis(SystemTime::now());
        for row in transaction.query(&clear, &[&identity, &run_id, &now]).await? {
            held.runs -= 1;
            held.bytes -= row.get::<_, i64>(0);
        }
        // Past its share, the identity gives way its own oldest.
        let mut recounted = false;
        while limits.share_is_full(as_count(held.runs), as_count(held.bytes), as_count(size)) {
            let runs = held.runs - limits.max_runs_per_identity as i64 + 1;
            let bytes = held.bytes + size - limits.max_bytes_per_identity as i64;
            let (gone, freed) = self
                .evict_runs(&transaction, identity, runs.max(16), runs, bytes)
                .await?;
            if gone == 0 {
                // The row said more than there is (it cannot, unless edited by hand): count.
                if recounted {
                    break;
                }
                let recount = transaction.prepare_cached(&self.sql.recount_runs).await?;
                let row = transaction.query_one(&recount, &[&identity]).await?;
                (held.runs, held.bytes) = (row.get(0), row.get(1));
                recounted = true;
                continue;
            }
            held.runs -= gone;
            held.bytes -= freed;
        }
        let insert = transaction.prepare_cached(&self.sql.insert_run).await?;
        let (runs, bytes) = (held.runs + 1, held.bytes + size);
        transaction
            .execute(&insert, &[&identity, &run_id, &text, &size, &expires, &runs, &bytes])
            .await?;
        transaction.commit().await
    }

    async fn forget_on(&self, client: &mut Object, identity: &str) -> Result<(), tokio_postgres::Error> {
        let transaction = client.transaction().await?;
        let Some(mut held) = self.lock_owner(&transaction, identity).await? else {
            // It holds nothing.
            return transaction.commit().await;
        };
        let runs = transaction.prepare_cached(&self.sql.forget_runs).await?;
        let keys = transaction.prepare_cached(&self.sql.forget_keys).await?;
        let params: [&(dyn ToSql + Sync); 1] = [&identity];
        let (rows, keys) = tokio::try_join!(transaction.query(&runs, &params), transaction.execute(&keys, &params))?;
        held.runs -= rows.len() as i64;
        held.bytes -= rows.iter().map(|row| row.get::<_, i64>(0)).sum::<i64>();
        held.keys -= keys as i64;
        self.set_owner(&transaction, identity, held).await?;
        transaction.commit().await
    }

    async fn remember_on(
        &self,
        client: &mut Object,
        identity: &str,
        key: &str,
        fingerprint: &str,
        text: &str,
        expires: i64,
    ) -> Result<(), tokio_postgres::Error> {
        let share = self.limits.max_idempotency_per_identity as i64;
        let transaction = client.transaction().await?;
        let mut held = self.own(&transaction, identity).await?;
        let clear = transaction.prepare_cached(&self.sql.clear_keys).await?;
        let now = millis(SystemTime::now());
        held.keys -= transaction.execute(&clear, &[&identity, &key, &now]).await? as i64;
        if held.keys >= share {
            let evict = transaction.prepare_cached(&self.sql.evict_keys).await?;
            let excess = held.keys - share + 1;
            let gone = transaction.execute(&evict, &[&identity, &excess]).await? as i64;
            held.keys -= gone;
            if gone < excess {
                // The row said more than there is: count.
                let recount = transaction.prepare_cached(&self.sql.recount_keys).await?;
                held.keys = transaction.query_one(&recount, &[&identity]).await?.get(0);
            }
        }
        let insert = transaction.prepare_cached(&self.sql.insert_key).await?;
        let keys = held.keys + 1;
        transaction
            .execute(&insert, &[&identity, &key, &fingerprint, &text, &expires, &keys])
            .await?;
        transaction.commit().await
    }

    /// The sweep: expired rows, then the backstop, in one transaction holding the sweep lock.
    async fn sweep_on(&self, client: &mut Object) -> Result<usize, tokio_postgres::Error> {
        let transaction = client.transaction().await?;
        let got: bool = transaction
            .query_one("SELECT pg_try_advisory_xact_lock($1)", &[&self.sweep_lock])
            .await?
            .get(0);
        if !got {
            // Another process is sweeping this schema now.
            return Ok(0);
        }
        let now = millis(SystemTime::now());
        let owners = transaction.prepare_cached(&self.sql.expired_owners).await?;
        let identities: Vec<String> = transaction
            .query(&owners, &[&now])
            .await?
            .iter()
            .map(|row| row.get(0))
            .collect();
        let mut expired = 0;
        if !identities.is_empty() {
            // Their owner rows first, in one order (a write holds one, then its run rows).
            let lock = transaction.prepare_cached(&self.sql.lock_owners).await?;
            transaction.query(&lock, &[&identities]).await?;
            let runs = transaction.prepare_cached(&self.sql.expire_runs).await?;
            let keys = transaction.prepare_cached(&self.sql.expire_keys).await?;
            let drop = transaction.prepare_cached(&self.sql.drop_empty_owners).await?;
            let params: [&(dyn ToSql + Sync); 2] = [&now, &identities];
            let (runs, _, _) = tokio::try_join!(
                transaction.query(&runs, &params),
                transaction.query(&keys, &params),
                transaction.execute(&drop, &params[1..])
            )?;
            expired = runs.iter().map(|row| row.get::<_, i64>(0)).sum::<i64>();
        }
        self.backstop(&transaction).await?;
        transaction.commit().await?;
        Ok(as_count(expired))
    }

    /// The store-wide bounds: while over, the identity holding the most gives way its oldest.
    /// Which identities give way how many is worked out here from the `owners` rows (one at a
    /// time, as the rule says, on counts; on bytes with each identity's mean size, then
    /// measured), and each of them evicts its share of that at once: a sweep over the bounds
    /// by many runs of many equal identities is a few statements per identity, not per run.
    async fn backstop(&self, transaction: &Transaction<'_>) -> Result<(), tokio_postgres::Error> {
        let limits = self.limits;
        let totals = transaction.prepare_cached(&self.sql.totals).await?;
        let all = transaction.prepare_cached(&self.sql.all_owners).await?;
        let evict_keys = transaction.prepare_cached(&self.sql.evict_keys).await?;
        for _ in 0..BACKSTOP_ROUNDS {
            let row = transaction.query_one(&totals, &[]).await?;
            let (runs, bytes, keys): (i64, i64, i64) = (row.get(0), row.get(1), row.get(2));
            let over_runs = runs - limits.max_runs as i64;
            let over_bytes = bytes - limits.max_bytes as i64;
            let over_keys = keys - limits.max_idempotency as i64;
            if over_runs <= 0 && over_bytes <= 0 && over_keys <= 0 {
                break;
            }
            let owners: Vec<Owner> = transaction
                .query(&all, &[])
                .await?
                .iter()
                .map(|row| Owner {
                    identity: row.get(0),
                    held: held_at(row, 1),
                })
                .collect();
            let mut gone_in_round = 0;
            if over_runs > 0 || over_bytes > 0 {
                // Counts first (exact), then bytes (estimated, so evicted until measured).
                let plan = if over_runs > 0 {
                    plan_evictions(&owners, over_runs, 0)
                } else {
                    plan_evictions(&owners, 0, over_bytes)
                };
                let mut bytes_left = over_bytes;
                for (identity, count) in plan {
                    if over_runs <= 0 && bytes_left <= 0 {
                        break;
                    }
                    let Some(mut held) = self.lock_owner(transaction, &identity).await? else {
                        continue;
                    };
                    let (runs, bytes) = if over_runs > 0 { (count, 0) } else { (0, bytes_left) };
                    let (gone, freed) = self.evict_runs(transaction, &identity, count, runs, bytes).await?;
                    held.runs -= gone;
                    held.bytes -= freed;
                    bytes_left -= freed;
                    gone_in_round += gone;
                    self.set_owner(transaction, &identity, held).await?;
                }
            } else {
                let by_keys: Vec<Owner> = owners
                    .into_iter()
                    .map(|owner| Owner {
                        held: Held {
                            runs: owner.held.keys,
                            bytes: 0,
                            keys: owner.held.keys,
                        },
                        ..owner
                    })
                    .collect();
                for (identity, count) in plan_evictions(&by_keys, over_keys, 0) {
                    let Some(mut held) = self.lock_owner(transaction, &identity).await? else {
                        continue;
                    };
                    let gone = transaction.execute(&evict_keys, &[&identity, &count]).await? as i64;
                    held.keys -= gone;
                    gone_in_round += gone;
                    self.set_owner(transaction, &identity, held).await?;
                }
            }
            if gone_in_round == 0 {
                break;
            }
        }
        Ok(())
    }

    /// Runs the sweep after a write when one is due; its failure is not the write's.
    async fn sweep_if_due(&self, due: bool) {
        if due {
            let _ = self.sweep_now().await;
        }
    }

    async fn sweep_now(&self) -> Result<usize, StoreError> {
        let mut client = self.client().await?;
        // A sweep is many statements; it gets a longer deadline than one call.
        let deadline = self.deadline * 3;
        let outcome = tokio::time::timeout(deadline, self.sweep_on(&mut client)).await;
        self.settle(client, deadline, outcome)
    }
}

/// Creates or migrates `schema` on `client`, under the schema's advisory lock.
async fn migrate(client: &mut Object, schema: &str) -> Result<(), StoreError> {
    let transaction = client.transaction().await.map_err(failed)?;
    // A second engine starting at once waits here for the first's migration.
    transaction
        .batch_execute("SET LOCAL statement_timeout = '60s'")
        .await
        .map_err(failed)?;
    transaction
        .execute(
            "SELECT pg_advisory_xact_lock($1)",
            &[&lock_key(&format!("pilotage-store:{schema}"))],
        )
        .await
        .map_err(failed)?;
    transaction
        .batch_execute(&format!(
            "CREATE SCHEMA IF NOT EXISTS {schema}; CREATE TABLE IF NOT EXISTS {schema}.meta (version BIGINT NOT NULL)"
        ))
        .await
        .map_err(failed)?;
    let version: i64 = transaction
        .query_opt(&format!("SELECT version FROM {schema}.meta"), &[])
        .await
        .map_err(failed)?
        .map_or(0, |row| row.get(0));
    let known = MIGRATIONS.len() as i64;
    if version > known {
        return Err(StoreError(format!(
            "postgres: schema `{schema}`: the database's schema is at version {version}; this engine knows versions up to {known}: upgrade the engine"
        )));
    }
    if version == known {
        return transaction.commit().await.map_err(failed);
    }
    for (index, migration) in MIGRATIONS.iter().enumerate() {
        if index as i64 + 1 > version {
            transaction
                .batch_execute(&migration.replace("{schema}", schema))
                .await
                .map_err(|error| {
                    StoreError(format!(
                        "schema `{schema}`: migration {}: {}",
                        index + 1,
                        failed(error).0
                    ))
                })?;
        }
    }
    transaction
        .batch_execute(&format!(
            "DELETE FROM {schema}.meta; INSERT INTO {schema}.meta (version) VALUES ({known})"
        ))
        .await
        .map_err(failed)?;
    transaction.commit().await.map_err(failed)
}

impl RunStore for PostgresStore {
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
        Box::pin(async move {
            let size = record.size();
            if !self.limits.admits(size) {
                return Ok(false);
            }
            let text = serde_json::to_string(&record).map_err(failed)?;
            let expires = match expiry {
                Expiry::At(at) => Some(millis(at)),
                Expiry::WithSession => None,
            };
            let mut client = self.client().await?;
            let work = self.put_on(&mut client, identity, run_id, &text, size as i64, expires);
            let outcome = tokio::time::timeout(self.deadline, work).await;
            self.settle(client, self.deadline, outcome)?;
            self.sweep_if_due(self.sweep_due()).await;
            Ok(true)
        })
    }

    fn get<'a>(&'a self, identity: &'a str, run_id: &'a str) -> StoreFuture<'a, Option<RunRecord>> {
        Box::pin(async move {
            let client = self.client().await?;
            let work = async {
                let get = client.prepare_cached(&self.sql.get_run).await?;
                client.query_opt(&get, &[&identity, &run_id]).await
            };
            let outcome = tokio::time::timeout(self.deadline, work).await;
            let row = self.settle(client, self.deadline, outcome)?;
            let Some(row) = row else { return Ok(None) };
            let (text, expires): (String, Option<i64>) = (row.get(0), row.get(1));
            // An expired row is not found; the next write of its identity, or a sweep,
            // deletes it.
            if expires.is_some_and(|at| at <= millis(SystemTime::now())) {
                return Ok(None);
            }
            serde_json::from_str(&text).map(Some).map_err(failed)
        })
    }

    fn forget_session<'a>(&'a self, identity: &'a str) -> StoreFuture<'a, ()> {
        Box::pin(async move {
            let mut client = self.client().await?;
            let outcome = tokio::time::timeout(self.deadline, self.forget_on(&mut client, identity)).await;
            self.settle(client, self.deadline, outcome)
        })
    }

    fn sweep(&self) -> StoreFuture<'_, usize> {
        Box::pin(self.sweep_now())
    }

    fn idempotency<'a>(
        &'a self,
        identity: &'a str,
        key: &'a str,
        fingerprint: &'a str,
    ) -> StoreFuture<'a, IdempotencyHit> {
        Box::pin(async move {
            let client = self.client().await?;
            let work = async {
                let get = client.prepare_cached(&self.sql.get_key).await?;
                client.query_opt(&get, &[&identity, &key]).await
            };
            let outcome = tokio::time::timeout(self.deadline, work).await;
            let row = self.settle(client, self.deadline, outcome)?;
            Ok(match row {
                None => IdempotencyHit::Miss,
                Some(row) => {
                    let (stored, response, expires): (String, String, i64) = (row.get(0), row.get(1), row.get(2));
                    if expires <= millis(SystemTime::now()) {
                        IdempotencyHit::Miss
                    } else if stored == fingerprint {
                        match serde_json::from_str(&response) {
                            Ok(response) => IdempotencyHit::Replay(Box::new(response)),
                            Err(_) => IdempotencyHit::Miss,
                        }
                    } else {
                        IdempotencyHit::Conflict
                    }
                }
            })
        })
    }

    fn remember<'a>(
        &'a self,
        identity: &'a str,
        key: &'a str,
        fingerprint: &'a str,
        response: &'a ExecuteResponse,
    ) -> StoreFuture<'a, ()> {
        Box::pin(async move {
            let limits = self.limits;
            if limits.max_idempotency == 0 || limits.max_idempotency_per_identity == 0 {
                return Ok(());
            }
            let text = serde_json::to_string(response).map_err(failed)?;
            let expires = millis(SystemTime::now() + limits.idempotency_ttl);
            let mut client = self.client().await?;
            let work = self.remember_on(&mut client, identity, key, fingerprint, &text, expires);
            let outcome = tokio::time::timeout(self.deadline, work).await;
            self.settle(client, self.deadline, outcome)?;
            self.sweep_if_due(self.sweep_due()).await;
            Ok(())
        })
    }

    fn ping(&self) -> StoreFuture<'_, ()> {
        Box::pin(async move {
            let client = self.client().await?;
            let outcome = tokio::time::timeout(self.deadline, client.simple_query("SELECT 1")).await;
            self.settle(client, self.deadline, outcome).map(|_| ())
        })
    }

    fn sizes(&self) -> StoreFuture<'_, StoreSizes> {
        Box::pin(async move {
            let client = self.client().await?;
            let work = async {
                let sizes = client.prepare_cached(&self.sql.sizes).await?;
                client.query_one(&sizes, &[]).await
            };
            let outcome = tokio::time::timeout(self.deadline, work).await;
            let row = self.settle(client, self.deadline, outcome)?;
            Ok(StoreSizes {
                runs: as_count(row.get(0)),
                bytes: as_count(row.get(1)),
                idempotency: as_count(row.get(2)),
            })
        })
    }
}
