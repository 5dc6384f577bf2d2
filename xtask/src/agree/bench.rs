//! `cargo xtask agree --bench`: the generated validators against jsonschema 0.61 on real
//! schemas, timed (#33's benchmark group over real schemas).
//!
//! The schemas whose every verdict agreed are compiled again, in a release build of a scratch
//! crate of their own (`$AGREE_CRATE_DIR/bench`, target `$AGREE_TARGET_DIR`), beside
//! jsonschema built by the same code (`agree/oracle.rs`) as the verdicts' oracle. Its binary
//! builds every jsonschema validator before timing anything, then checks that both sides still
//! give the same verdict on every instance (a schema where they do not is reported, not timed),
//! and times, for each schema, one pass of `is_valid` over its instances (the ones `agree`
//! generated): batches of passes of at least 200 µs, seven batches a side, the two sides
//! alternating, the median batch's time per pass. Then one pass over every schema in turn
//! (each instance once, the code and data of one schema cold when the next starts), seven
//! rounds a side, median.
//!
//! The report: the aggregate (the sum of per-schema times, ours over theirs: the figure
//! #33's goal of at most 0.5x applies to), the one-pass figure, the distribution of the
//! per-schema ratios and the ten worst schemas.
//!
//! A generated module larger than [`MAX_MODULE_BYTES`] is left out of the timing (named in the
//! report): a release build of SchemaStore's largest modules (utcm-monitor's is 20 MB) takes
//! longer than the rest of the catalogue together.

use std::fmt::Write as _;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Instant;

use serde_json::{json, Value};

/// The largest generated module the release build takes (bytes of source).
pub const MAX_MODULE_BYTES: usize = 2 << 20;

/// One schema to time.
pub struct Schema {
    /// The schema's file name in DIR.
    pub file: String,
    /// Its module name in the scratch crates (`s17`).
    pub module: String,
    /// The generated module's source.
    pub tokens: String,
    /// The instances `agree` generated (both sides agreed on every one).
    pub instances: Vec<Value>,
}

/// The aggregate of a timed run: what `cargo xtask bench` holds against #33's goal.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Figures {
    /// The sum over the timed schemas of the generated validators' time for one pass over the
    /// schema's instances, in nanoseconds.
    pub ours_ns: f64,
    /// The same for jsonschema.
    pub theirs_ns: f64,
    /// How many schemas were timed.
    pub schemas: usize,
    /// How many instances they have between them.
    pub instances: usize,
}

impl Figures {
    /// Ours over theirs.
    pub fn ratio(&self) -> f64 {
        self.ours_ns / self.theirs_ns
    }
}

/// The timing binary's `main`; `TABLE` (module name, validators) and `mod oracle` are written
/// before it.
const MAIN_BODY: &str = r#"
use std::hint::black_box;
use std::time::Instant;

use serde_json::Value;

/// How many passes make a batch of at least 200 µs.
fn calibrate(pass: &dyn Fn() -> usize) -> u64 {
    let mut reps = 1u64;
    loop {
        let start = Instant::now();
        for _ in 0..reps {
            black_box(pass());
        }
        if start.elapsed().as_secs_f64() >= 200e-6 || reps >= 1 << 24 {
            return reps;
        }
        reps *= 2;
    }
}

/// Seconds per pass, over one batch of `reps` passes.
fn batch(pass: &dyn Fn() -> usize, reps: u64) -> f64 {
    let start = Instant::now();
    for _ in 0..reps {
        black_box(pass());
    }
    start.elapsed().as_secs_f64() / reps as f64
}

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

struct Timed {
    module: String,
    check: pilotage_types::validate::runtime::Check,
    theirs: jsonschema::Validator,
    instances: Vec<Value>,
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let plan: Value = serde_json::from_slice(&std::fs::read(&args[1]).expect("the bench plan is readable"))
        .expect("the bench plan is JSON");
    let dir = std::path::PathBuf::from(plan["dir"].as_str().unwrap_or("."));
    let catalogue = plan["base"].as_str().map(|base| oracle::Catalogue {
        base: base.to_owned(),
        dir: dir.clone(),
    });
    let table: std::collections::HashMap<&str, &pilotage_types::validate::Validators> = TABLE.iter().copied().collect();
    let mut timed = Vec::new();
    for item in plan["schemas"].as_array().into_iter().flatten() {
        let module = item["module"].as_str().unwrap_or_default().to_owned();
        let file = item["file"].as_str().unwrap_or_default();
        let Some(check) = table.get(module.as_str()).and_then(|v| v.check(".").ok()) else {
            println!("{module}\tE\tno root check");
            continue;
        };
        let schema: Value = match std::fs::read(dir.join(file)).map_err(|e| e.to_string()).and_then(|b| serde_json::from_slice(&b).map_err(|e| e.to_string())) {
            Ok(schema) => schema,
            Err(error) => {
                println!("{module}\tE\t{error}");
                continue;
            }
        };
        let theirs = match oracle::oracle(&schema, file, catalogue.as_ref()) {
            Ok(validator) => validator,
            Err(error) => {
                println!("{module}\tE\t{}", error.replace(['\n', '\t'], " "));
                continue;
            }
        };
        let instances: Vec<Value> = item["instances"].as_array().cloned().unwrap_or_default();
        let differ = instances
            .iter()
            .filter(|i| pilotage_types::validate::verdict(check, i, false) != theirs.is_valid(i))
            .count();
        if differ > 0 {
            println!("{module}\tE\t{differ} verdicts differ in the release build");
            continue;
        }
        timed.push(Timed { module, check, theirs, instances });
    }
    for t in &timed {
        let ours = || t.instances.iter().filter(|i| pilotage_types::validate::verdict(t.check, black_box(i), false)).count();
        let theirs = || t.instances.iter().filter(|i| t.theirs.is_valid(black_box(i))).count();
        let (ours_reps, theirs_reps) = (calibrate(&ours), calibrate(&theirs));
        let mut ours_times = Vec::new();
        let mut theirs_times = Vec::new();
        for _ in 0..7 {
            ours_times.push(batch(&ours, ours_reps));
            theirs_times.push(batch(&theirs, theirs_reps));
        }
        println!("{}\tT\t{}\t{}\t{}", t.module, median(ours_times) * 1e9, median(theirs_times) * 1e9, t.instances.len());
    }
    let ours_all = || {
        timed
            .iter()
            .map(|t| t.instances.iter().filter(|i| pilotage_types::validate::verdict(t.check, black_box(i), false)).count())
            .sum::<usize>()
    };
    let theirs_all = || timed.iter().map(|t| t.instances.iter().filter(|i| t.theirs.is_valid(black_box(i))).count()).sum::<usize>();
    let mut ours_times = Vec::new();
    let mut theirs_times = Vec::new();
    for _ in 0..7 {
        ours_times.push(batch(&ours_all, 1));
        theirs_times.push(batch(&theirs_all, 1));
    }
    println!("ALL\tP\t{}\t{}", median(ours_times) * 1e9, median(theirs_times) * 1e9);
}
"#;

/// Builds the release scratch crate of `schemas`, runs its timing binary, and returns the
/// report's section and the aggregate (none when nothing could be timed).
pub fn run(schemas: &[Schema], dir: &Path, base: Option<&str>) -> Result<(String, Option<Figures>), String> {
    let started = Instant::now();
    let (kept, too_large): (Vec<&Schema>, Vec<&Schema>) =
        schemas.iter().partition(|s| s.tokens.len() <= MAX_MODULE_BYTES);
    let workspace = crate::codegen::workspace_root();
    let krate = super::crate_dir().join("bench");
    let src = krate.join("src");
    std::fs::create_dir_all(&src).map_err(|e| format!("{}: {e}", src.display()))?;
    let types = workspace.join("pilotage-types");
    let manifest = format!(
        "[package]\nname = \"agree-bench\"\nversion = \"0.0.0\"\nedition = \"2021\"\npublish = false\n\n\
         [dependencies]\npilotage-types = {{ path = {:?}, default-features = false, features = [\"validate\"] }}\n\
         serde_json = \"1\"\njsonschema = {{ version = \"0.61\", default-features = false }}\n\n\
         [profile.release]\ndebug = false\n\n[workspace]\n",
        types.display().to_string()
    );
    super::write_if_changed(&krate.join("Cargo.toml"), &manifest)?;
    // The workspace's lock: the same jsonschema and serde_json as the verdicts' oracle.
    let _ = std::fs::copy(workspace.join("Cargo.lock"), krate.join("Cargo.lock"));
    let wanted: std::collections::BTreeSet<String> = kept.iter().map(|s| format!("{}.rs", s.module)).collect();
    for old in std::fs::read_dir(&src).map_err(|e| e.to_string())?.flatten() {
        let file = old.file_name().to_string_lossy().into_owned();
        if file != "main.rs" && !wanted.contains(&file) {
            let _ = std::fs::remove_file(old.path());
        }
    }
    let mut main = format!(
        "#[path = {:?}]\n#[allow(dead_code)]\nmod oracle;\n\n",
        workspace.join("xtask/src/agree/oracle.rs").display().to_string()
    );
    for schema in &kept {
        super::write_if_changed(&src.join(format!("{}.rs", schema.module)), &schema.tokens)?;
        let _ = writeln!(
            main,
            "#[allow(unused, clippy::all, non_snake_case, non_upper_case_globals, non_camel_case_types)]\nmod {};",
            schema.module
        );
    }
    main.push_str("\nstatic TABLE: &[(&str, &pilotage_types::validate::Validators)] = &[\n");
    for schema in &kept {
        let _ = writeln!(main, "    ({:?}, &{}::VALIDATORS),", schema.module, schema.module);
    }
    main.push_str("];\n");
    main.push_str(MAIN_BODY);
    super::write_if_changed(&src.join("main.rs"), &main)?;
    eprintln!("agree --bench: cargo build --release of {} module(s)", kept.len());
    let output = Command::new(env!("CARGO"))
        .args(["build", "--release", "--quiet", "--message-format=short"])
        .current_dir(&krate)
        .env("CARGO_TARGET_DIR", super::target_dir())
        .env_remove("RUSTFLAGS")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .output()
        .map_err(|e| format!("cargo build of {}: {e}", krate.display()))?;
    if !output.status.success() {
        let text = String::from_utf8_lossy(&output.stderr);
        return Err(format!(
            "the release build of {} failed:\n{}",
            krate.display(),
            text.lines().take(40).collect::<Vec<_>>().join("\n")
        ));
    }
    let built = started.elapsed();
    let plan = json!({
        "dir": dir.display().to_string(),
        "base": base,
        "schemas": kept.iter().map(|s| json!({"module": s.module, "file": s.file, "instances": s.instances})).collect::<Vec<_>>(),
    });
    let plan_file = krate.join("plan.json");
    std::fs::write(&plan_file, serde_json::to_vec(&plan).map_err(|e| e.to_string())?)
        .map_err(|e| format!("{}: {e}", plan_file.display()))?;
    let binary = super::target_dir().join("release").join("agree-bench");
    let output = Command::new(&binary)
        .arg(&plan_file)
        .stderr(Stdio::inherit())
        .output()
        .map_err(|e| format!("{}: {e}", binary.display()))?;
    if !output.status.success() {
        return Err(format!("{} failed: {}", binary.display(), output.status));
    }
    let lines = String::from_utf8_lossy(&output.stdout).into_owned();
    let rows = rows(&kept, &lines);
    Ok((
        report(&too_large, &rows, built.as_secs_f64(), started.elapsed().as_secs_f64()),
        figures(&rows.timed),
    ))
}

/// The timing binary's answer, read.
struct Rows {
    /// (schema file, ours ns, theirs ns, instances) a timed schema.
    timed: Vec<(String, f64, f64, usize)>,
    /// (schema file, why) a schema not timed.
    untimed: Vec<(String, String)>,
    /// One pass over everything: (ours ns, theirs ns).
    pass: Option<(f64, f64)>,
}

/// Reads the timing binary's lines: `MODULE\tT\tOURS_NS\tTHEIRS_NS\tN` for a schema,
/// `MODULE\tE\tREASON` for one not timed, `ALL\tP\tOURS_NS\tTHEIRS_NS` for the one pass over
/// everything.
fn rows(kept: &[&Schema], lines: &str) -> Rows {
    let file_of = |module: &str| {
        kept.iter()
            .find(|s| s.module == module)
            .map_or_else(|| module.to_owned(), |s| s.file.clone())
    };
    let mut rows = Rows {
        timed: Vec::new(),
        untimed: Vec::new(),
        pass: None,
    };
    for line in lines.lines() {
        let fields: Vec<&str> = line.split('\t').collect();
        match fields.as_slice() {
            ["ALL", "P", ours, theirs] => rows.pass = ours.parse::<f64>().ok().zip(theirs.parse::<f64>().ok()),
            [module, "T", ours, theirs, n] => {
                if let (Ok(ours), Ok(theirs), Ok(n)) = (ours.parse(), theirs.parse(), n.parse()) {
                    rows.timed.push((file_of(module), ours, theirs, n));
                }
            }
            [module, "E", reason] => rows.untimed.push((file_of(module), (*reason).to_owned())),
            _ => {}
        }
    }
    rows
}

/// The aggregate of the timed schemas.
fn figures(timed: &[(String, f64, f64, usize)]) -> Option<Figures> {
    (!timed.is_empty()).then(|| Figures {
        ours_ns: timed.iter().map(|r| r.1).sum(),
        theirs_ns: timed.iter().map(|r| r.2).sum(),
        schemas: timed.len(),
        instances: timed.iter().map(|r| r.3).sum(),
    })
}

/// The report's section.
fn report(too_large: &[&Schema], rows: &Rows, built: f64, took: f64) -> String {
    let (mut timed, untimed, pass) = (rows.timed.clone(), &rows.untimed, rows.pass);
    let mut out = String::new();
    let _ = writeln!(
        out,
        "\n## Speed (`--bench`): generated validators vs jsonschema 0.61, `is_valid` on the same instances\n"
    );
    let _ = writeln!(
        out,
        "Release build, jsonschema's validators built before timing; {} schemas timed, {} instances; build {built:.0} s, whole section {took:.0} s.\n",
        timed.len(),
        timed.iter().map(|r| r.3).sum::<usize>()
    );
    if timed.is_empty() {
        let _ = writeln!(out, "Nothing was timed.");
    } else {
        let ours: f64 = timed.iter().map(|r| r.1).sum();
        let theirs: f64 = timed.iter().map(|r| r.2).sum();
        let _ = writeln!(
            out,
            "aggregate (sum of per-schema times):  {:.1} µs vs {:.1} µs = {:.3}x  (#33's goal: at most 0.5x: {})",
            ours / 1e3,
            theirs / 1e3,
            ours / theirs,
            if ours / theirs <= 0.5 { "met" } else { "MISSED" }
        );
        if let Some((ours, theirs)) = pass {
            let _ = writeln!(
                out,
                "one pass over every schema in turn:   {:.1} µs vs {:.1} µs = {:.3}x",
                ours / 1e3,
                theirs / 1e3,
                ours / theirs
            );
        }
        let mut ratios: Vec<f64> = timed.iter().map(|r| r.1 / r.2).collect();
        ratios.sort_by(f64::total_cmp);
        let at = |q: f64| ratios[((ratios.len() - 1) as f64 * q).round() as usize];
        let _ = writeln!(
            out,
            "per-schema ratio: median {:.3}x, p10 {:.3}x, p90 {:.3}x; {} of {} at most 0.5x, {} above 1x",
            at(0.5),
            at(0.1),
            at(0.9),
            ratios.iter().filter(|&&r| r <= 0.5).count(),
            ratios.len(),
            ratios.iter().filter(|&&r| r > 1.0).count()
        );
        timed.sort_by(|a, b| (b.1 / b.2).total_cmp(&(a.1 / a.2)));
        let _ = writeln!(
            out,
            "\n### The ten worst schemas (ratio, ours per pass, theirs per pass, instances)\n"
        );
        for (file, ours, theirs, n) in timed.iter().take(10) {
            let _ = writeln!(
                out,
                "- {file}: {:.3}x ({:.2} µs vs {:.2} µs, {n} instances)",
                ours / theirs,
                ours / 1e3,
                theirs / 1e3
            );
        }
    }
    if !too_large.is_empty() || !untimed.is_empty() {
        let _ = writeln!(out, "\n### Not timed\n");
        for schema in too_large {
            let _ = writeln!(
                out,
                "- {}: generated module of {} bytes, above the {MAX_MODULE_BYTES} the release build takes",
                schema.file,
                schema.tokens.len()
            );
        }
        for (file, reason) in untimed {
            let _ = writeln!(out, "- {file}: {reason}");
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn schema(file: &str, module: &str, bytes: usize) -> Schema {
        Schema {
            file: file.to_owned(),
            module: module.to_owned(),
            tokens: "x".repeat(bytes),
            instances: vec![json!(1)],
        }
    }

    #[test]
    fn the_report_gives_the_aggregate_the_worst_schemas_and_what_was_not_timed() {
        let a = schema("a.json", "s0", 10);
        let b = schema("b.json", "s1", 10);
        let c = schema("c.json", "s2", 10);
        let big = schema("big.json", "s3", MAX_MODULE_BYTES + 1);
        let lines = "s0\tT\t100\t400\t4\ns1\tT\t300\t200\t5\ns2\tE\t1 verdicts differ in the release build\nALL\tP\t1000\t2000\n";
        let kept = [&a, &b, &c];
        let rows = rows(&kept, lines);
        assert_eq!(
            figures(&rows.timed),
            Some(Figures {
                ours_ns: 400.0,
                theirs_ns: 600.0,
                schemas: 2,
                instances: 9
            })
        );
        let text = report(&[&big], &rows, 1.0, 2.0);
        // (100 + 300) / (400 + 200)
        assert!(text.contains("= 0.667x  (#33's goal: at most 0.5x: MISSED)"), "{text}");
        assert!(
            text.contains("one pass over every schema in turn:   1.0 µs vs 2.0 µs = 0.500x"),
            "{text}"
        );
        let worst = text.find("- b.json: 1.500x").expect("b is listed");
        let next = text.find("- a.json: 0.250x").expect("a is listed");
        assert!(worst < next, "the worst first: {text}");
        assert!(
            text.contains("- c.json: 1 verdicts differ in the release build"),
            "{text}"
        );
        assert!(text.contains("- big.json: generated module of"), "{text}");
        assert!(text.contains("2 schemas timed, 9 instances"), "{text}");
    }

    #[test]
    fn a_met_goal_is_reported_as_met() {
        let a = schema("a.json", "s0", 10);
        let text = report(&[], &rows(&[&a], "s0\tT\t100\t400\t4\n"), 1.0, 2.0);
        assert!(text.contains("= 0.250x  (#33's goal: at most 0.5x: met)"), "{text}");
    }
}
