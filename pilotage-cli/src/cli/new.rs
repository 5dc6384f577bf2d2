//! `pilotage new NAME --language ID [--dir PATH] [--path-to-workspace DIR]`: a new engine
//! crate on the server framework (`pilotage-server`), which builds, serves the Language `ID`
//! over stdio or streamable HTTP, and passes `pilotage check --allow-execute` as generated.
//!
//! The crate (`PATH`, default `./NAME`) holds:
//!
//! - `Cargo.toml`: the package `NAME` with its own `[workspace]` table (so that it is never
//!   taken into an enclosing workspace), depending on `pilotage-server` (feature `sqlite`),
//!   `serde`, `serde_json` and `tokio`;
//! - `src/main.rs`: the Language `ID` (declaration, one guide with `## ` topic sections, a
//!   catalog of a read-only and a destructive entry, validate with its diagnostic rules,
//!   execute interpreting the program) and a `main` taking `--http ADDR`, `--stateless` and
//!   `--store memory|sqlite:PATH`, stdio by default. Its text is one file,
//!   `new_template/main.rs.txt`;
//! - `programs/ok.json`, `programs/failing.json`, `programs/invalid.json`: a program that
//!   runs, one whose Run fails and one that does not validate, for `pilotage check`.
//!
//! **Dependencies.** The toolkit's crates are depended on by version (`"0.1"`, from the
//! registry), unless a checkout of the pilotage workspace is given (`--path-to-workspace DIR`,
//! or the environment variable `PILOTAGE_WORKSPACE`): then `pilotage-server` is a path
//! dependency on `DIR/pilotage-server`, and the workspace's `Cargo.lock` is copied into the
//! crate, so that it builds with the versions the workspace is tested with.
//!
//! **Refusals** (exit 2, nothing written): a `NAME` that is not a Cargo package name, an `ID`
//! that is not a Language identifier (`family/version`, the schema's `LanguageIdentifier`), a
//! `PATH` that exists, a `DIR` that is not a pilotage workspace. The crate is written into a
//! temporary directory beside `PATH` and renamed into place, so that a failure to write leaves
//! nothing (exit 1).

use std::io::Write;
use std::path::{Path, PathBuf};

use pilotage_types::{LanguageIdentifier, SchemaDef};
use serde_json::{json, Value};

use super::{Status, FAILED, SUCCESS, UNUSABLE};

/// The engine's source, with the placeholders `{{crate}}`, `{{language_literal}}` (a Rust
/// string literal) and `{{language_text}}` (for comments: escaped, on one line).
pub const MAIN_TEMPLATE: &str = include_str!("new_template/main.rs.txt");

/// The environment variable naming a pilotage workspace when `--path-to-workspace` is absent.
pub const WORKSPACE_ENV: &str = "PILOTAGE_WORKSPACE";

/// The arguments of `pilotage new`.
#[derive(Debug, Clone, clap::Args)]
pub struct Args {
    /// The engine crate's package name (a Cargo package name: ASCII letters, digits, `-` and
    /// `_`, starting with a letter or `_`).
    #[arg(value_name = "NAME")]
    pub name: String,
    /// The identifier of the Language it serves, `family/version` (e.g. `orders/v1`).
    #[arg(long, value_name = "ID")]
    pub language: String,
    /// The directory to create (default `./NAME`); it must not exist.
    #[arg(long, value_name = "PATH")]
    pub dir: Option<PathBuf>,
    /// A checkout of the pilotage workspace: depend on its `pilotage-server` by path and copy
    /// its Cargo.lock (default: $PILOTAGE_WORKSPACE; without either, version "0.1").
    #[arg(long, value_name = "DIR")]
    pub path_to_workspace: Option<PathBuf>,
}

/// Names the package may not take, separated by spaces: Rust keywords (the binary is named
/// after the package), the crates of the standard distribution, cargo's own directory names,
/// and the crates the engine depends on.
const RESERVED: &str = "as async await break const continue crate dyn else enum extern false fn for if impl in \
    let loop match mod move mut pub ref return self Self static struct super trait true type unsafe use where \
    while abstract become box do final gen macro override priv try typeof unsized virtual yield \
    alloc core proc_macro std test build deps examples incremental pilotage_server serde serde_json tokio";

/// Names Windows reserves for devices, separated by spaces (a directory of that name cannot be
/// created there).
const WINDOWS_DEVICES: &str = "con prn aux nul com1 com2 com3 com4 com5 com6 com7 com8 com9 \
    lpt1 lpt2 lpt3 lpt4 lpt5 lpt6 lpt7 lpt8 lpt9";

/// Why `name` is not a package name `pilotage new` writes, if it is not.
pub fn check_package_name(name: &str) -> Result<(), String> {
    let refuse = |why: &str| Err(format!("`{name}` is not a usable Cargo package name: {why}"));
    let Some(first) = name.chars().next() else {
        return refuse("it is empty");
    };
    if let Some(bad) = name
        .chars()
        .find(|c| !(c.is_ascii_alphanumeric() || *c == '-' || *c == '_'))
    {
        return refuse(&format!(
            "{bad:?} is not allowed (ASCII letters, digits, `-` and `_` only)"
        ));
    }
    if !(first.is_ascii_alphabetic() || first == '_') {
        return refuse("it must start with a letter or `_`");
    }
    if name.len() > 64 {
        return refuse("it is longer than 64 characters (the registry's limit)");
    }
    let normalized = name.replace('-', "_");
    if RESERVED
        .split_whitespace()
        .any(|reserved| reserved == normalized || reserved == name)
    {
        return refuse("it is a Rust keyword or a reserved name (or a crate the engine depends on)");
    }
    let lowercase = name.to_ascii_lowercase();
    if WINDOWS_DEVICES.split_whitespace().any(|device| device == lowercase) {
        return refuse("it is a device name on Windows");
    }
    Ok(())
}

/// Why `id` is not a Language identifier, if it is not.
pub fn check_language(id: &str) -> Result<(), String> {
    if LanguageIdentifier::is_valid(&Value::String(id.to_owned())) {
        Ok(())
    } else {
        Err(format!(
            "`{id}` is not a Language identifier: expected family/version, one `/` between two non-empty \
             parts (e.g. orders/v1)"
        ))
    }
}

/// The workspace to depend on by path: `given`, else `$PILOTAGE_WORKSPACE`; made absolute and
/// checked to hold `pilotage-server`.
fn workspace(given: Option<&Path>) -> Result<Option<PathBuf>, String> {
    let (dir, from) = match given {
        Some(dir) => (dir.to_path_buf(), "--path-to-workspace"),
        None => match std::env::var_os(WORKSPACE_ENV).filter(|v| !v.is_empty()) {
            Some(dir) => (PathBuf::from(dir), WORKSPACE_ENV),
            None => return Ok(None),
        },
    };
    let manifest = dir.join("pilotage-server").join("Cargo.toml");
    if !manifest.is_file() {
        return Err(format!(
            "{from} {}: not a pilotage workspace ({} is missing)",
            dir.display(),
            manifest.display()
        ));
    }
    dir.canonicalize()
        .map(Some)
        .map_err(|e| format!("{from} {}: {e}", dir.display()))
}

/// `text` as a TOML basic string.
fn toml_string(text: &str) -> String {
    // A JSON string is a TOML basic string, but for DEL, which TOML wants escaped.
    serde_json::to_string(text)
        .expect("a string serializes")
        .replace('\u{7f}', "\\u007F")
}

/// The generated `Cargo.toml`.
pub fn cargo_toml(name: &str, language: &str, workspace: Option<&Path>) -> String {
    let server = match workspace {
        Some(dir) => format!(
            "{{ path = {}, features = [\"sqlite\"] }}",
            toml_string(&dir.join("pilotage-server").display().to_string())
        ),
        None => "{ version = \"0.1\", features = [\"sqlite\"] }".to_owned(),
    };
    format!(
        "[package]\n\
         name = \"{name}\"\n\
         version = \"0.1.0\"\n\
         edition = \"2021\"\n\
         description = {description}\n\
         publish = false\n\
         \n\
         [dependencies]\n\
         # The server framework; feature `sqlite`: the run store in one SQLite file (--store sqlite:PATH).\n\
         pilotage-server = {server}\n\
         serde = {{ version = \"1\", features = [\"derive\"] }}\n\
         serde_json = \"1\"\n\
         # The program's JSON Schema: programs are checked against it, every fault answered.\n\
         schemars = \"1\"\n\
         tokio = {{ version = \"1\", features = [\"rt-multi-thread\", \"macros\"] }}\n\
         \n\
         # A workspace of its own: never a member of an enclosing one.\n\
         [workspace]\n",
        description = toml_string(&format!("A Pilotage engine serving the Language {language}.")),
    )
}

/// The generated `src/main.rs`.
pub fn main_rs(name: &str, language: &str) -> String {
    MAIN_TEMPLATE
        .replace("{{crate}}", name)
        .replace("{{language_literal}}", &format!("{language:?}"))
        .replace("{{language_text}}", &language.escape_debug().to_string())
}

/// Every file of the crate: (path relative to the crate, content).
pub fn files(name: &str, language: &str, workspace: Option<&Path>) -> Vec<(PathBuf, Vec<u8>)> {
    let program = |value: Value| format!("{value:#}\n").into_bytes();
    vec![
        (
            PathBuf::from("Cargo.toml"),
            cargo_toml(name, language, workspace).into_bytes(),
        ),
        (PathBuf::from("src/main.rs"), main_rs(name, language).into_bytes()),
        (PathBuf::from(".gitignore"), b"/target\n".to_vec()),
        (
            PathBuf::from("programs/ok.json"),
            program(json!({"steps": [
                {"call": "set", "key": "greeting", "value": "hello"},
                {"call": "get", "key": "greeting"}
            ]})),
        ),
        (
            PathBuf::from("programs/failing.json"),
            program(json!({"steps": [{"call": "get", "key": "never-set"}]})),
        ),
        (
            PathBuf::from("programs/invalid.json"),
            program(json!({"steps": [{"call": "delete", "key": "greeting"}]})),
        ),
    ]
}

/// Writes `files` into a temporary directory beside `target`, then renames it to `target`;
/// on any failure the temporary directory is removed.
fn write_crate(target: &Path, files: &[(PathBuf, Vec<u8>)], lock: Option<&Path>) -> Result<(), String> {
    let parent = match target.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent.to_path_buf(),
        _ => PathBuf::from("."),
    };
    std::fs::create_dir_all(&parent).map_err(|e| format!("{}: cannot create: {e}", parent.display()))?;
    let leaf = target.file_name().unwrap_or_default().to_string_lossy();
    let staging = parent.join(format!(".{leaf}.pilotage-new-{}", std::process::id()));
    let written = (|| {
        std::fs::create_dir(&staging).map_err(|e| format!("{}: cannot create: {e}", staging.display()))?;
        for (path, content) in files {
            let path = staging.join(path);
            if let Some(dir) = path.parent() {
                std::fs::create_dir_all(dir).map_err(|e| format!("{}: cannot create: {e}", dir.display()))?;
            }
            std::fs::write(&path, content).map_err(|e| format!("{}: cannot write: {e}", path.display()))?;
        }
        if let Some(lock) = lock.filter(|lock| lock.is_file()) {
            std::fs::copy(lock, staging.join("Cargo.lock"))
                .map_err(|e| format!("{}: cannot copy: {e}", lock.display()))?;
        }
        // Checked again: the directory may have appeared since (a rename would replace an
        // empty one).
        if target.exists() {
            return Err(format!("{}: already exists", target.display()));
        }
        std::fs::rename(&staging, target).map_err(|e| format!("{}: cannot create: {e}", target.display()))
    })();
    if written.is_err() {
        let _ = std::fs::remove_dir_all(&staging);
    }
    written
}

/// Runs `pilotage new`: 0 written, 1 the crate could not be written, 2 a refused name,
/// identifier, directory or workspace (nothing written).
pub fn run(args: &Args, out: &mut dyn Write, err: &mut dyn Write) -> Status {
    let target = args.dir.clone().unwrap_or_else(|| PathBuf::from(&args.name));
    let checked = (|| {
        check_package_name(&args.name)?;
        check_language(&args.language)?;
        if target.exists() || target.symlink_metadata().is_ok() {
            return Err(format!(
                "{}: already exists; `pilotage new` creates a new directory (give another --dir)",
                target.display()
            ));
        }
        workspace(args.path_to_workspace.as_deref())
    })();
    let workspace = match checked {
        Ok(workspace) => workspace,
        Err(message) => {
            let _ = writeln!(err, "error: {message}");
            return UNUSABLE;
        }
    };
    let files = files(&args.name, &args.language, workspace.as_deref());
    let lock = workspace.as_ref().map(|dir| dir.join("Cargo.lock"));
    if let Err(message) = write_crate(&target, &files, lock.as_deref()) {
        let _ = writeln!(err, "error: {message}");
        return FAILED;
    }
    let dependency = match &workspace {
        Some(dir) => format!("pilotage-server by path, from {}", dir.display()),
        None => "pilotage-server 0.1 from the registry".to_owned(),
    };
    let dir = target.display();
    let _ = writeln!(
        out,
        "Created the engine crate `{}` in {dir}, serving the Language {} ({dependency}).\n\
         Next:\n  cd {dir} && cargo build\n  pilotage check --allow-execute --program '{}=programs/ok.json' \
         --failing-program '{}=programs/failing.json' --invalid-program '{}=programs/invalid.json' -- target/debug/{}",
        args.name, args.language, args.language, args.language, args.language, args.name
    );
    SUCCESS
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn package_names() {
        for good in ["my-engine", "engine_2", "_private", "Orders"] {
            assert_eq!(check_package_name(good), Ok(()), "{good}");
        }
        for (bad, why) in [
            ("", "empty"),
            ("2fast", "start with a letter"),
            ("my engine", "' ' is not allowed"),
            ("né", "'é' is not allowed"),
            ("fn", "keyword"),
            ("serde-json", "reserved"),
            ("test", "reserved"),
            ("NUL", "device"),
        ] {
            let message = check_package_name(bad).unwrap_err();
            assert!(
                message.contains(why) && message.contains(&format!("`{bad}`")),
                "{message}"
            );
        }
        assert!(check_package_name(&"a".repeat(65)).unwrap_err().contains("64"));
    }

    #[test]
    fn language_identifiers() {
        assert_eq!(check_language("orders/v1"), Ok(()));
        for bad in ["orders", "orders/v1/x", "/v1", "orders/", ""] {
            assert!(check_language(bad).unwrap_err().contains(&format!("`{bad}`")), "{bad}");
        }
    }

    #[test]
    fn placeholders_are_all_replaced_and_strings_escaped() {
        let main = main_rs("my-engine", "we\"ird\\lang\n/v1");
        assert!(!main.contains("{{crate}}") && !main.contains("{{language_"), "{main}");
        assert!(
            main.contains(r#"const LANGUAGE: &str = "we\"ird\\lang\n/v1";"#),
            "{main}"
        );
        assert!(
            main.lines().all(|line| !line.starts_with("/v1")),
            "no raw newline in a comment"
        );
        let toml = cargo_toml("my-engine", "a\"b/v1", Some(Path::new("/w\"s")));
        assert!(toml.contains(r#"path = "/w\"s/pilotage-server""#), "{toml}");
        assert!(
            toml.contains(r#"description = "A Pilotage engine serving the Language a\"b/v1.""#),
            "{toml}"
        );
        assert!(toml.contains("\n[workspace]\n"), "{toml}");
        let registry = cargo_toml("my-engine", "a/v1", None);
        assert!(
            registry.contains(r#"pilotage-server = { version = "0.1", features = ["sqlite"] }"#),
            "{registry}"
        );
    }
}
