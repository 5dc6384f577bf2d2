//! Runs that outlive a process and span many (Part III 4.3 "one trace, two doors", 8.1): two
//! engine processes on one SQLite file and on one Postgres database, a run executed through
//! one and fetched through the other over stateless HTTP; an engine killed with SIGKILL after
//! a stored run and restarted on the same file, the run fetchable within its retention and
//! gone after it; and isolation between identities unchanged across processes.

mod common;

use std::time::Duration;

use serde_json::{json, Value};

use common::{json_of, write};

fn program() -> String {
    write(
        "store-program.json",
        &json!({"steps": [{"id": "p", "kind": "call", "capability": "cap_read_user_profile",
            "with": {"user_id": "$.input.userId"}}], "output": {"name": "$.steps.p.output.name"}}),
    )
}

/// Executes the workflow through `url`: the run id.
fn execute(url: &str, stateless: bool) -> String {
    let program = program();
    let input = write("store-input.json", &json!({"userId": "42"}));
    let mut args = vec![
        "call",
        "--language",
        "workflow/v1",
        "--stage",
        "execute",
        "--program",
        &program,
        "--input",
        &input,
        "--format",
        "json",
        "--url",
        url,
    ];
    if stateless {
        args.push("--stateless");
    }
    let (status, run) = json_of(&args);
    assert_eq!(status, 0, "{run}");
    run["structured_content"]["run_id"].as_str().unwrap().to_owned()
}

/// Fetches `run_id` through `url`: (exit status, report).
fn fetch(url: &str, run_id: &str, stateless: bool) -> (u8, Value) {
    let mut args = vec![
        "call",
        "--language",
        "workflow/v1",
        "--stage",
        "trace",
        "--run-id",
        run_id,
        "--format",
        "json",
        "--url",
        url,
    ];
    if stateless {
        args.push("--stateless");
    }
    json_of(&args)
}

fn engine(store: &str, extra: &[&str]) -> common::HttpServer {
    let args: Vec<&str> = ["--http", "127.0.0.1:0", "--store", store]
        .into_iter()
        .chain(extra.iter().copied())
        .collect();
    common::serve(env!("CARGO_BIN_EXE_reference-engine"), &args)
}

fn two_engines_share_runs(store: &str) {
    let one = engine(store, &["--stateless"]);
    let two = engine(store, &["--stateless"]);
    for stateless in [false, true] {
        let run_id = execute(&one.url, stateless);
        let (status, fetched) = fetch(&two.url, &run_id, stateless);
        assert_eq!(
            status, 0,
            "{store}: a run executed on one engine is fetched on the other: {fetched}"
        );
        assert_eq!(fetched["structured_content"]["run_id"], run_id.as_str());
        assert_eq!(fetched["structured_content"]["output"]["name"], "Amira Hassan");
    }
    // Sessions are per process, and a session's runs are its own: a run stored through a
    // session of one engine is not found through another session, on either engine.
    let sessions_one = engine(store, &[]);
    let sessions_two = engine(store, &[]);
    let run_id = execute(&sessions_one.url, false);
    for url in [&sessions_one.url, &sessions_two.url] {
        let (status, fetched) = fetch(url, &run_id, false);
        assert_eq!(
            (status, fetched["kind"].as_str()),
            (1, Some("not_found")),
            "{store}: {fetched}"
        );
    }
}

#[test]
fn two_engines_on_one_sqlite_file_share_runs() {
    let path =
        std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("pilotage-shared-{}.db", std::process::id()));
    remove_database(&path);
    two_engines_share_runs(&format!("sqlite:{}", path.display()));
    remove_database(&path);
}

#[test]
fn two_engines_on_one_postgres_share_runs() {
    let Ok(url) = std::env::var("PILOTAGE_POSTGRES_URL") else {
        assert!(
            std::env::var("CI").as_deref() != Ok("true"),
            "CI=true and PILOTAGE_POSTGRES_URL is not set (.ci/run starts a Postgres server and sets it)"
        );
        eprintln!("SKIPPED: two engines on one Postgres: PILOTAGE_POSTGRES_URL is not set");
        return;
    };
    two_engines_share_runs(&url);
}

#[test]
fn a_killed_engine_restarted_on_its_sqlite_file_still_has_its_runs_within_retention() {
    let path =
        std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("pilotage-restart-{}.db", std::process::id()));
    remove_database(&path);
    let store = format!("sqlite:{}", path.display());
    let retention = ["--stateless", "--retention", "3"];
    let mut first = engine(&store, &retention);
    let run_id = execute(&first.url, true);
    // SIGKILL: no shutdown, no flush beyond what the store committed.
    let pid = first.pid();
    let killed = std::process::Command::new("kill")
        .args(["-9", &pid.to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    first.wait();
    let second = engine(&store, &retention);
    let (status, fetched) = fetch(&second.url, &run_id, true);
    assert_eq!(status, 0, "fetchable after a restart, within retention: {fetched}");
    assert_eq!(fetched["structured_content"]["outcome"]["ok"], true);
    std::thread::sleep(Duration::from_millis(3500));
    let (status, gone) = fetch(&second.url, &run_id, true);
    assert_eq!(
        (status, gone["kind"].as_str()),
        (1, Some("not_found")),
        "gone after retention: {gone}"
    );
    drop(second);
    remove_database(&path);
}

/// Removes an SQLite database and the write-ahead log and shared-memory files beside it (a
/// killed engine leaves them).
fn remove_database(path: &std::path::Path) {
    for suffix in ["", "-wal", "-shm"] {
        let mut file = path.as_os_str().to_owned();
        file.push(suffix);
        let _ = std::fs::remove_file(file);
    }
}
