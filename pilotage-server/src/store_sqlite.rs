//! The SQLite run store (feature `sqlite`): one file that survives a restart, shared by every
//! engine process on one host (WAL journal, a busy timeout, and `BEGIN IMMEDIATE` around every
//! write so that the bounds hold across processes). The schema is created and migrated from
//! [`MIGRATIONS`], versioned in the file itself. Calls run on Tokio's blocking pool.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

use rusqlite::{params, Connection, OptionalExtension, TransactionBehavior};

use super::runs::{
    millis, Expiry, IdempotencyHit, RunRecord, RunStore, StoreError, StoreFuture, StoreLimits, StoreSizes,
};
use pilotage_types::ExecuteResponse;

/// The schema, one migration per version (applied in order, each once).
pub const MIGRATIONS: &[&str] = &["
    CREATE TABLE pilotage_runs (
        seq INTEGER PRIMARY KEY AUTOINCREMENT,
        identity TEXT NOT NULL,
        run_id TEXT NOT NULL,
        record TEXT NOT NULL,
        size INTEGER NOT NULL,
        expires_at INTEGER,
        UNIQUE (identity, run_id)
    );
    CREATE INDEX pilotage_runs_expiry ON pilotage_runs (expires_at);
    CREATE TABLE pilotage_idempotency (
        seq INTEGER PRIMARY KEY AUTOINCREMENT,
        identity TEXT NOT NULL,
        key TEXT NOT NULL,
        fingerprint TEXT NOT NULL,
        response TEXT NOT NULL,
        expires_at INTEGER NOT NULL,
        UNIQUE (identity, key)
    );
"];

fn failed(error: impl std::fmt::Display) -> StoreError {
    StoreError(error.to_string())
}

/// A run store in one SQLite file.
pub struct SqliteStore {
    connection: Arc<Mutex<Connection>>,
    limits: StoreLimits,
    path: PathBuf,
}

impl std::fmt::Debug for SqliteStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SqliteStore")
            .field("path", &self.path)
            .field("limits", &self.limits)
            .finish()
    }
}

fn migrate(connection: &mut Connection) -> rusqlite::Result<()> {
    connection.pragma_update(None, "journal_mode", "WAL")?;
    connection.pragma_update(None, "synchronous", "NORMAL")?;
    let transaction = connection.transaction_with_behavior(TransactionBehavior::Immediate)?;
    transaction.execute_batch("CREATE TABLE IF NOT EXISTS pilotage_schema (version INTEGER NOT NULL)")?;
    let version: i64 = transaction
        .query_row("SELECT version FROM pilotage_schema", [], |row| row.get(0))
        .optional()?
        .unwrap_or(0);
    for (index, migration) in MIGRATIONS.iter().enumerate() {
        let target = index as i64 + 1;
        if target > version {
            transaction.execute_batch(migration)?;
        }
    }
    transaction.execute("DELETE FROM pilotage_schema", [])?;
    transaction.execute(
        "INSERT INTO pilotage_schema (version) VALUES (?1)",
        params![MIGRATIONS.len() as i64],
    )?;
    transaction.commit()
}

impl SqliteStore {
    /// Opens (creating it if needed) the store at `path`, migrating its schema.
    pub async fn open(path: impl AsRef<Path>, limits: StoreLimits) -> Result<Self, StoreError> {
        let path = path.as_ref().to_path_buf();
        let shown = path.display().to_string();
        let opened = path.clone();
        let connection = tokio::task::spawn_blocking(move || -> rusqlite::Result<Connection> {
            let mut connection = Connection::open(&opened)?;
            connection.busy_timeout(Duration::from_secs(10))?;
            migrate(&mut connection)?;
            Ok(connection)
        })
        .await
        .map_err(failed)?
        .map_err(|e| StoreError(format!("{shown}: {e}")))?;
        Ok(Self {
            connection: Arc::new(Mutex::new(connection)),
            limits,
            path,
        })
    }

    /// Runs `work` on the connection, on the blocking pool.
    fn blocking<'a, T: Send + 'static>(
        &'a self,
        work: impl FnOnce(&mut Connection) -> rusqlite::Result<T> + Send + 'static,
    ) -> StoreFuture<'a, T> {
        let connection = self.connection.clone();
        let path = self.path.display().to_string();
        Box::pin(async move {
            tokio::task::spawn_blocking(move || {
                let mut connection = connection.lock().unwrap_or_else(|e| e.into_inner());
                work(&mut connection)
            })
            .await
            .map_err(failed)?
            .map_err(|e| StoreError(format!("{path}: {e}")))
        })
    }
}

/// Deletes the oldest rows of `table` (but `keep`) while `over` says the bounds are broken.
fn evict(
    transaction: &rusqlite::Transaction<'_>,
    table: &str,
    keep: i64,
    over: impl Fn(i64, i64) -> bool,
) -> rusqlite::Result<()> {
    let sizes = if table == "pilotage_runs" {
        "SELECT COUNT(*), COALESCE(SUM(size), 0) FROM pilotage_runs"
    } else {
        "SELECT COUNT(*), 0 FROM pilotage_idempotency"
    };
    loop {
        let (count, bytes): (i64, i64) = transaction.query_row(sizes, [], |row| Ok((row.get(0)?, row.get(1)?)))?;
        if !over(count, bytes) {
            return Ok(());
        }
        let deleted = transaction.execute(
            &format!("DELETE FROM {table} WHERE seq = (SELECT MIN(seq) FROM {table} WHERE seq != ?1)"),
            params![keep],
        )?;
        if deleted == 0 {
            return Ok(());
        }
    }
}

impl RunStore for SqliteStore {
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
        let size = record.size();
        let limits = self.limits;
        if !limits.admits(size) {
            return Box::pin(std::future::ready(Ok(false)));
        }
        let text = match serde_json::to_string(&record) {
            Ok(text) => text,
            Err(error) => return Box::pin(std::future::ready(Err(failed(error)))),
        };
        let (identity, run_id) = (identity.to_owned(), run_id.to_owned());
        let expires = match expiry {
            Expiry::At(at) => Some(millis(at)),
            Expiry::WithSession => None,
        };
        self.blocking(move |connection| {
            let transaction = connection.transaction_with_behavior(TransactionBehavior::Immediate)?;
            let now = millis(SystemTime::now());
            transaction.execute(
                "DELETE FROM pilotage_runs WHERE expires_at IS NOT NULL AND expires_at <= ?1",
                params![now],
            )?;
            transaction.execute(
                "DELETE FROM pilotage_runs WHERE identity = ?1 AND run_id = ?2",
                params![identity, run_id],
            )?;
            transaction.execute(
                "INSERT INTO pilotage_runs (identity, run_id, record, size, expires_at) VALUES (?1, ?2, ?3, ?4, ?5)",
                params![identity, run_id, text, size as i64, expires],
            )?;
            let keep = transaction.last_insert_rowid();
            evict(&transaction, "pilotage_runs", keep, |count, bytes| {
                count > limits.max_runs as i64 || bytes > limits.max_bytes as i64
            })?;
            transaction.commit()?;
            Ok(true)
        })
    }

    fn get<'a>(&'a self, identity: &'a str, run_id: &'a str) -> StoreFuture<'a, Option<RunRecord>> {
        let (identity, run_id) = (identity.to_owned(), run_id.to_owned());
        self.blocking(move |connection| {
            let row: Option<(String, Option<i64>)> = connection
                .query_row(
                    "SELECT record, expires_at FROM pilotage_runs WHERE identity = ?1 AND run_id = ?2",
                    params![identity, run_id],
                    |row| Ok((row.get(0)?, row.get(1)?)),
                )
                .optional()?;
            let Some((text, expires)) = row else { return Ok(None) };
            if expires.is_some_and(|at| at <= millis(SystemTime::now())) {
                connection.execute(
                    "DELETE FROM pilotage_runs WHERE identity = ?1 AND run_id = ?2",
                    params![identity, run_id],
                )?;
                return Ok(None);
            }
            serde_json::from_str(&text)
                .map(Some)
                .map_err(|e| rusqlite::Error::FromSqlConversionFailure(0, rusqlite::types::Type::Text, Box::new(e)))
        })
    }

    fn forget_session<'a>(&'a self, identity: &'a str) -> StoreFuture<'a, ()> {
        let identity = identity.to_owned();
        self.blocking(move |connection| {
            connection.execute(
                "DELETE FROM pilotage_runs WHERE identity = ?1 AND expires_at IS NULL",
                params![identity],
            )?;
            connection.execute(
                "DELETE FROM pilotage_idempotency WHERE identity = ?1",
                params![identity],
            )?;
            Ok(())
        })
    }

    fn sweep(&self) -> StoreFuture<'_, usize> {
        self.blocking(|connection| {
            let now = millis(SystemTime::now());
            let runs = connection.execute(
                "DELETE FROM pilotage_runs WHERE expires_at IS NOT NULL AND expires_at <= ?1",
                params![now],
            )?;
            connection.execute("DELETE FROM pilotage_idempotency WHERE expires_at <= ?1", params![now])?;
            Ok(runs)
        })
    }

    fn idempotency<'a>(
        &'a self,
        identity: &'a str,
        key: &'a str,
        fingerprint: &'a str,
    ) -> StoreFuture<'a, IdempotencyHit> {
        let (identity, key, fingerprint) = (identity.to_owned(), key.to_owned(), fingerprint.to_owned());
        self.blocking(move |connection| {
            let row: Option<(String, String, i64)> = connection
                .query_row(
                    "SELECT fingerprint, response, expires_at FROM pilotage_idempotency WHERE identity = ?1 AND key = ?2",
                    params![identity, key],
                    |row| Ok((row.get(0)?, row.get(1)?, row.get(2)?)),
                )
                .optional()?;
            Ok(match row {
                None => IdempotencyHit::Miss,
                Some((_, _, expires)) if expires <= millis(SystemTime::now()) => IdempotencyHit::Miss,
                Some((stored, response, _)) if stored == fingerprint => match serde_json::from_str(&response) {
                    Ok(response) => IdempotencyHit::Replay(Box::new(response)),
                    Err(_) => IdempotencyHit::Miss,
                },
                Some(_) => IdempotencyHit::Conflict,
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
        let limits = self.limits;
        if limits.max_idempotency == 0 {
            return Box::pin(std::future::ready(Ok(())));
        }
        let text = match serde_json::to_string(response) {
            Ok(text) => text,
            Err(error) => return Box::pin(std::future::ready(Err(failed(error)))),
        };
        let (identity, key, fingerprint) = (identity.to_owned(), key.to_owned(), fingerprint.to_owned());
        let expires = millis(SystemTime::now() + limits.idempotency_ttl);
        self.blocking(move |connection| {
            let transaction = connection.transaction_with_behavior(TransactionBehavior::Immediate)?;
            transaction.execute(
                "DELETE FROM pilotage_idempotency WHERE identity = ?1 AND key = ?2",
                params![identity, key],
            )?;
            transaction.execute(
                "INSERT INTO pilotage_idempotency (identity, key, fingerprint, response, expires_at) VALUES (?1, ?2, ?3, ?4, ?5)",
                params![identity, key, fingerprint, text, expires],
            )?;
            let keep = transaction.last_insert_rowid();
            evict(&transaction, "pilotage_idempotency", keep, |count, _| {
                count > limits.max_idempotency as i64
            })?;
            transaction.commit()
        })
    }

    fn sizes(&self) -> StoreFuture<'_, StoreSizes> {
        self.blocking(|connection| {
            let (runs, bytes): (i64, i64) = connection.query_row(
                "SELECT COUNT(*), COALESCE(SUM(size), 0) FROM pilotage_runs",
                [],
                |row| Ok((row.get(0)?, row.get(1)?)),
            )?;
            let idempotency: i64 =
                connection.query_row("SELECT COUNT(*) FROM pilotage_idempotency", [], |row| row.get(0))?;
            Ok(StoreSizes {
                runs: runs as usize,
                bytes: bytes as usize,
                idempotency: idempotency as usize,
            })
        })
    }
}
