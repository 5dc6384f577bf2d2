//! The oracle of `cargo xtask agree`: jsonschema 0.61 built on one schema with no network,
//! reading only, with `--base`, the catalogue's own files. Shared, by path, with the scratch
//! crate of `cargo xtask agree --bench`, so that the timed jsonschema validators are built
//! exactly as the ones whose verdicts were compared.

use std::panic::AssertUnwindSafe;
use std::path::PathBuf;

use serde_json::Value;

/// Refuses every external document (no network), except, with `--base`, the catalogue's own
/// files.
pub struct Refuse {
    /// The catalogue whose files are served.
    pub catalogue: Option<Catalogue>,
}

impl jsonschema::Retrieve for Refuse {
    fn retrieve(&self, uri: &jsonschema::Uri<String>) -> Result<Value, Box<dyn std::error::Error + Send + Sync>> {
        let uri = uri.as_str();
        if let Some(found) = self.catalogue.as_ref().and_then(|c| c.load(c.name_of(uri)?)) {
            return Ok(found);
        }
        Err(format!("agree: external documents are not retrieved ({uri})").into())
    }
}

/// `--base URI`: the files of DIR as the documents `URI` + name.
#[derive(Debug, Clone)]
pub struct Catalogue {
    /// The URI every file name is appended to.
    pub base: String,
    /// The folder holding the files.
    pub dir: PathBuf,
}

impl Catalogue {
    /// The file name a reference (fragment removed) names in the catalogue: an absolute URI
    /// under the base, or a relative one (the catalogue's files refer to each other by name).
    pub fn name_of<'a>(&self, reference: &'a str) -> Option<&'a str> {
        let reference = reference.split('#').next().unwrap_or_default();
        let name = match reference.strip_prefix(self.base.as_str()) {
            Some(name) => name,
            None if reference.contains("://") || reference.is_empty() => return None,
            None => reference.trim_start_matches("./"),
        };
        (!name.is_empty() && !name.contains('/')).then_some(name)
    }

    /// The catalogue's file `name` (or `name.json`), parsed.
    pub fn load(&self, name: &str) -> Option<Value> {
        [name.to_owned(), format!("{name}.json")]
            .iter()
            .map(|n| self.dir.join(n))
            .find(|p| p.is_file())
            .and_then(|p| std::fs::read(p).ok())
            .and_then(|b| serde_json::from_slice(&b).ok())
    }
}

/// jsonschema's validator of `schema` (the catalogue's file `file` with `--base`), with its
/// default options; its error's text when it cannot build one (or panics).
pub fn oracle(schema: &Value, file: &str, catalogue: Option<&Catalogue>) -> Result<jsonschema::Validator, String> {
    match std::panic::catch_unwind(AssertUnwindSafe(|| {
        let mut options = jsonschema::options().with_retriever(Refuse {
            catalogue: catalogue.cloned(),
        });
        if let Some(catalogue) = catalogue {
            options = options.with_base_uri(format!("{}{file}", catalogue.base));
        }
        options.build(schema)
    })) {
        Ok(Ok(validator)) => Ok(validator),
        Ok(Err(error)) => Err(error.to_string()),
        Err(_) => Err("jsonschema panicked".to_owned()),
    }
}
