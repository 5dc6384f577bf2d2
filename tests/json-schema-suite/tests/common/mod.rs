//! What the suite's test and benchmark share: the remotes as jsonschema retrieves them, and
//! jsonschema's verdicts on a group (the baseline).

use std::collections::BTreeMap;
use std::path::Path;

use pilotage_json_schema_suite::Group;
use serde_json::Value;

/// The suite's `remotes/`, by the URI its tests know them by.
pub struct Retriever(pub BTreeMap<String, Value>);

impl jsonschema::Retrieve for Retriever {
    fn retrieve(&self, uri: &jsonschema::Uri<String>) -> Result<Value, Box<dyn std::error::Error + Send + Sync>> {
        self.0
            .get(uri.as_str())
            .cloned()
            .ok_or_else(|| format!("no remote {uri}").into())
    }
}

pub fn remotes(suite: &Path) -> BTreeMap<String, Value> {
    fn walk(dir: &Path, base: &Path, out: &mut BTreeMap<String, Value>) {
        for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
            let path = entry.path();
            if path.is_dir() {
                walk(&path, base, out);
            } else if let Some(value) = std::fs::read(&path).ok().and_then(|b| serde_json::from_slice(&b).ok()) {
                let rel = path
                    .strip_prefix(base)
                    .unwrap_or(&path)
                    .to_string_lossy()
                    .replace('\\', "/");
                out.insert(format!("http://localhost:1234/{rel}"), value);
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(&suite.join("remotes"), &suite.join("remotes"), &mut out);
    out
}

/// jsonschema's verdict on each test of a group (`None`: it cannot build the schema).
#[allow(dead_code)] // the benchmark does not use it
pub fn jsonschema_verdicts(
    group: &Group,
    schema: &Value,
    tests: &[Value],
    remotes: &BTreeMap<String, Value>,
) -> Vec<Option<bool>> {
    let validator = jsonschema_validator(group, schema, remotes);
    tests
        .iter()
        .map(|test| validator.as_ref().map(|v| v.is_valid(&test["data"])))
        .collect()
}

/// jsonschema's validator of a group, built as the test builds it.
pub fn jsonschema_validator(
    group: &Group,
    schema: &Value,
    remotes: &BTreeMap<String, Value>,
) -> Option<jsonschema::Validator> {
    let draft = match group.draft {
        "draft7" => jsonschema::Draft::Draft7,
        "draft2019-09" => jsonschema::Draft::Draft201909,
        "draft6" => jsonschema::Draft::Draft6,
        "draft4" => jsonschema::Draft::Draft4,
        _ => jsonschema::Draft::Draft202012,
    };
    let mut options = jsonschema::options();
    if schema.get("$schema").is_none() {
        // As the generator: `$schema` decides; the directory's draft is the default.
        options = options.with_draft(draft);
    }
    options
        .should_validate_formats(
            matches!(group.draft, "draft7" | "draft6" | "draft4") || group.file.starts_with("optional/format/"),
        )
        .with_retriever(Retriever(remotes.clone()))
        .build(schema)
        .ok()
}
