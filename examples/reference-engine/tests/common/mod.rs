//! Shared by the engine's test binaries: where the TypeScript SDK and its scripts are and
//! whether they can run, and a server started on a free loopback port, which says where it
//! listens on stderr, killed when dropped.

// Each test binary uses part of this module.
#![allow(dead_code)]

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use serde_json::Value;

/// The workspace's `tests/e2e`: the official TypeScript SDK, pinned, and the scripts on it.
pub fn e2e_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/e2e")
}

/// Whether node and the pinned TypeScript SDK (`npm ci` in tests/e2e) are there. Under
/// `CI=true` their absence fails the test; elsewhere it is skipped, loudly.
pub fn node_available() -> bool {
    let installed = e2e_dir()
        .join("node_modules/@modelcontextprotocol/sdk/package.json")
        .is_file();
    let node = Command::new("node")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if installed && node {
        return true;
    }
    let why = if node {
        "tests/e2e/node_modules is missing (run `npm ci` there)"
    } else {
        "node is not installed"
    };
    assert!(
        std::env::var("CI").as_deref() != Ok("true"),
        "CI=true and the TypeScript MCP SDK cannot run: {why}"
    );
    use std::io::Write as _;
    let _ = writeln!(std::io::stderr(), "SKIPPED: a test with the TypeScript MCP SDK: {why}");
    false
}

/// A server listening over streamable HTTP; killed on drop.
pub struct HttpServer {
    child: Child,
    /// Its endpoint, `http://127.0.0.1:PORT/mcp`.
    pub url: String,
}

impl HttpServer {
    /// The server's process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Waits for the server to exit (after it was killed).
    pub fn wait(&mut self) {
        let _ = self.child.wait();
    }
}

impl Drop for HttpServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Starts `program args...` and waits (at most 30 s) for the `http://` endpoint it prints.
pub fn serve(program: &str, args: &[&str]) -> HttpServer {
    let mut child = Command::new(program)
        .args(args)
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("{program} starts: {e}"));
    let stderr = child.stderr.take().expect("stderr is piped");
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            if let Some(at) = line.find("http://") {
                let _ = tx.send(line[at..].split_whitespace().next().unwrap_or_default().to_owned());
            }
        }
    });
    let url = rx
        .recv_timeout(Duration::from_secs(30))
        .expect("the server says where it listens within 30 s");
    HttpServer { child, url }
}

/// The reference engine over HTTP on a free loopback port, with `args`.
pub fn engine_http(args: &[&str]) -> HttpServer {
    let mut all = vec!["--http", "127.0.0.1:0"];
    all.extend_from_slice(args);
    serve(env!("CARGO_BIN_EXE_reference-engine"), &all)
}

/// `pilotage <args>`, in-process: (exit status, stdout, stderr).
pub fn pilotage<S: AsRef<str>>(args: &[S]) -> (u8, String, String) {
    let (mut out, mut err) = (Vec::new(), Vec::new());
    let argv = std::iter::once("pilotage").chain(args.iter().map(AsRef::as_ref));
    let status = pilotage_cli::cli::run(argv, &mut out, &mut err);
    (
        status,
        String::from_utf8_lossy(&out).into_owned(),
        String::from_utf8_lossy(&err).into_owned(),
    )
}

pub fn json_of<S: AsRef<str> + std::fmt::Debug>(args: &[S]) -> (u8, Value) {
    let (status, out, err) = pilotage(args);
    let value = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{args:?}: not JSON ({e}): {out}\n{err}"));
    (status, value)
}

pub fn write(name: &str, value: &Value) -> String {
    let path = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("pilotage-client-{}-{name}", std::process::id()));
    std::fs::write(&path, value.to_string()).unwrap();
    path.display().to_string()
}
