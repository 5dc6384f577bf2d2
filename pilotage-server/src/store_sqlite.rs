//! The SQLite run store (feature `sqlite`): one file that survives a restart, shared by every
//! engine process on one host (WAL journal, a busy timeout, and `BEGIN IMMEDIATE` around every
//! write so that the bounds hold across processes). The schema is created and migrated from
//! [`MIGRATIONS`], versioned in the file itself; a file at a newer version than this engine
//! knows is refused, naming both. Calls run on Tokio's blocking pool.
//!
//! The bounds ([`StoreLimits`]): what each identity holds is kept in `pilotage_owners` by
//! triggers, so that a write reads one row of its own identity, never an aggregate over the
//! table: its cost does not grow with the runs stored. A write evicts its identity's own
//! oldest past its share; the store-wide backstop runs in [`RunStore::sweep`] (and every
//! [`BACKSTOP_EVERY`] writes of a process), where the identity holding the most gives way.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

use rusqlite::{params, Connection, OptionalExtension, TransactionBehavior};

use super::runs::{
    millis, Expiry, IdempotencyHit, RunRecord, RunStore, StoreError, StoreFuture, StoreLimits, StoreSizes,
};
use pilotage_types::ExecuteResponse;

/// The schema, one migration per version (applied in order, each once).
pub const MIGRATIONS: &[&str] = &[
    "
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
",
    "
    CREATE TABLE pilotage_owners (
        identity TEXT PRIMARY KEY,
        runs INTEGER NOT NULL DEFAULT 0,
        bytes INTEGER NOT NULL DEFAULT 0,
        keys INTEGER NOT NULL DEFAULT 0
    );
    INSERT INTO pilotage_owners (identity, runs, bytes)
        SELECT identity, COUNT(*), SUM(size) FROM pilotage_runs GROUP BY identity;
    INSERT OR IGNORE INTO pilotage_owners (identity) SELECT DISTINCT identity FROM pilotage_idempotency;
    UPDATE pilotage_owners SET keys =
        (SELECT COUNT(*) FROM pilotage_idempotency i WHERE i.identity = pilotage_owners.identity);
    CREATE INDEX pilotage_runs_owner ON pilotage_runs (identity, seq);
    CREATE INDEX pilotage_idempotency_owner ON pilotage_idempotency (identity, seq);
    CREATE INDEX pilotage_owners_largest ON pilotage_owners (runs DESC, bytes DESC);
    CREATE TRIGGER pilotage_runs_added AFTER INSERT ON pilotage_runs BEGIN
        INSERT OR IGNORE INTO pilotage_owners (identity) VALUES (NEW.identity);
        UPDATE pilotage_owners SET runs = runs + 1, bytes = bytes + NEW.size WHERE identity = NEW.identity;
    END;
    CREATE TRIGGER pilotage_runs_removed AFTER DELETE ON pilotage_runs BEGIN
        UPDATE pilotage_owners SET runs = runs - 1, bytes = bytes - OLD.size WHERE identity = OLD.identity;
        DELETE FROM pilotage_owners WHERE identity = OLD.identity AND runs <= 0 AND keys <= 0;
    END;
    CREATE TRIGGER pilotage_keys_added AFTER INSERT ON pilotage_idempotency BEGIN
        INSERT OR IGNORE INTO pilotage_owners (identity) VALUES (NEW.identity);
        UPDATE pilotage_owners SET keys = keys + 1 WHERE identity = NEW.identity;
    END;
    CREATE TRIGGER pilotage_keys_removed AFTER DELETE ON pilotage_idempotency BEGIN
        UPDATE pilotage_owners SET keys = keys - 1 WHERE identity = OLD.identity;
        DELETE FROM pilotage_owners WHERE identity = OLD.identity AND runs <= 0 AND keys <= 0;
    END;
",
];

/// Every this many writes, a process's store runs the store-wide backstop itself (as the
/// sweep does), so that an engine without the HTTP router's periodic sweep keeps it too.
pub const BACKSTOP_EVERY: usize = 256;

fn failed(error: impl std::fmt::Display) -> StoreError {
    StoreError(error.to_string())
}

/// A run store in one SQLite file.
pub struct SqliteStore {
    connection: Arc<Mutex<Connection>>,
    limits: StoreLimits,
    path: PathBuf,
    /// Writes since the last backstop of this process.
    writes: Arc<AtomicUsize>,
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
    if version > MIGRATIONS.len() as i64 {
        return Err(rusqlite::Error::ToSqlConversionFailure(Box::new(StoreError(format!(
            "the store's schema is at version {version}; this engine knows versions up to {}: upgrade the engine",
            MIGRATIONS.len()
        )))));
    }
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
            writes: Arc::new(AtomicUsize::new(0)),
        })
    }

    /// Whether this write is one that also runs the backstop.
    fn backstop_due(&self) -> bool {
        self.writes.fetch_add(1, Ordering::Relaxed) % BACKSTOP_EVERY == BACKSTOP_EVERY - 1
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

/// (runs, bytes, idempotency records) `identity` holds now.
fn held(transaction: &rusqlite::Transaction<'_>, identity: &str) -> rusqlite::Result<(i64, i64, i64)> {
    Ok(transaction
        .query_row(
            "SELECT runs, bytes, keys FROM pilotage_owners WHERE identity = ?1",
            params![identity],
            |row| Ok((row.get(0)?, row.get(1)?, row.get(2)?)),
        )
        .optional()?
        .unwrap_or((0, 0, 0)))
}

/// Deletes the oldest row of `identity` in `table`; whether there was one.
fn evict_oldest(transaction: &rusqlite::Transaction<'_>, table: &str, identity: &str) -> rusqlite::Result<bool> {
    let deleted = transaction.execute(
        &format!("DELETE FROM {table} WHERE seq = (SELECT MIN(seq) FROM {table} WHERE identity = ?1)"),
        params![identity],
    )?;
    Ok(deleted > 0)
}

/// The store-wide backstop: while the store is over its bounds, the identity holding the most
/// gives way its oldest (runs, then idempotency records).
fn backstop(transaction: &rusqlite::Transaction<'_>, limits: &StoreLimits) -> rusqlite::Result<()> {
    let totals = "SELECT COALESCE(SUM(runs), 0), COALESCE(SUM(bytes), 0), COALESCE(SUM(keys), 0) FROM pilotage_owners";
    loop {
        let (runs, bytes, _): (i64, i64, i64) =
            transaction.query_row(totals, [], |row| Ok((row.get(0)?, row.get(1)?, row.get(2)?)))?;
        if runs <= limits.max_runs as i64 && bytes <= limits.max_bytes as i64 {
            break;
        }
        let largest: Option<String> = transaction
            .query_row(
                "SELECT identity FROM pilotage_owners WHERE runs > 0 ORDER BY runs DESC, bytes DESC, identity LIMIT 1",
                [],
                |row| row.get(0),
            )
            .optional()?;
        match largest {
            Some(identity) if evict_oldest(transaction, "pilotage_runs", &identity)? => {}
            _ => break,
        }
    }
    loop {
        let (_, _, keys): (i64, i64, i64) =
            transaction.query_row(totals, [], |row| Ok((row.get(0)?, row.get(1)?, row.get(2)?)))?;
        if keys <= limits.max_idempotency as i64 {
            return Ok(());
        }
        let largest: Option<String> = transaction
            .query_row(
                "SELECT identity FROM pilotage_owners WHERE keys > 0 ORDER BY keys DESC, identity LIMIT 1",
                [],
                |row| row.get(0),
            )
            .optional()?;
        match largest {
            Some(identity) if evict_oldest(transaction, "pilotage_idempotency", &identity)? => {}
            _ => return Ok(()),
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
        let backstop_due = self.backstop_due();
        self.blocking(move |connection| {
            let transaction = connection.transaction_with_behavior(TransactionBehavior::Immediate)?;
            let now = millis(SystemTime::now());
            // This identity's expired runs and the run it replaces go first (its rows only).
            transaction.execute(
                "DELETE FROM pilotage_runs WHERE identity = ?1 AND expires_at IS NOT NULL AND expires_at <= ?2",
                params![identity, now],
            )?;
            transaction.execute(
                "DELETE FROM pilotage_runs WHERE identity = ?1 AND run_id = ?2",
                params![identity, run_id],
            )?;
            // Past its share, the identity gives way its own oldest.
            loop {
                let (runs, bytes, _) = held(&transaction, &identity)?;
                if !limits.share_is_full(runs as usize, bytes as usize, size)
                    || !evict_oldest(&transaction, "pilotage_runs", &identity)?
                {
                    break;
                }
            }
            transaction.execute(
                "INSERT INTO pilotage_runs (identity, run_id, record, size, expires_at) VALUES (?1, ?2, ?3, ?4, ?5)",
                params![identity, run_id, text, size as i64, expires],
            )?;
            if backstop_due {
                backstop(&transaction, &limits)?;
            }
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
        let limits = self.limits;
        self.blocking(move |connection| {
            let transaction = connection.transaction_with_behavior(TransactionBehavior::Immediate)?;
            let now = millis(SystemTime::now());
            let runs = transaction.execute(
                "DELETE FROM pilotage_runs WHERE expires_at IS NOT NULL AND expires_at <= ?1",
                params![now],
            )?;
            transaction.execute("DELETE FROM pilotage_idempotency WHERE expires_at <= ?1", params![now])?;
            backstop(&transaction, &limits)?;
            transaction.commit()?;
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
        if limits.max_idempotency == 0 || limits.max_idempotency_per_identity == 0 {
            return Box::pin(std::future::ready(Ok(())));
        }
        let text = match serde_json::to_string(response) {
            Ok(text) => text,
            Err(error) => return Box::pin(std::future::ready(Err(failed(error)))),
        };
        let (identity, key, fingerprint) = (identity.to_owned(), key.to_owned(), fingerprint.to_owned());
        let expires = millis(SystemTime::now() + limits.idempotency_ttl);
        let backstop_due = self.backstop_due();
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
            loop {
                let (_, _, keys) = held(&transaction, &identity)?;
                if keys <= limits.max_idempotency_per_identity as i64
                    || !evict_oldest(&transaction, "pilotage_idempotency", &identity)?
                {
                    break;
                }
            }
            if backstop_due {
                backstop(&transaction, &limits)?;
            }
            transaction.commit()
        })
    }

    fn ping(&self) -> StoreFuture<'_, ()> {
        self.blocking(|connection| connection.query_row("SELECT 1", [], |_| Ok(())))
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
