//! `pilotage new`: the crate it writes builds against this workspace's `pilotage-server` and
//! `pilotage check --allow-execute` finds the engine clean, over stdio and over HTTP with a
//! SQLite run store; a bad name, a bad Language identifier, an existing directory and a
//! directory that is not a pilotage workspace are refused with exit 2, naming the value, and
//! nothing is written.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};

use serde_json::Value;

/// The pilotage workspace this test belongs to.
fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("pilotage-cli is a workspace member")
        .canonicalize()
        .unwrap()
}

/// The workspace's target directory (where its dependencies are already compiled).
fn target_dir() -> PathBuf {
    match std::env::var_os("CARGO_TARGET_DIR") {
        Some(dir) if Path::new(&dir).is_absolute() => PathBuf::from(dir),
        Some(dir) => workspace().join(dir),
        None => Path::new(env!("CARGO_TARGET_TMPDIR"))
            .parent()
            .expect("the tmp directory is in the target directory")
            .to_path_buf(),
    }
}

/// A fresh, empty scratch directory for one test.
fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("pilotage-new-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// The `pilotage` binary with `args`, in `cwd`, without $PILOTAGE_WORKSPACE.
fn pilotage(cwd: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_pilotage"))
        .args(args)
        .current_dir(cwd)
        .env_remove("PILOTAGE_WORKSPACE")
        .output()
        .expect("pilotage runs")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// Every entry under `dir`, recursively, relative to it.
fn listing(dir: &Path) -> Vec<String> {
    let mut found = Vec::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(at) = pending.pop() {
        for entry in std::fs::read_dir(&at).unwrap() {
            let path = entry.unwrap().path();
            found.push(path.strip_prefix(dir).unwrap().display().to_string());
            if path.is_dir() {
                pending.push(path);
            }
        }
    }
    found.sort();
    found
}

/// `pilotage check --format json ARGS`, in-process: (exit status, report).
fn check(args: &[&str]) -> (u8, Value) {
    let (mut out, mut err) = (Vec::new(), Vec::new());
    let argv = ["pilotage", "check", "--format", "json", "--timeout", "60"]
        .into_iter()
        .chain(args.iter().copied());
    let status = pilotage_cli::cli::run(argv, &mut out, &mut err);
    let report =
        serde_json::from_slice(&out).unwrap_or_else(|e| panic!("not JSON ({e}): {}\n{}", text(&out), text(&err)));
    (status, report)
}

fn status_of(report: &Value, rule: &str) -> String {
    report["results"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["rule"] == rule)
        .map(|r| {
            format!(
                "{} {}",
                r["status"].as_str().unwrap_or("?"),
                r["reason"].as_str().unwrap_or("")
            )
        })
        .unwrap_or_else(|| "missing".to_owned())
        .trim_end()
        .to_owned()
}

/// The engine over HTTP, killed on drop.
struct Served(Child, String);

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Starts `engine` with `args` and waits (at most 60 s) for the endpoint it prints.
fn serve(engine: &Path, args: &[&str]) -> Served {
    let mut child = Command::new(engine)
        .args(args)
        .stderr(Stdio::piped())
        .spawn()
        .expect("the engine starts");
    let stderr = child.stderr.take().expect("piped");
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            if let Some(at) = line.find("http://") {
                let _ = tx.send(line[at..].split_whitespace().next().unwrap_or_default().to_owned());
            }
        }
    });
    let url = rx
        .recv_timeout(std::time::Duration::from_secs(60))
        .expect("the engine says where it listens within 60 s");
    Served(child, url)
}

#[test]
fn a_new_engine_builds_and_pilotage_check_finds_it_clean() {
    let dir = scratch("build");
    let crate_dir = dir.join("demo");
    let workspace = workspace();
    let created = pilotage(
        &dir,
        &[
            "new",
            "demo-engine",
            "--language",
            "demo/v1",
            "--dir",
            crate_dir.to_str().unwrap(),
            "--path-to-workspace",
            workspace.to_str().unwrap(),
        ],
    );
    assert!(created.status.success(), "{}", text(&created.stderr));
    assert!(
        text(&created.stdout).contains("demo-engine"),
        "{}",
        text(&created.stdout)
    );
    assert_eq!(
        listing(&crate_dir),
        [
            ".gitignore",
            "Cargo.lock",
            "Cargo.toml",
            "programs",
            "programs/failing.json",
            "programs/invalid.json",
            "programs/ok.json",
            "src",
            "src/main.rs"
        ]
    );
    assert!(
        listing(&dir).iter().all(|p| p.starts_with("demo")),
        "no staging directory is left: {:?}",
        listing(&dir)
    );
    let manifest = std::fs::read_to_string(crate_dir.join("Cargo.toml")).unwrap();
    let server = workspace.join("pilotage-server").display().to_string();
    assert!(
        manifest.contains(&format!(
            "pilotage-server = {{ path = {server:?}, features = [\"sqlite\"] }}"
        )),
        "{manifest}"
    );
    assert!(
        manifest.contains("\n[workspace]\n"),
        "a workspace of its own: {manifest}"
    );
    let main = std::fs::read_to_string(crate_dir.join("src/main.rs")).unwrap();
    assert!(main.contains("const LANGUAGE: &str = \"demo/v1\";"), "{main}");

    // The build reuses the workspace's compiled dependencies: same target directory, same
    // profile settings (the workspace's .cargo/config.toml), same locked versions (the copied
    // Cargo.lock).
    let mut cargo = Command::new(env!("CARGO"));
    cargo.args(["build", "--offline"]);
    let config = workspace.join(".cargo/config.toml");
    if config.is_file() {
        cargo.arg("--config").arg(&config);
    }
    let built = cargo
        .current_dir(&crate_dir)
        .env("CARGO_TARGET_DIR", target_dir())
        .env_remove("RUSTFLAGS")
        .output()
        .expect("cargo runs");
    assert!(
        built.status.success(),
        "the generated crate builds:\n{}",
        text(&built.stderr)
    );
    let engine = target_dir()
        .join("debug")
        .join(format!("demo-engine{}", std::env::consts::EXE_SUFFIX));
    assert!(engine.is_file(), "{}", engine.display());

    let programs = crate_dir.join("programs");
    let flag = |file: &str| format!("demo/v1={}", programs.join(file).display());
    let (ok, failing, invalid) = (flag("ok.json"), flag("failing.json"), flag("invalid.json"));
    let probes = [
        "--allow-execute",
        "--program",
        ok.as_str(),
        "--failing-program",
        failing.as_str(),
        "--invalid-program",
        invalid.as_str(),
    ];
    let store = format!("sqlite:{}", dir.join("runs.db").display());
    let served = serve(&engine, &["--http", "127.0.0.1:0", "--store", &store]);
    let engine_path = engine.display().to_string();
    let targets: [(&str, Vec<&str>); 2] = [
        ("stdio", vec!["--", &engine_path]),
        ("http, sqlite store", vec!["--url", &served.1]),
    ];
    for (label, target) in targets {
        let args: Vec<&str> = probes.iter().copied().chain(target).collect();
        let (status, report) = check(&args);
        assert_eq!(report["findings"], Value::Array(Vec::new()), "{label}: {report:#}");
        assert_eq!(status, 0, "{label}: {report:#}");
        for rule in [
            "3.1/manifest-tool-answers",
            "4.1/guide-forms",
            "4.2/catalog-list",
            "4.3/run-and-trace",
            "4.5/destructive-hint-risk",
            "4.6/runnable-selection",
            "7.1/invalid-program-diagnostics",
            "7.1/failed-run-outcome",
            "7.1/undeclared-sub-feature",
            "9.5/unknown-run-not-found",
            "10.1-8/structured-content",
            "10.1-9/request-error-channel",
        ] {
            assert_eq!(status_of(&report, rule), "passed", "{label}: {rule}: {report:#}");
        }
    }
    assert!(
        dir.join("runs.db").is_file(),
        "--store sqlite:PATH keeps the runs in PATH"
    );
    drop(served);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn refusals_name_the_value_exit_2_and_write_nothing() {
    let dir = scratch("refusals");
    let target = dir.join("engine");
    let target_arg = target.to_str().unwrap();
    let workspace = workspace();
    let nowhere = dir.join("nowhere");
    for (args, named) in [
        (
            vec!["new", "2fast", "--language", "demo/v1", "--dir", target_arg],
            "`2fast`",
        ),
        (
            vec!["new", "my engine", "--language", "demo/v1", "--dir", target_arg],
            "`my engine`",
        ),
        (
            vec!["new", "tokio", "--language", "demo/v1", "--dir", target_arg],
            "`tokio`",
        ),
        (
            vec!["new", "demo-engine", "--language", "demo", "--dir", target_arg],
            "`demo`",
        ),
        (
            vec!["new", "demo-engine", "--language", "demo/v1/x", "--dir", target_arg],
            "`demo/v1/x`",
        ),
        (
            vec![
                "new",
                "demo-engine",
                "--language",
                "demo/v1",
                "--dir",
                target_arg,
                "--path-to-workspace",
                nowhere.to_str().unwrap(),
            ],
            "not a pilotage workspace",
        ),
        (vec!["new", "demo-engine", "--dir", target_arg], "--language"),
    ] {
        let refused = pilotage(&dir, &args);
        let message = text(&refused.stderr);
        assert_eq!(refused.status.code(), Some(2), "{args:?}: {message}");
        assert!(message.contains(named), "{args:?}: the error names {named}: {message}");
        assert_eq!(listing(&dir), Vec::<String>::new(), "{args:?}: nothing written");
    }

    // An existing directory is left as it was.
    std::fs::create_dir(&target).unwrap();
    std::fs::write(target.join("keep.txt"), "mine").unwrap();
    let refused = pilotage(
        &dir,
        &["new", "demo-engine", "--language", "demo/v1", "--dir", target_arg],
    );
    let message = text(&refused.stderr);
    assert_eq!(refused.status.code(), Some(2), "{message}");
    assert!(
        message.contains(target_arg) && message.contains("already exists"),
        "{message}"
    );
    assert_eq!(listing(&dir), ["engine", "engine/keep.txt"]);
    // So is an existing NAME in the current directory, without --dir.
    let refused = pilotage(&dir, &["new", "engine", "--language", "demo/v1"]);
    assert_eq!(refused.status.code(), Some(2), "{}", text(&refused.stderr));
    assert_eq!(listing(&dir), ["engine", "engine/keep.txt"]);

    // Without --dir the crate is ./NAME; without a workspace the dependency is by version,
    // and $PILOTAGE_WORKSPACE stands for --path-to-workspace.
    let created = pilotage(&dir, &["new", "registry-engine", "--language", "demo/v1"]);
    assert!(created.status.success(), "{}", text(&created.stderr));
    let manifest = std::fs::read_to_string(dir.join("registry-engine/Cargo.toml")).unwrap();
    assert!(
        manifest.contains("pilotage-server = { version = \"0.1\", features = [\"sqlite\"] }"),
        "{manifest}"
    );
    assert!(!dir.join("registry-engine/Cargo.lock").exists());
    let created = Command::new(env!("CARGO_BIN_EXE_pilotage"))
        .args(["new", "env-engine", "--language", "demo/v1"])
        .current_dir(&dir)
        .env("PILOTAGE_WORKSPACE", &workspace)
        .output()
        .unwrap();
    assert!(created.status.success(), "{}", text(&created.stderr));
    let manifest = std::fs::read_to_string(dir.join("env-engine/Cargo.toml")).unwrap();
    assert!(manifest.contains("path = "), "{manifest}");
    let _ = std::fs::remove_dir_all(&dir);
}
