//! `cargo xtask soak`: load, isolation, memory and fault traffic against the reference engine
//! served by the framework, over streamable HTTP with sessions, stateless HTTP and stdio, and
//! the framework's overhead against a bare rmcp server of the same stage functions
//! (`bare-engine`). Loopback only; every loop is bounded in count and time; it stops by
//! itself, prints a table, and exits 1 when a bound is broken.
//!
//! ```text
//! cargo xtask soak [--clients N] [--loops N] [--sessions N] [--release] [--quick] [--bin-dir DIR]
//! ```
//!
//! Defaults (100 clients, 5 loops each, 10,000 abandoned sessions) finish in about 40 s on 2
//! cores with `--release` (after the release build); `--quick` (CI) is 10 clients, 2 loops,
//! 1,000 sessions and no overhead figures. `--bin-dir DIR` takes `reference-engine` and
//! `bare-engine` from DIR instead of building them: `.ci/run` passes the binaries its
//! `cargo test --workspace` already built, since a build of one package resolves features of
//! its own and would compile (and store) a second copy of the dependencies.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitCode, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use pilotage_client::{ClientOptions, PilotageClient, RawResult, Revision, Target};
use serde_json::{json, Map, Value};

/// How much traffic to send.
#[derive(Debug, Clone)]
struct Options {
    clients: usize,
    loops: usize,
    sessions: usize,
    release: bool,
    /// Prebuilt engines (`--bin-dir`): nothing is built.
    bin_dir: Option<PathBuf>,
    /// The CI soak: small counts, and no overhead figures (ratios of a debug build at a few
    /// hundred calls are noise, not a measurement).
    quick: bool,
}

/// One line of the table: what was measured, the figure, the bound, whether it held.
struct Row {
    check: String,
    figure: String,
    bound: String,
    ok: bool,
}

#[derive(Default)]
struct Report(Mutex<Vec<Row>>);

impl Report {
    fn row(&self, check: impl Into<String>, figure: impl Into<String>, bound: impl Into<String>, ok: bool) {
        self.0.lock().unwrap_or_else(|e| e.into_inner()).push(Row {
            check: check.into(),
            figure: figure.into(),
            bound: bound.into(),
            ok,
        });
    }
}

fn workspace() -> PathBuf {
    crate::codegen::workspace_root()
}

/// An engine process, killed on drop.
struct Served {
    child: Child,
    url: String,
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The resident set size of process `pid`, in KiB (Linux `/proc`; 0 when unknown).
fn rss_kib(pid: u32) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()
        .and_then(|status| {
            status
                .lines()
                .find_map(|l| l.strip_prefix("VmRSS:"))
                .and_then(|v| v.split_whitespace().next().and_then(|n| n.parse().ok()))
        })
        .unwrap_or(0)
}

impl Served {
    /// The resident set size of the engine, in KiB.
    fn rss_kib(&self) -> u64 {
        rss_kib(self.child.id())
    }

    fn alive(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(None))
    }

    fn addr(&self) -> String {
        self.url
            .trim_start_matches("http://")
            .trim_end_matches("/mcp")
            .to_owned()
    }
}

/// Starts `binary args...` and waits (at most 30 s) for the endpoint it prints.
/// An engine logging at `filter` (RUST_LOG) into the file `log`, as an operator runs it; its
/// URL read from the file.
fn serve_logging(binary: &Path, args: &[&str], filter: &str, log: &Path) -> Result<Served, String> {
    let file = std::fs::File::create(log).map_err(|e| format!("{}: {e}", log.display()))?;
    let child = Command::new(binary)
        .args(args)
        .env("RUST_LOG", filter)
        .stderr(Stdio::from(file))
        .spawn()
        .map_err(|e| format!("{}: {e}", binary.display()))?;
    let started = Instant::now();
    while started.elapsed() < Duration::from_secs(30) {
        let text = std::fs::read_to_string(log).unwrap_or_default();
        if let Some(at) = text.find("http://") {
            let url = text[at..].split_whitespace().next().unwrap_or_default().to_owned();
            return Ok(Served { child, url });
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    Err(format!("{} did not say where it listens within 30 s", binary.display()))
}

fn serve(binary: &Path, args: &[&str]) -> Result<Served, String> {
    let mut child = Command::new(binary)
        .args(args)
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("{}: {e}", binary.display()))?;
    let stderr = child.stderr.take().ok_or("stderr is piped")?;
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        use std::io::BufRead;
        for line in std::io::BufReader::new(stderr).lines().map_while(Result::ok) {
            if let Some(at) = line.find("http://") {
                let _ = tx.send(line[at..].split_whitespace().next().unwrap_or_default().to_owned());
            }
        }
    });
    let url = rx
        .recv_timeout(Duration::from_secs(30))
        .map_err(|_| format!("{} did not say where it listens within 30 s", binary.display()))?;
    Ok(Served { child, url })
}

fn program() -> Value {
    json!({"steps": [{"id": "p", "kind": "call", "capability": "cap_read_user_profile",
        "with": {"user_id": "$.input.userId"}}], "output": {"name": "$.steps.p.output.name"}})
}

fn object(value: Value) -> Map<String, Value> {
    value.as_object().cloned().unwrap_or_default()
}

/// What a loop measured.
#[derive(Debug, Default)]
struct Tally {
    latencies: Vec<Duration>,
    errors: Vec<String>,
    runs: Vec<String>,
}

/// One call: its latency recorded, an unexpected answer recorded as an error.
async fn timed(client: &PilotageClient, tally: &mut Tally, tool: &str, arguments: Value) -> Option<Value> {
    let started = Instant::now();
    let answered = client.call_raw(tool, object(arguments)).await;
    tally.latencies.push(started.elapsed());
    match answered {
        Ok(RawResult::Result {
            is_error: false,
            structured_content: Some(content),
        }) => Some(content),
        other => {
            tally.errors.push(format!("{tool}: {other:?}"));
            None
        }
    }
}

/// The whole loop once: manifest, guide index and fetch, catalog list and get, validate,
/// execute with store, trace fetch of its own run.
async fn whole_loop(client: &PilotageClient, tally: &mut Tally) {
    timed(client, tally, "pilotage_manifest", json!({})).await;
    timed(client, tally, "pilotage_get_guide", json!({"language": "workflow/v1"})).await;
    timed(
        client,
        tally,
        "pilotage_get_guide",
        json!({"language": "workflow/v1", "id": "intro"}),
    )
    .await;
    timed(
        client,
        tally,
        "pilotage_catalog",
        json!({"language": "workflow/v1", "verb": "list"}),
    )
    .await;
    timed(
        client,
        tally,
        "pilotage_catalog",
        json!({"language": "workflow/v1", "verb": "get", "id": "cap_read_user_profile"}),
    )
    .await;
    timed(client, tally, "validate_workflow", json!({"workflow": program()})).await;
    let done = timed(
        client,
        tally,
        "run_workflow",
        json!({"workflow": program(), "input": {"userId": "42"}, "store": true}),
    )
    .await;
    if let Some(run_id) = done.and_then(|d| d["run_id"].as_str().map(str::to_owned)) {
        timed(client, tally, "trace_run", json!({"run_id": run_id})).await;
        tally.runs.push(run_id);
    }
}

async fn connect(target: &Target, stateless: bool) -> Result<PilotageClient, String> {
    let options = ClientOptions {
        timeout: Duration::from_secs(30),
        revision: if stateless {
            Revision::Stateless
        } else {
            Revision::Handshake
        },
        client_name: "pilotage-soak".to_owned(),
        ..ClientOptions::default()
    };
    PilotageClient::connect(target, options)
        .await
        .map_err(|e| e.to_string())
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    if sorted.is_empty() {
        return Duration::ZERO;
    }
    sorted[((sorted.len() as f64 - 1.0) * p).round() as usize]
}

/// `clients` concurrent clients of `target`, `loops` loops each; then each asks for other
/// clients' runs and random ids, which must answer exactly as an unknown run. (throughput
/// calls/s, p50, p99, errors, isolation violations).
async fn load(
    target: Target,
    stateless: bool,
    clients: usize,
    loops: usize,
    isolated: bool,
) -> (f64, Duration, Duration, Vec<String>, Vec<String>) {
    let started = Instant::now();
    let all_runs: Arc<Mutex<Vec<Vec<String>>>> = Arc::new(Mutex::new(Vec::new()));
    let mut tasks = Vec::new();
    for _ in 0..clients {
        let target = target.clone();
        tasks.push(tokio::spawn(async move {
            let mut tally = Tally::default();
            match connect(&target, stateless).await {
                Ok(client) => {
                    for _ in 0..loops {
                        whole_loop(&client, &mut tally).await;
                    }
                    let _ = client.close().await;
                }
                Err(error) => tally.errors.push(format!("connect: {error}")),
            }
            tally
        }));
    }
    let mut latencies = Vec::new();
    let mut errors = Vec::new();
    for task in tasks {
        match tokio::time::timeout(Duration::from_secs(600), task).await {
            Ok(Ok(tally)) => {
                latencies.extend(tally.latencies);
                errors.extend(tally.errors);
                all_runs.lock().unwrap_or_else(|e| e.into_inner()).push(tally.runs);
            }
            other => errors.push(format!("a client did not finish: {other:?}")),
        }
    }
    let elapsed = started.elapsed();
    latencies.sort();
    let throughput = latencies.len() as f64 / elapsed.as_secs_f64();
    // Isolation: a fresh client asks for a sample of every client's runs and random ids.
    let mut violations = Vec::new();
    if let Ok(client) = connect(&target, stateless).await {
        let unknown = client
            .call_raw("trace_run", object(json!({"run_id": pilotage_server::new_run_id()})))
            .await;
        let runs = all_runs.lock().unwrap_or_else(|e| e.into_inner()).clone();
        let sample: Vec<String> = runs.iter().flat_map(|r| r.iter().take(2).cloned()).take(200).collect();
        let random: Vec<String> = (0..50).map(|_| pilotage_server::new_run_id()).collect();
        let asked: Vec<(String, bool)> = sample
            .into_iter()
            .map(|id| (id, isolated))
            .chain(random.into_iter().map(|id| (id, true)))
            .collect();
        for (run_id, must_be_unknown) in asked {
            let answer = client.call_raw("trace_run", object(json!({"run_id": run_id}))).await;
            if must_be_unknown && format!("{answer:?}") != format!("{unknown:?}") {
                violations.push(format!("{run_id}: {answer:?}, not {unknown:?}"));
            }
        }
        let _ = client.close().await;
    } else {
        violations.push("the isolation client could not connect".to_owned());
    }
    (
        throughput,
        percentile(&latencies, 0.5),
        percentile(&latencies, 0.99),
        errors,
        violations,
    )
}

/// A raw HTTP/1.1 POST to `addr` (`Connection: close`): the status, 0 when there was none.
fn post(addr: &str, body: &[u8], session: Option<&str>) -> u16 {
    post_as(addr, body, session, None)
}

/// [`post`] from the client a trusted proxy names in `X-Forwarded-For` (`forwarded_for`).
fn post_as(addr: &str, body: &[u8], session: Option<&str>, forwarded_for: Option<&str>) -> u16 {
    let Ok(mut stream) = std::net::TcpStream::connect(addr) else {
        return 0;
    };
    let _ = stream.set_read_timeout(Some(Duration::from_secs(10)));
    let mut request = format!(
        "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: {}\r\nConnection: close\r\n",
        body.len()
    );
    if let Some(session) = session {
        request.push_str(&format!(
            "Mcp-Session-Id: {session}\r\nMcp-Protocol-Version: 2025-11-25\r\n"
        ));
    }
    if let Some(client) = forwarded_for {
        request.push_str(&format!("X-Forwarded-For: {client}\r\n"));
    }
    request.push_str("\r\n");
    if stream
        .write_all(request.as_bytes())
        .and_then(|()| stream.write_all(body))
        .is_err()
    {
        return 0;
    }
    let mut head = [0u8; 64];
    let read = stream.read(&mut head).unwrap_or(0);
    String::from_utf8_lossy(&head[..read])
        .split_whitespace()
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or(0)
}

const INITIALIZE: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"soak","version":"1"}}}"#;

/// Builds the engines (debug, or release) and returns the binaries' directory.
fn build(release: bool) -> Result<PathBuf, String> {
    let mut cargo = Command::new(env!("CARGO"));
    cargo.args(["build", "--quiet", "-p", "pilotage-reference-engine", "--bins"]);
    if release {
        cargo.arg("--release");
    }
    let status = cargo.current_dir(workspace()).status().map_err(|e| e.to_string())?;
    if !status.success() {
        return Err("building the engines failed".to_owned());
    }
    let target = crate::bench::target_dir(&workspace(), std::env::var_os("CARGO_TARGET_DIR").as_deref());
    Ok(target.join(if release { "release" } else { "debug" }))
}

/// The directory of prebuilt engines (`--bin-dir`), once both binaries are found in it.
fn prebuilt(dir: &Path) -> Result<PathBuf, String> {
    for name in ["reference-engine", "bare-engine"] {
        let path = dir.join(name);
        if !path.is_file() {
            return Err(format!(
                "--bin-dir {}: no `{name}` there (build it first: cargo build -p pilotage-reference-engine --bins)",
                dir.display()
            ));
        }
    }
    Ok(dir.to_path_buf())
}

fn ms(d: Duration) -> String {
    format!("{:.2} ms", d.as_secs_f64() * 1000.0)
}

async fn soak(options: &Options, bin: &Path, report: &Report) -> Result<(), String> {
    let engine = bin.join("reference-engine");
    let idle = "2";
    // --- load and isolation, HTTP with sessions ---------------------------------------
    let mut sessions = serve(
        &engine,
        &[
            "--http",
            "127.0.0.1:0",
            "--max-sessions",
            "20000",
            // One peer (this process) opens every session of the memory test below.
            "--max-sessions-per-peer",
            "20000",
            "--idle-timeout",
            idle,
        ],
    )?;
    let rss_start = sessions.rss_kib();
    let peak = Arc::new(std::sync::atomic::AtomicU64::new(rss_start));
    let watching = Arc::new(std::sync::atomic::AtomicBool::new(true));
    let pid = sessions.child.id();
    let sampler = {
        let (peak, watching) = (peak.clone(), watching.clone());
        std::thread::spawn(move || {
            while watching.load(std::sync::atomic::Ordering::Relaxed) {
                peak.fetch_max(rss_kib(pid), std::sync::atomic::Ordering::Relaxed);
                std::thread::sleep(Duration::from_millis(50));
            }
        })
    };
    let (throughput, p50, p99, errors, violations) = load(
        Target::Url(sessions.url.clone()),
        false,
        options.clients,
        options.loops,
        true,
    )
    .await;
    report.row(
        format!(
            "load, HTTP sessions: {} clients x {} loops",
            options.clients, options.loops
        ),
        format!("{throughput:.0} calls/s, p50 {}, p99 {}", ms(p50), ms(p99)),
        "0 errors",
        errors.is_empty(),
    );
    for error in errors.iter().take(3) {
        eprintln!("  error: {error}");
    }
    report.row(
        "isolation, HTTP sessions: other sessions' runs and random ids",
        format!("{} answered otherwise than an unknown run", violations.len()),
        "0",
        violations.is_empty(),
    );
    for violation in violations.iter().take(3) {
        eprintln!("  violation: {violation}");
    }

    // --- abandoned sessions and memory ------------------------------------------------
    let rss_before_sessions = sessions.rss_kib();
    let addr = sessions.addr();
    let opened = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let refused = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let per_thread = options.sessions.div_ceil(8);
    let workers: Vec<_> = (0..8)
        .map(|_| {
            let (addr, opened, refused) = (addr.clone(), opened.clone(), refused.clone());
            std::thread::spawn(move || {
                for _ in 0..per_thread {
                    match post(&addr, INITIALIZE.as_bytes(), None) {
                        200 => opened.fetch_add(1, std::sync::atomic::Ordering::Relaxed),
                        _ => refused.fetch_add(1, std::sync::atomic::Ordering::Relaxed),
                    };
                }
            })
        })
        .collect();
    for worker in workers {
        let _ = worker.join();
    }
    let rss_open = sessions.rss_kib();
    // Idle expiry: the sessions close after --idle-timeout; wait for the sweeps.
    tokio::time::sleep(Duration::from_secs(5)).await;
    let rss_after = sessions.rss_kib();
    watching.store(false, std::sync::atomic::Ordering::Relaxed);
    let _ = sampler.join();
    let peak = peak.load(std::sync::atomic::Ordering::Relaxed);
    let opened = opened.load(std::sync::atomic::Ordering::Relaxed);
    report.row(
        format!("{} sessions opened and abandoned", options.sessions),
        format!(
            "{opened} opened, {} refused; RSS {} MiB before, {} MiB open",
            refused.load(std::sync::atomic::Ordering::Relaxed),
            rss_before_sessions / 1024,
            rss_open / 1024
        ),
        "all opened (cap 20,000)",
        opened == per_thread * 8,
    );
    // Bound: after expiry the RSS is within 64 MiB of what it was before the sessions (the
    // allocator keeps some pages), and far below a leak of every session (~52 KB each).
    let bound = rss_before_sessions + 64 * 1024;
    report.row(
        "RSS after idle expiry",
        format!(
            "start {} MiB, peak {} MiB, after {} MiB",
            rss_start / 1024,
            peak / 1024,
            rss_after / 1024
        ),
        format!("<= {} MiB (before the sessions + 64)", bound / 1024),
        rss_after <= bound,
    );
    {
        let capped = serve(
            &engine,
            &["--http", "127.0.0.1:0", "--max-sessions", "50", "--idle-timeout", idle],
        )?;
        let statuses: Vec<u16> = (0..60)
            .map(|_| post(&capped.addr(), INITIALIZE.as_bytes(), None))
            .collect();
        let accepted = statuses.iter().filter(|s| **s == 200).count();
        let busy = statuses.iter().filter(|s| **s == 503).count();
        tokio::time::sleep(Duration::from_secs(4)).await;
        let after = post(&capped.addr(), INITIALIZE.as_bytes(), None);
        report.row(
            "session table cap (50): 60 newcomers, then idle expiry",
            format!("{accepted} accepted, {busy} refused 503; after expiry: {after}"),
            "60 accepted (the idle longest gave way), 0 refused, then 200",
            accepted == 60 && busy == 0 && after == 200,
        );
    }
    {
        // One peer opens twice the cap while another runs the whole loop: the loop is served,
        // within its usual latency (first measured alone).
        let flooded = serve(
            &engine,
            &[
                "--http",
                "127.0.0.1:0",
                "--max-sessions",
                "50",
                "--max-sessions-per-peer",
                "25",
                "--trusted-proxy",
                "127.0.0.1",
                "--idle-timeout",
                "60",
            ],
        )?;
        let target = Target::Url(flooded.url.clone());
        let (_, alone_p50, alone_p99, alone_errors, _) = load(target.clone(), false, 1, options.loops, false).await;
        let addr = flooded.addr();
        let flood = std::thread::spawn(move || {
            (0..100)
                .map(|_| post_as(&addr, INITIALIZE.as_bytes(), None, Some("198.51.100.7")))
                .filter(|status| *status == 200)
                .count()
        });
        let (_, p50, p99, errors, _) = load(target, false, 1, options.loops, false).await;
        let flooded_open = flood.join().unwrap_or(0);
        let within = p99 <= alone_p99 * 5 + Duration::from_millis(50);
        report.row(
            "one peer opens 100 sessions (cap 50, 25 a peer) while another runs the loop",
            format!(
                "flood: {flooded_open} served; loop: {} errors, p50 {} (alone {}), p99 {} (alone {})",
                errors.len() + alone_errors.len(),
                ms(p50),
                ms(alone_p50),
                ms(p99),
                ms(alone_p99)
            ),
            "0 errors, p99 within 5x alone + 50 ms",
            errors.is_empty() && alone_errors.is_empty() && within,
        );
    }
    {
        let small = serve(&engine, &["--http", "127.0.0.1:0", "--stateless", "--max-runs", "20"])?;
        let client = connect(&Target::Url(small.url.clone()), true).await?;
        let mut first = None;
        let mut tally = Tally::default();
        for _ in 0..40 {
            let done = timed(
                &client,
                &mut tally,
                "run_workflow",
                json!({"workflow": program(), "input": {"userId": "1"}}),
            )
            .await;
            first = first.or(done.and_then(|d| d["run_id"].as_str().map(str::to_owned)));
        }
        let oldest = client
            .call_raw("trace_run", object(json!({"run_id": first.unwrap_or_default()})))
            .await;
        let evicted = matches!(&oldest, Ok(RawResult::Result { is_error: true, .. }));
        let _ = client.close().await;
        report.row(
            "run store cap (20 runs): 40 stored",
            format!("the first run {}", if evicted { "evicted" } else { "still kept" }),
            "the oldest evicted",
            evicted && tally.errors.is_empty(),
        );
    }

    // --- faults, each followed by a whole correct loop --------------------------------
    let mut faults: Vec<(String, bool)> = Vec::new();
    // Clients that disconnect mid-execute.
    let execute = json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call",
        "params": {"name": "run_workflow", "arguments": {"workflow": program(), "input": {"userId": "1"}}}})
    .to_string();
    for _ in 0..50 {
        if let Ok(mut stream) = std::net::TcpStream::connect(&addr) {
            let request = format!(
                "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nMcp-Protocol-Version: 2026-07-28\r\nContent-Length: {}\r\n\r\n{execute}",
                execute.len()
            );
            let _ = stream.write_all(request.as_bytes());
        }
    }
    faults.push(("50 clients disconnect mid-execute".to_owned(), sessions.alive()));
    // Malformed JSON-RPC.
    let huge_id = format!(r#"{{"jsonrpc":"2.0","id":{},"method":"ping"}}"#, "9".repeat(100_000));
    let malformed: Vec<Vec<u8>> = vec![
        br#"{"jsonrpc":"2.0","id":1,"method":"initialize","par"#.to_vec(),
        br#"{"jsonrpc":2,"id":{},"method":5}"#.to_vec(),
        huge_id.into_bytes(),
        br#"{"jsonrpc":"2.0","id":1,"method":"no/such/method","params":{}}"#.to_vec(),
        b"\xff\xfe not json".to_vec(),
        br#"[]"#.to_vec(),
    ];
    let statuses: Vec<u16> = malformed.iter().map(|body| post(&addr, body, None)).collect();
    let malformed_ok = statuses.iter().all(|s| (400..500).contains(s) || *s == 200);
    faults.push((
        format!("malformed JSON-RPC (statuses {statuses:?})"),
        malformed_ok && sessions.alive(),
    ));
    // A body over the limit.
    let large = vec![b' '; 5 * 1024 * 1024];
    let status = post(&addr, &large, None);
    faults.push((
        format!("a 5 MiB body (status {status})"),
        status == 413 && sessions.alive(),
    ));
    // A slow client trickling its body while others are served.
    let slow = {
        let addr = addr.clone();
        std::thread::spawn(move || {
            if let Ok(mut stream) = std::net::TcpStream::connect(&addr) {
                let _ = stream.write_all(
                    format!("POST /mcp HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n")
                        .as_bytes(),
                );
                for _ in 0..30 {
                    if stream.write_all(b" ").is_err() {
                        break;
                    }
                    std::thread::sleep(Duration::from_millis(100));
                }
            }
        })
    };
    let served_meanwhile = {
        let started = Instant::now();
        let (_, _, _, errors, _) = load(Target::Url(sessions.url.clone()), false, 2, 1, true).await;
        errors.is_empty() && started.elapsed() < Duration::from_secs(10)
    };
    let _ = slow.join();
    faults.push((
        "a slow client trickles its body for 3 s".to_owned(),
        served_meanwhile && sessions.alive(),
    ));
    for (name, ok) in &faults {
        let (_, _, _, errors, _) = load(Target::Url(sessions.url.clone()), false, 1, 1, true).await;
        report.row(
            format!("fault: {name}"),
            if errors.is_empty() {
                "then the whole loop answered"
            } else {
                "then the loop failed"
            },
            "still serving",
            *ok && errors.is_empty(),
        );
    }
    drop(sessions);

    // A Language that panics and one that hangs, served by the framework.
    let (panics, hangs) = faulty_language().await?;
    report.row(
        "fault: the Language panics",
        panics.0,
        "internal, still serving",
        panics.1,
    );
    report.row(
        "fault: the Language hangs",
        hangs.0,
        "bounds_exceeded within the deadline",
        hangs.1,
    );

    // Bounded work per requester: one floods with slow executes, another is served.
    let (flood, other) = bounded_work().await?;
    report.row(
        "one session sends 24 slow executes at once (bound 8)",
        flood.0,
        "8 run, 16 bounds_exceeded",
        flood.1,
    );
    report.row(
        "meanwhile another session runs executes",
        other.0,
        "0 errors, p99 within 5x alone + 50 ms",
        other.1,
    );

    // A stdio client that closes its input mid-call.
    let mut child = Command::new(&engine)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| e.to_string())?;
    if let Some(mut stdin) = child.stdin.take() {
        let call = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
            "params": {"name": "run_workflow", "arguments": {"workflow": program()}}});
        let _ = writeln!(stdin, "{INITIALIZE}");
        let _ = writeln!(stdin, r#"{{"jsonrpc":"2.0","method":"notifications/initialized"}}"#);
        let _ = writeln!(stdin, "{call}");
    }
    let started = Instant::now();
    let exited = loop {
        match child.try_wait() {
            Ok(Some(status)) => break Some(status),
            _ if started.elapsed() > Duration::from_secs(10) => break None,
            _ => std::thread::sleep(Duration::from_millis(50)),
        }
    };
    let mut stderr = String::new();
    if let Some(mut err) = child.stderr.take() {
        let _ = err.read_to_string(&mut stderr);
    }
    let _ = child.kill();
    let clean = exited.is_some() && !stderr.contains("panicked");
    report.row(
        "fault: a stdio client closes its input mid-call",
        format!("exited {exited:?} in {}", ms(started.elapsed())),
        "exits cleanly within 10 s",
        clean,
    );

    // --- stateless HTTP and stdio loads -------------------------------------------------
    let stateless = serve(&engine, &["--http", "127.0.0.1:0", "--stateless"])?;
    let (throughput, p50, p99, errors, violations) = load(
        Target::Url(stateless.url.clone()),
        true,
        options.clients,
        options.loops,
        false,
    )
    .await;
    report.row(
        format!(
            "load, stateless HTTP (2026-07-28): {} clients x {} loops",
            options.clients, options.loops
        ),
        format!("{throughput:.0} calls/s, p50 {}, p99 {}", ms(p50), ms(p99)),
        "0 errors; random ids not_found",
        errors.is_empty() && violations.is_empty(),
    );
    drop(stateless);
    let stdio_clients = options.clients.clamp(1, 4);
    let stdio = Target::Command {
        program: engine.display().to_string(),
        args: Vec::new(),
    };
    let (throughput, p50, p99, errors, _) = load(stdio, false, stdio_clients, options.loops, true).await;
    report.row(
        format!(
            "load, stdio: {stdio_clients} clients (a process each) x {} loops",
            options.loops
        ),
        format!("{throughput:.0} calls/s, p50 {}, p99 {}", ms(p50), ms(p99)),
        "0 errors",
        errors.is_empty(),
    );

    // --- two engine processes on one Postgres -----------------------------------------------
    if let (false, Ok(url)) = (options.quick, std::env::var("PILOTAGE_POSTGRES_URL")) {
        scale(options, &engine, &url, report).await?;
    }

    // --- overhead against the bare rmcp server --------------------------------------------
    if options.quick {
        eprintln!("soak: --quick measures no overhead (run `cargo xtask soak --release` for it)");
        return Ok(());
    }
    overhead(options, bin, report).await
}

/// The framework against `bare-engine` on the same stage functions: validate, execute and
/// trace fetch over stateless HTTP, interleaved rounds, each figure the median of the rounds.
async fn overhead(options: &Options, bin: &Path, report: &Report) -> Result<(), String> {
    let framework = serve(&bin.join("reference-engine"), &["--http", "127.0.0.1:0", "--stateless"])?;
    let bare = serve(&bin.join("bare-engine"), &["--http", "127.0.0.1:0", "--stateless"])?;
    let clients = options.clients.clamp(1, 32);
    let calls = options.loops.max(2) * 10;
    let run = |url: String| async move {
        let started = Instant::now();
        let mut tasks = Vec::new();
        for _ in 0..clients {
            let url = url.clone();
            tasks.push(tokio::spawn(async move {
                let mut tally = Tally::default();
                if let Ok(client) = connect(&Target::Url(url), true).await {
                    for _ in 0..calls {
                        timed(&client, &mut tally, "validate_workflow", json!({"workflow": program()})).await;
                        let done = timed(
                            &client,
                            &mut tally,
                            "run_workflow",
                            json!({"workflow": program(), "input": {"userId": "1"}}),
                        )
                        .await;
                        if let Some(id) = done.and_then(|d| d["run_id"].as_str().map(str::to_owned)) {
                            timed(&client, &mut tally, "trace_run", json!({"run_id": id})).await;
                        }
                    }
                    let _ = client.close().await;
                }
                tally
            }));
        }
        let mut latencies = Vec::new();
        let mut errors = 0;
        for task in tasks {
            if let Ok(tally) = task.await {
                errors += tally.errors.len();
                latencies.extend(tally.latencies);
            }
        }
        latencies.sort();
        (
            latencies.len() as f64 / started.elapsed().as_secs_f64(),
            percentile(&latencies, 0.99),
            errors,
        )
    };
    let mut throughput = Vec::new();
    let mut p99 = Vec::new();
    let mut errors = 0;
    for _ in 0..3 {
        let (bare_tps, bare_p99, bare_errors) = run(bare.url.clone()).await;
        let (ours_tps, ours_p99, ours_errors) = run(framework.url.clone()).await;
        errors += bare_errors + ours_errors;
        throughput.push(ours_tps / bare_tps);
        p99.push(ours_p99.as_secs_f64() / bare_p99.as_secs_f64().max(1e-9));
    }
    throughput.sort_by(f64::total_cmp);
    p99.sort_by(f64::total_cmp);
    let (throughput, p99) = (throughput[1], p99[1]);
    report.row(
        format!("overhead: throughput, framework / bare rmcp ({clients} clients, stateless HTTP, median of 3)"),
        format!("{throughput:.3}"),
        ">= 0.9",
        throughput >= 0.9 && errors == 0,
    );
    report.row(
        "overhead: p99 latency, framework / bare rmcp",
        format!("{p99:.3}"),
        "<= 1.2",
        p99 <= 1.2,
    );
    drop(framework);
    drop(bare);
    // The cost of an operator's log: `info` into a file against no logging at all.
    let dir = std::env::temp_dir();
    let (info_log, off_log) = (
        dir.join(format!("pilotage-soak-info-{}.log", std::process::id())),
        dir.join(format!("pilotage-soak-off-{}.log", std::process::id())),
    );
    let args = ["--http", "127.0.0.1:0", "--stateless"];
    // The engines' default filter: info, the MCP SDK's own chatter at warn.
    let logging = serve_logging(&bin.join("reference-engine"), &args, "info,rmcp=warn", &info_log)?;
    let silent = serve_logging(&bin.join("reference-engine"), &args, "off", &off_log)?;
    let mut ratios = Vec::new();
    let mut errors = 0;
    for _ in 0..3 {
        let (off_tps, _, off_errors) = run(silent.url.clone()).await;
        let (info_tps, _, info_errors) = run(logging.url.clone()).await;
        errors += off_errors + info_errors;
        ratios.push(info_tps / off_tps);
    }
    ratios.sort_by(f64::total_cmp);
    let lines = std::fs::read_to_string(&info_log).map_or(0, |t| t.lines().count());
    drop(logging);
    drop(silent);
    let _ = (std::fs::remove_file(&info_log), std::fs::remove_file(&off_log));
    report.row(
        format!("logging: throughput, RUST_LOG=info,rmcp=warn into a file / off ({clients} clients, median of 3)"),
        format!("{:.3} ({lines} log lines)", ratios[1]),
        ">= 0.95",
        ratios[1] >= 0.95 && errors == 0,
    );
    Ok(())
}

/// Throughput of two reference engines on one Postgres store (stateless HTTP, the clients split
/// between them) against one engine with all the clients: what a second instance adds.
async fn scale(options: &Options, engine: &Path, url: &str, report: &Report) -> Result<(), String> {
    let args = [
        "--http",
        "127.0.0.1:0",
        "--stateless",
        "--store",
        url,
        // Stateless without an identity: every client is the one anonymous requester.
        "--max-runs-per-identity",
        "100000",
        "--max-executes-per-identity",
        "1000",
    ];
    let clients = options.clients.clamp(2, 64);
    let one = serve(engine, &args)?;
    let (alone, _, _, alone_errors, _) = load(Target::Url(one.url.clone()), true, clients, options.loops, false).await;
    drop(one);
    let (first, second) = (serve(engine, &args)?, serve(engine, &args)?);
    let half = clients / 2;
    let (a, b) = tokio::join!(
        load(Target::Url(first.url.clone()), true, half, options.loops, false),
        load(
            Target::Url(second.url.clone()),
            true,
            clients - half,
            options.loops,
            false
        ),
    );
    let errors = alone_errors.len() + a.3.len() + b.3.len();
    let both = a.0 + b.0;
    report.row(
        format!(
            "two engine processes on one Postgres / one ({clients} clients, stateless, {} cores)",
            cores()
        ),
        format!("{:.2} ({both:.0} calls/s against {alone:.0})", both / alone.max(1e-9)),
        "0 errors (the ratio is stated)",
        errors == 0,
    );
    Ok(())
}

/// The machine's cores, for the figures that depend on them.
fn cores() -> usize {
    std::thread::available_parallelism().map_or(1, usize::from)
}

/// A Language whose runs take 400 ms when asked, served with sessions on loopback: one
/// session sends 24 slow executes at once (the framework's bound is 8 a requester), while
/// another session runs quick ones, first alone and then beside the flood.
async fn bounded_work() -> Result<((String, bool), (String, bool)), String> {
    use pilotage_server::prelude::*;
    struct Slow;
    impl Language for Slow {
        type Program = Value;
        fn declaration(&self) -> Declaration {
            Declaration::new("slow/v1", "Slow").with_destructive(false)
        }
        async fn validate(&self, _: &Value, _: Option<&Value>, _: &StageContext) -> Validated {
            Validated::valid()
        }
        async fn execute(&self, run: ExecuteInput<Value>, _: &StageContext) -> Result<Ran, RequestError> {
            if run.program["slow"] == true {
                tokio::time::sleep(Duration::from_millis(400)).await;
            }
            Ok(Ran::success(1, []))
        }
    }
    let engine = Engine::builder("slow", "1")
        .language(Slow)
        .build()
        .map_err(|e| e.to_string())?;
    let router = engine
        .http_router("/mcp", HttpOptions::default())
        .map_err(|e| e.to_string())?;
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .map_err(|e| e.to_string())?;
    let url = format!("http://{}/mcp", listener.local_addr().map_err(|e| e.to_string())?);
    let server = tokio::spawn(async move { axum::serve(listener, router).await });
    let flooder = Arc::new(connect(&Target::Url(url.clone()), false).await?);
    let other = connect(&Target::Url(url), false).await?;
    async fn quick(client: &PilotageClient) -> (bool, Duration) {
        let started = Instant::now();
        let answer = client.call_raw("slow_v1_execute", object(json!({"program": {}}))).await;
        (
            matches!(answer, Ok(RawResult::Result { is_error: false, .. })),
            started.elapsed(),
        )
    }
    let percentile = |mut times: Vec<Duration>, p: f64| {
        times.sort();
        times[((times.len() - 1) as f64 * p) as usize]
    };
    let mut alone = Vec::new();
    for _ in 0..20 {
        alone.push(quick(&other).await.1);
    }
    let floods: Vec<_> = (0..24)
        .map(|_| {
            let flooder = flooder.clone();
            tokio::spawn(async move {
                flooder
                    .call_raw("slow_v1_execute", object(json!({"program": {"slow": true}})))
                    .await
            })
        })
        .collect();
    let mut beside = Vec::new();
    let mut errors = 0;
    for _ in 0..20 {
        let (ok, took) = quick(&other).await;
        errors += usize::from(!ok);
        beside.push(took);
    }
    let (mut ran, mut refused) = (0, 0);
    for flood in floods {
        match flood.await {
            Ok(Ok(RawResult::Result { is_error: false, .. })) => ran += 1,
            Ok(Ok(RawResult::Result {
                is_error: true,
                structured_content: Some(content),
                ..
            })) if content["error"]["kind"] == "bounds_exceeded" => refused += 1,
            _ => {}
        }
    }
    server.abort();
    let (alone_p99, beside_p50, beside_p99) = (
        percentile(alone.clone(), 0.99),
        percentile(beside.clone(), 0.5),
        percentile(beside, 0.99),
    );
    Ok((
        (
            format!("{ran} ran, {refused} bounds_exceeded"),
            ran == 8 && refused == 16,
        ),
        (
            format!(
                "{errors} errors; p50 {}, p99 {} (alone: p50 {}, p99 {})",
                ms(beside_p50),
                ms(beside_p99),
                ms(percentile(alone.clone(), 0.5)),
                ms(alone_p99)
            ),
            errors == 0 && beside_p99 <= alone_p99 * 5 + Duration::from_millis(50),
        ),
    ))
}

/// A Language whose execute panics or hangs, served by the framework on loopback: what the
/// requests answered, and whether the engine answered a normal request after.
async fn faulty_language() -> Result<((String, bool), (String, bool)), String> {
    use pilotage_server::prelude::*;
    struct Faulty;
    impl Language for Faulty {
        type Program = Value;
        fn declaration(&self) -> Declaration {
            Declaration::new("faulty/v1", "Faulty")
        }
        async fn validate(&self, _: &Value, _: Option<&Value>, _: &StageContext) -> Validated {
            Validated::valid()
        }
        async fn execute(&self, run: ExecuteInput<Value>, _: &StageContext) -> Result<Ran, RequestError> {
            match run.program["do"].as_str() {
                Some("panic") => panic!("the faulty Language panics, as the soak asks"),
                Some("hang") => {
                    tokio::time::sleep(Duration::from_secs(3600)).await;
                    Ok(Ran::success(0, []))
                }
                _ => Ok(Ran::success(1, [])),
            }
        }
    }
    // The Language's panic is on purpose: keep its message out of the soak's output.
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let text = info
            .payload()
            .downcast_ref::<&str>()
            .map(|s| (*s).to_owned())
            .unwrap_or_default();
        if !text.contains("as the soak asks") {
            previous(info);
        }
    }));
    let engine = Engine::builder("faulty", "1")
        .language(Faulty)
        .execute_deadline(Duration::from_millis(500))
        .build()
        .map_err(|e| e.to_string())?;
    let router = engine
        .http_router("/mcp", HttpOptions::stateless())
        .map_err(|e| e.to_string())?;
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .map_err(|e| e.to_string())?;
    let url = format!("http://{}/mcp", listener.local_addr().map_err(|e| e.to_string())?);
    let server = tokio::spawn(async move { axum::serve(listener, router).await });
    let client = connect(&Target::Url(url), true).await?;
    let kind = |answer: &Result<RawResult, pilotage_client::ClientError>| match answer {
        Ok(RawResult::Result {
            structured_content: Some(content),
            ..
        }) => content["error"]["kind"].as_str().unwrap_or("none").to_owned(),
        other => format!("{other:?}"),
    };
    let mut results = Vec::new();
    for program in ["panic", "hang"] {
        let started = Instant::now();
        let answer = client
            .call_raw("faulty_v1_execute", object(json!({"program": {"do": program}})))
            .await;
        let after = client
            .call_raw("faulty_v1_execute", object(json!({"program": {"do": "ok"}})))
            .await;
        let served = matches!(after, Ok(RawResult::Result { is_error: false, .. }));
        let expected = if program == "panic" {
            "internal"
        } else {
            "bounds_exceeded"
        };
        results.push((
            format!("{} in {}", kind(&answer), ms(started.elapsed())),
            kind(&answer) == expected && served,
        ));
    }
    let _ = client.close().await;
    server.abort();
    let hangs = results.pop().ok_or("no answer")?;
    let panics = results.pop().ok_or("no answer")?;
    Ok((panics, hangs))
}

fn parse(args: &[String]) -> Result<Options, String> {
    let mut options = Options {
        clients: 100,
        loops: 5,
        sessions: 10_000,
        release: false,
        bin_dir: None,
        quick: false,
    };
    let mut args = args.iter();
    while let Some(arg) = args.next() {
        let mut number = |name: &str| -> Result<usize, String> {
            args.next()
                .and_then(|v| v.parse().ok())
                .filter(|n| *n > 0)
                .ok_or_else(|| format!("{name} needs a positive number"))
        };
        match arg.as_str() {
            "--clients" => options.clients = number("--clients")?,
            "--loops" => options.loops = number("--loops")?,
            "--sessions" => options.sessions = number("--sessions")?,
            "--release" => options.release = true,
            "--bin-dir" => {
                let dir = args.next().ok_or("--bin-dir needs a directory")?;
                options.bin_dir = Some(PathBuf::from(dir));
            }
            "--quick" => {
                options.clients = 10;
                options.loops = 2;
                options.sessions = 1000;
                options.quick = true;
            }
            other => return Err(format!("unknown argument `{other}`")),
        }
    }
    Ok(options)
}

/// The entry point of `cargo xtask soak`.
pub fn main(args: &[String]) -> ExitCode {
    // The engines it starts log at `warn` unless told otherwise: the soak measures serving, and
    // its logging row sets its own filter.
    if std::env::var_os("RUST_LOG").is_none() {
        std::env::set_var("RUST_LOG", "warn");
    }
    let options = match parse(args) {
        Ok(options) => options,
        Err(message) => {
            eprintln!("error: {message}\nusage: cargo xtask soak [--clients N] [--loops N] [--sessions N] [--release] [--quick] [--bin-dir DIR]");
            return ExitCode::from(2);
        }
    };
    let built = match &options.bin_dir {
        Some(dir) => prebuilt(dir),
        None => build(options.release),
    };
    let bin = match built {
        Ok(bin) => bin,
        Err(message) => {
            eprintln!("error: {message}");
            return ExitCode::from(2);
        }
    };
    let runtime = match tokio::runtime::Builder::new_multi_thread().enable_all().build() {
        Ok(runtime) => runtime,
        Err(error) => {
            eprintln!("error: {error}");
            return ExitCode::from(2);
        }
    };
    let report = Report::default();
    let started = Instant::now();
    let outcome = runtime.block_on(async {
        tokio::time::timeout(Duration::from_secs(900), soak(&options, &bin, &report))
            .await
            .unwrap_or_else(|_| Err("the soak did not finish within 900 s".to_owned()))
    });
    let rows = report.0.into_inner().unwrap_or_else(|e| e.into_inner());
    println!("{:<78} {:<58} {:<40} ok", "check", "measured", "bound");
    for row in &rows {
        println!(
            "{:<78} {:<58} {:<40} {}",
            row.check,
            row.figure,
            row.bound,
            if row.ok { "yes" } else { "NO" }
        );
    }
    let broken = rows.iter().filter(|r| !r.ok).count();
    println!(
        "soak: {} checks, {broken} bound(s) broken, {:.0} s ({} build)",
        rows.len(),
        started.elapsed().as_secs_f64(),
        if options.release { "release" } else { "debug" }
    );
    match outcome {
        Err(message) => {
            eprintln!("error: {message}");
            ExitCode::from(1)
        }
        Ok(()) if broken > 0 => ExitCode::from(1),
        Ok(()) => ExitCode::SUCCESS,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn bin_dir_is_taken_and_checked() {
        let options = parse(&args(&["--quick", "--bin-dir", "target/debug"])).unwrap();
        assert_eq!(options.bin_dir.as_deref(), Some(Path::new("target/debug")));
        assert!(options.quick);
        assert_eq!(parse(&args(&["--bin-dir"])).unwrap_err(), "--bin-dir needs a directory");
        let empty = std::env::temp_dir().join(format!("pilotage-soak-bin-dir-{}", std::process::id()));
        std::fs::create_dir_all(&empty).unwrap();
        let error = prebuilt(&empty).unwrap_err();
        assert!(error.contains("no `reference-engine` there"), "{error}");
        std::fs::write(empty.join("reference-engine"), b"").unwrap();
        let error = prebuilt(&empty).unwrap_err();
        assert!(error.contains("no `bare-engine` there"), "{error}");
        std::fs::write(empty.join("bare-engine"), b"").unwrap();
        assert_eq!(prebuilt(&empty).unwrap(), empty);
        std::fs::remove_dir_all(&empty).unwrap();
    }
}
