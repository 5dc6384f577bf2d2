//! The Postgres run store (feature `postgres`): runs shared by engine processes on several
//! hosts. Its tables live in a schema of their own (default `pilotage`), created and migrated
//! from [`MIGRATIONS`] under an advisory lock; every write is one transaction holding that
//! schema's advisory lock, so that the bounds hold across processes. Connections are plain
//! TCP or a Unix socket (no TLS: put the database on a trusted network or a socket).

use std::sync::Arc;
use std::time::SystemTime;

use tokio::sync::Mutex;
use tokio_postgres::{Client, NoTls};

use super::runs::{
    millis, Expiry, IdempotencyHit, RunRecord, RunStore, StoreError, StoreFuture, StoreLimits, StoreSizes,
};
use pilotage_types::ExecuteResponse;

/// The schema, one migration per version; `{schema}` is the store's schema name.
pub const MIGRATIONS: &[&str] = &["
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
"];

fn failed(error: impl std::fmt::Display) -> StoreError {
    StoreError(format!("postgres: {error}"))
}

/// A run store in a Postgres database.
pub struct PostgresStore {
    client: Arc<Mutex<Client>>,
    schema: String,
    lock: i64,
    limits: StoreLimits,
}

impl std::fmt::Debug for PostgresStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PostgresStore")
            .field("schema", &self.schema)
            .field("limits", &self.limits)
            .finish_non_exhaustive()
    }
}

/// A stable 63-bit key of `schema` for its advisory lock.
fn lock_key(schema: &str) -> i64 {
    // FNV-1a: stable across processes and versions, unlike std's hasher.
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in b"pilotage-store:".iter().chain(schema.as_bytes()) {
        hash ^= u64::from(*byte);
        hash = hash.wrapping_mul(0x0100_0000_01b3);
    }
    (hash >> 1) as i64
}

impl PostgresStore {
    /// Connects with `url` (`postgres://user@host:port/db`, or `host=/run/postgresql ...`) and
    /// keeps the store's tables in the schema `pilotage`.
    pub async fn connect(url: &str, limits: StoreLimits) -> Result<Self, StoreError> {
        Self::connect_in(url, "pilotage", limits).await
    }

    /// [`PostgresStore::connect`] with the tables in `schema` (lowercase letters, digits and
    /// `_`, not starting with a digit).
    pub async fn connect_in(url: &str, schema: &str, limits: StoreLimits) -> Result<Self, StoreError> {
        let valid = schema
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_lowercase() || c == '_')
            && schema
                .chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
            && schema.len() <= 63;
        if !valid {
            return Err(StoreError(format!(
                "`{schema}` is not a schema name this store uses (lowercase letters, digits, _)"
            )));
        }
        let (client, connection) = tokio_postgres::connect(url, NoTls).await.map_err(failed)?;
        tokio::spawn(async move {
            if let Err(error) = connection.await {
                eprintln!("pilotage run store: the Postgres connection ended: {error}");
            }
        });
        let lock = lock_key(schema);
        let mut client = client;
        let transaction = client.transaction().await.map_err(failed)?;
        transaction
            .execute("SELECT pg_advisory_xact_lock($1)", &[&lock])
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
        for (index, migration) in MIGRATIONS.iter().enumerate() {
            if index as i64 + 1 > version {
                transaction
                    .batch_execute(&migration.replace("{schema}", schema))
                    .await
                    .map_err(failed)?;
            }
        }
        transaction
            .batch_execute(&format!(
                "DELETE FROM {schema}.meta; INSERT INTO {schema}.meta (version) VALUES ({})",
                MIGRATIONS.len()
            ))
            .await
            .map_err(failed)?;
        transaction.commit().await.map_err(failed)?;
        Ok(Self {
            client: Arc::new(Mutex::new(client)),
            schema: schema.to_owned(),
            lock,
            limits,
        })
    }

    fn table(&self, name: &str) -> String {
        format!("{}.{name}", self.schema)
    }
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
            let limits = self.limits;
            if !limits.admits(size) {
                return Ok(false);
            }
            let text = serde_json::to_string(&record).map_err(failed)?;
            let expires = match expiry {
                Expiry::At(at) => Some(millis(at)),
                Expiry::WithSession => None,
            };
            let runs = self.table("runs");
            let mut client = self.client.lock().await;
            let transaction = client.transaction().await.map_err(failed)?;
            transaction
                .execute("SELECT pg_advisory_xact_lock($1)", &[&self.lock])
                .await
                .map_err(failed)?;
            let now = millis(SystemTime::now());
            transaction
                .execute(
                    &format!("DELETE FROM {runs} WHERE expires_at IS NOT NULL AND expires_at <= $1"),
                    &[&now],
                )
                .await
                .map_err(failed)?;
            transaction
                .execute(
                    &format!("DELETE FROM {runs} WHERE identity = $1 AND run_id = $2"),
                    &[&identity, &run_id],
                )
                .await
                .map_err(failed)?;
            let keep: i64 = transaction
                .query_one(
                    &format!(
                        "INSERT INTO {runs} (identity, run_id, record, size, expires_at) VALUES ($1, $2, $3, $4, $5) RETURNING seq"
                    ),
                    &[&identity, &run_id, &text, &(size as i64), &expires],
                )
                .await
                .map_err(failed)?
                .get(0);
            loop {
                let row = transaction
                    .query_one(
                        &format!("SELECT COUNT(*), COALESCE(SUM(size), 0)::BIGINT FROM {runs}"),
                        &[],
                    )
                    .await
                    .map_err(failed)?;
                let (count, bytes): (i64, i64) = (row.get(0), row.get(1));
                if count <= limits.max_runs as i64 && bytes <= limits.max_bytes as i64 {
                    break;
                }
                let deleted = transaction
                    .execute(
                        &format!("DELETE FROM {runs} WHERE seq = (SELECT MIN(seq) FROM {runs} WHERE seq != $1)"),
                        &[&keep],
                    )
                    .await
                    .map_err(failed)?;
                if deleted == 0 {
                    break;
                }
            }
            transaction.commit().await.map_err(failed)?;
            Ok(true)
        })
    }

    fn get<'a>(&'a self, identity: &'a str, run_id: &'a str) -> StoreFuture<'a, Option<RunRecord>> {
        Box::pin(async move {
            let runs = self.table("runs");
            let client = self.client.lock().await;
            let row = client
                .query_opt(
                    &format!("SELECT record, expires_at FROM {runs} WHERE identity = $1 AND run_id = $2"),
                    &[&identity, &run_id],
                )
                .await
                .map_err(failed)?;
            let Some(row) = row else { return Ok(None) };
            let (text, expires): (String, Option<i64>) = (row.get(0), row.get(1));
            if expires.is_some_and(|at| at <= millis(SystemTime::now())) {
                client
                    .execute(
                        &format!("DELETE FROM {runs} WHERE identity = $1 AND run_id = $2"),
                        &[&identity, &run_id],
                    )
                    .await
                    .map_err(failed)?;
                return Ok(None);
            }
            serde_json::from_str(&text).map(Some).map_err(failed)
        })
    }

    fn forget_session<'a>(&'a self, identity: &'a str) -> StoreFuture<'a, ()> {
        Box::pin(async move {
            let client = self.client.lock().await;
            client
                .execute(
                    &format!(
                        "DELETE FROM {} WHERE identity = $1 AND expires_at IS NULL",
                        self.table("runs")
                    ),
                    &[&identity],
                )
                .await
                .map_err(failed)?;
            client
                .execute(
                    &format!("DELETE FROM {} WHERE identity = $1", self.table("idempotency")),
                    &[&identity],
                )
                .await
                .map_err(failed)?;
            Ok(())
        })
    }

    fn sweep(&self) -> StoreFuture<'_, usize> {
        Box::pin(async move {
            let now = millis(SystemTime::now());
            let client = self.client.lock().await;
            let runs = client
                .execute(
                    &format!(
                        "DELETE FROM {} WHERE expires_at IS NOT NULL AND expires_at <= $1",
                        self.table("runs")
                    ),
                    &[&now],
                )
                .await
                .map_err(failed)?;
            client
                .execute(
                    &format!("DELETE FROM {} WHERE expires_at <= $1", self.table("idempotency")),
                    &[&now],
                )
                .await
                .map_err(failed)?;
            Ok(runs as usize)
        })
    }

    fn idempotency<'a>(
        &'a self,
        identity: &'a str,
        key: &'a str,
        fingerprint: &'a str,
    ) -> StoreFuture<'a, IdempotencyHit> {
        Box::pin(async move {
            let client = self.client.lock().await;
            let row = client
                .query_opt(
                    &format!(
                        "SELECT fingerprint, response, expires_at FROM {} WHERE identity = $1 AND key = $2",
                        self.table("idempotency")
                    ),
                    &[&identity, &key],
                )
                .await
                .map_err(failed)?;
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
            if limits.max_idempotency == 0 {
                return Ok(());
            }
            let text = serde_json::to_string(response).map_err(failed)?;
            let expires = millis(SystemTime::now() + limits.idempotency_ttl);
            let table = self.table("idempotency");
            let mut client = self.client.lock().await;
            let transaction = client.transaction().await.map_err(failed)?;
            transaction
                .execute("SELECT pg_advisory_xact_lock($1)", &[&self.lock])
                .await
                .map_err(failed)?;
            transaction
                .execute(
                    &format!("DELETE FROM {table} WHERE identity = $1 AND key = $2"),
                    &[&identity, &key],
                )
                .await
                .map_err(failed)?;
            let keep: i64 = transaction
                .query_one(
                    &format!(
                        "INSERT INTO {table} (identity, key, fingerprint, response, expires_at) VALUES ($1, $2, $3, $4, $5) RETURNING seq"
                    ),
                    &[&identity, &key, &fingerprint, &text, &expires],
                )
                .await
                .map_err(failed)?
                .get(0);
            let count: i64 = transaction
                .query_one(&format!("SELECT COUNT(*) FROM {table}"), &[])
                .await
                .map_err(failed)?
                .get(0);
            let excess = count - limits.max_idempotency as i64;
            if excess > 0 {
                transaction
                    .execute(
                        &format!(
                            "DELETE FROM {table} WHERE seq IN (SELECT seq FROM {table} WHERE seq != $1 ORDER BY seq LIMIT $2)"
                        ),
                        &[&keep, &excess],
                    )
                    .await
                    .map_err(failed)?;
            }
            transaction.commit().await.map_err(failed)
        })
    }

    fn sizes(&self) -> StoreFuture<'_, StoreSizes> {
        Box::pin(async move {
            let client = self.client.lock().await;
            let row = client
                .query_one(
                    &format!(
                        "SELECT COUNT(*), COALESCE(SUM(size), 0)::BIGINT FROM {}",
                        self.table("runs")
                    ),
                    &[],
                )
                .await
                .map_err(failed)?;
            let idempotency: i64 = client
                .query_one(&format!("SELECT COUNT(*) FROM {}", self.table("idempotency")), &[])
                .await
                .map_err(failed)?
                .get(0);
            Ok(StoreSizes {
                runs: row.get::<_, i64>(0) as usize,
                bytes: row.get::<_, i64>(1) as usize,
                idempotency: idempotency as usize,
            })
        })
    }
}
