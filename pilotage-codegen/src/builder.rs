//! The build-script API, in the style of `prost-build`: types and validators for an engine
//! author's own schemas, generated into `OUT_DIR` (or any directory) by the same pipeline as
//! `cargo xtask regen` ([`crate::generate_types`]).
//!
//! ```no_run
//! // build.rs
//! fn main() -> Result<(), pilotage_codegen::CodegenError> {
//!     pilotage_codegen::Builder::new().schema("schemas/program.schema.json").compile()?;
//!     Ok(())
//! }
//! // src/lib.rs: include!(concat!(env!("OUT_DIR"), "/program.rs"));  // `pub mod program { .. }`
//! ```
//!
//! Each schema `NAME.schema.json` (or `NAME.json`) becomes `OUT_DIR/NAME.rs`, one module
//! `pub mod NAME` holding a type per definition (and the root, when it describes a value), a
//! `SchemaDef` impl per type, the schema embedded byte for byte (`SCHEMA_JSON`, from a copy
//! beside the file) and its validators (`validators()`). The generated code needs
//! `pilotage-types` (feature `validate`), `serde` and `serde_json`. Under a build script the
//! builder prints `cargo:rerun-if-changed` for every file it reads; a file is rewritten only
//! when its contents change, so dependants are not rebuilt for nothing. Errors name the file
//! and the JSON Pointer, and nothing is written for a schema that fails.
//!
//! **Schema sets.** The schemas of one builder are one set: a `$ref` from one to another (by
//! relative path, `other.schema.json#/$defs/X`, or by the other's `$id`) is resolved, and so
//! is a `$ref` to a URI mapped to a file with [`Builder::document`]. Each schema is known by
//! its `file://` URI. A `$ref` to a document outside the set is typed `serde_json::Value`,
//! validated as any value, and reported as a warning. Across documents the validators
//! resolve every reference; the types of a referenced document are those of its own module.

use std::path::{Path, PathBuf};

use crate::error::CodegenError;
use crate::{GeneratedBy, NameTable, TypesSettings};

/// Generates Rust modules from JSON Schema files: [`Builder::new`], one [`Builder::schema`]
/// per file (with its [`Builder::names`] table, if any), then [`Builder::compile`].
#[derive(Debug, Clone, Default)]
pub struct Builder {
    schemas: Vec<(PathBuf, Option<PathBuf>)>,
    out_dir: Option<PathBuf>,
    out_file: Option<PathBuf>,
    documents: Vec<(String, PathBuf)>,
    default_draft: Option<crate::validators::Draft>,
    assert_formats: Option<bool>,
    tuning: crate::validators::Tuning,
    generated_by: Option<GeneratedBy>,
}

/// The `file://` URI of `path` (made absolute), by which a schema of the set is known.
fn file_uri(path: &Path) -> String {
    let absolute = std::fs::canonicalize(path).unwrap_or_else(|_| {
        std::env::current_dir()
            .map(|dir| dir.join(path))
            .unwrap_or_else(|_| path.to_path_buf())
    });
    url::Url::from_file_path(&absolute)
        .map(String::from)
        .unwrap_or_else(|()| format!("file:///{}", absolute.display()))
}

/// The module name of a schema file: its file name without `.schema.json` / `.json`, in snake
/// case, made an identifier.
pub fn module_name(path: &Path) -> String {
    use heck::ToSnakeCase;
    let file = path.file_name().and_then(|n| n.to_str()).unwrap_or("schema");
    let stem = file
        .strip_suffix(".schema.json")
        .or_else(|| file.strip_suffix(".json"))
        .unwrap_or(file);
    let name: String = stem
        .to_snake_case()
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() || c == '_' { c } else { '_' })
        .collect();
    match name.chars().next() {
        Some(c) if c.is_ascii_alphabetic() || c == '_' => name,
        _ => format!("schema_{name}"),
    }
}

impl Builder {
    /// A builder with no schema, writing to `OUT_DIR`.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds a schema file.
    pub fn schema(mut self, path: impl AsRef<Path>) -> Self {
        self.schemas.push((path.as_ref().to_path_buf(), None));
        self
    }

    /// Names the types of the schema added last with a name table (`{"types": {POINTER:
    /// NAME}, "variants": {...}}`, as `xtask/names/pilotage.json`).
    pub fn names(mut self, path: impl AsRef<Path>) -> Self {
        if let Some(last) = self.schemas.last_mut() {
            last.1 = Some(path.as_ref().to_path_buf());
        }
        self
    }

    /// Writes into `dir` instead of `OUT_DIR`.
    pub fn out_dir(mut self, dir: impl AsRef<Path>) -> Self {
        self.out_dir = Some(dir.as_ref().to_path_buf());
        self
    }

    /// Writes every module into the one file `path` (the schema copies they embed beside it),
    /// instead of a file per schema.
    pub fn out_file(mut self, path: impl AsRef<Path>) -> Self {
        self.out_file = Some(path.as_ref().to_path_buf());
        self
    }

    /// Adds a document to the schema set without generating a module for it: a `$ref` to
    /// `uri` is resolved into the schema read from `path`.
    pub fn document(mut self, uri: impl Into<String>, path: impl AsRef<Path>) -> Self {
        self.documents.push((uri.into(), path.as_ref().to_path_buf()));
        self
    }

    /// What the validators' code is tuned for ([`crate::validators::Tuning`]): one schema set
    /// validated often (the default), or one of many in a program, each validated now and
    /// then (`Tuning::ManySets`: a shared call steps through an object's members).
    pub fn tuning(mut self, tuning: crate::validators::Tuning) -> Self {
        self.tuning = tuning;
        self
    }

    /// The dialect of a schema without `$schema` (draft 2020-12 unless set).
    pub fn default_draft(mut self, draft: crate::validators::Draft) -> Self {
        self.default_draft = Some(draft);
        self
    }

    /// Whether `format` asserts in 2019-09 and 2020-12 documents (draft-04/06/07 always
    /// assert the standard formats; 2020-12 asserts when its metaschema asks for it).
    pub fn assert_formats(mut self, assert: bool) -> Self {
        self.assert_formats = Some(assert);
        self
    }

    /// What the generated files' headers name as their generator ([`GeneratedBy::Builder`]
    /// unless set; `pilotage codegen` sets [`GeneratedBy::Cli`]).
    pub fn generated_by(mut self, by: GeneratedBy) -> Self {
        self.generated_by = Some(by);
        self
    }

    /// Generates every module, in memory first: `Err` names the first schema that failed and
    /// writes nothing at all. Returns the files written (or left unchanged).
    pub fn compile(self) -> Result<Vec<PathBuf>, CodegenError> {
        let from_file = self.out_file.as_ref().map(|file| match file.parent() {
            Some(parent) if !parent.as_os_str().is_empty() => parent.to_path_buf(),
            _ => PathBuf::from("."),
        });
        let out_dir = match from_file
            .or_else(|| self.out_dir.clone())
            .or_else(|| std::env::var_os("OUT_DIR").map(PathBuf::from))
        {
            Some(dir) => dir,
            None => {
                return Err(CodegenError::new(
                    "",
                    "",
                    "no output directory: call Builder::out_dir, or run from a build script (OUT_DIR)",
                ))
            }
        };
        let build_script = std::env::var_os("OUT_DIR").is_some() && std::env::var_os("CARGO_MANIFEST_DIR").is_some();
        let mut outputs: Vec<(PathBuf, Vec<u8>)> = Vec::new();
        let mut modules = std::collections::BTreeSet::new();
        // The set: every schema of the builder, and the documents mapped to URIs.
        let mut set: Vec<crate::validators::Document> = Vec::new();
        for (schema, _) in &self.schemas {
            let shown = schema.display().to_string();
            let bytes =
                std::fs::read(schema).map_err(|e| CodegenError::new(&shown, "", format!("cannot read: {e}")))?;
            let value = crate::parse_schema(&bytes, &shown)?;
            set.push(crate::validators::Document {
                uri: file_uri(schema),
                file: shown,
                value,
            });
        }
        for (uri, path) in &self.documents {
            let shown = path.display().to_string();
            if build_script {
                println!("cargo:rerun-if-changed={shown}");
            }
            let bytes = std::fs::read(path).map_err(|e| CodegenError::new(&shown, "", format!("cannot read: {e}")))?;
            let value = crate::parse_schema(&bytes, &shown)?;
            set.push(crate::validators::Document {
                uri: uri.clone(),
                file: shown,
                value,
            });
        }
        let mut single = String::new();
        for (position, (schema, names)) in self.schemas.iter().enumerate() {
            let shown = schema.display().to_string();
            if build_script {
                println!("cargo:rerun-if-changed={shown}");
            }
            let bytes =
                std::fs::read(schema).map_err(|e| CodegenError::new(&shown, "", format!("cannot read: {e}")))?;
            let module = module_name(schema);
            if !modules.insert(module.clone()) {
                return Err(CodegenError::new(
                    &shown,
                    "",
                    format!("another schema of this build is also module `{module}`: rename one file"),
                ));
            }
            let names = match names {
                None => None,
                Some(table) => {
                    let table_shown = table.display().to_string();
                    if build_script {
                        println!("cargo:rerun-if-changed={table_shown}");
                    }
                    let text = std::fs::read(table)
                        .map_err(|e| CodegenError::new(&table_shown, "", format!("cannot read: {e}")))?;
                    Some(NameTable::parse(&text, &table_shown)?)
                }
            };
            let copy = format!("{module}.schema.json");
            let mut options = crate::validators::Options::new()
                .base_uri(set[position].uri.clone())
                .tuning(self.tuning);
            if let Some(draft) = self.default_draft {
                options = options.default_draft(draft);
            }
            if let Some(assert) = self.assert_formats {
                options = options.assert_formats(assert);
            }
            for (other, document) in set.iter().enumerate() {
                if other != position {
                    options.documents.push(document.clone());
                }
            }
            let generated_by = self.generated_by.unwrap_or(GeneratedBy::Builder);
            let mut settings = TypesSettings::new(shown.clone())
                .with_schema_def_trait("::pilotage_types::SchemaDef")
                .with_embed_schema(copy.clone())
                .with_validators(options)
                .with_generated_by(generated_by);
            if let Some(names) = names {
                settings = settings.with_names(names);
            }
            let generated = crate::generate_types(&bytes, &settings)?;
            for warning in &generated.warnings {
                if build_script {
                    println!("cargo:warning={warning}");
                } else {
                    eprintln!("warning: {warning}");
                }
            }
            let code = format!(
                "// The module generated from {shown} by {} (do not edit).\n\
                 #[allow(missing_docs)]\npub mod {module} {{\n{}\n}}\n",
                generated_by.name(),
                generated.code
            );
            outputs.push((out_dir.join(&copy), bytes));
            if self.out_file.is_some() {
                single.push_str(&code);
                single.push('\n');
            } else {
                outputs.push((out_dir.join(format!("{module}.rs")), code.into_bytes()));
            }
        }
        if let Some(file) = &self.out_file {
            outputs.push((file.clone(), single.into_bytes()));
        }
        std::fs::create_dir_all(&out_dir)
            .map_err(|e| CodegenError::new(&out_dir.display().to_string(), "", format!("cannot create: {e}")))?;
        let mut written = Vec::new();
        for (path, contents) in outputs {
            let shown = path.display().to_string();
            if std::fs::read(&path).ok().as_deref() != Some(contents.as_slice()) {
                let temporary = path.with_extension("tmp");
                std::fs::write(&temporary, &contents)
                    .and_then(|()| std::fs::rename(&temporary, &path))
                    .map_err(|e| CodegenError::new(&shown, "", format!("cannot write: {e}")))?;
            }
            written.push(path);
        }
        Ok(written)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn module_names_are_identifiers() {
        assert_eq!(module_name(Path::new("a/program.schema.json")), "program");
        assert_eq!(module_name(Path::new("My-Config.json")), "my_config");
        assert_eq!(module_name(Path::new("2020.json")), "schema_2020");
    }

    #[test]
    fn errors_name_the_file_and_nothing_is_written() {
        let dir = std::env::temp_dir().join(format!("pilotage-builder-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let good = dir.join("good.schema.json");
        std::fs::write(
            &good,
            r#"{"$defs": {"Thing": {"type": "object", "properties": {"a": {"type": "string"}}}}}"#,
        )
        .unwrap();
        let bad = dir.join("bad.schema.json");
        std::fs::write(&bad, r##"{"$defs": {"Thing": {"$ref": "#/$defs/Nope"}}}"##).unwrap();
        let out = dir.join("out");
        let error = Builder::new()
            .schema(&good)
            .schema(&bad)
            .out_dir(&out)
            .compile()
            .unwrap_err();
        assert!(error.to_string().contains("bad.schema.json"), "{error}");
        assert!(!out.exists(), "nothing written when one schema fails");
        let written = Builder::new().schema(&good).out_dir(&out).compile().unwrap();
        assert_eq!(written.len(), 2);
        let code = std::fs::read_to_string(out.join("good.rs")).unwrap();
        assert!(
            code.contains("pub mod good {") && code.contains("pub struct Thing"),
            "{code}"
        );
        syn::parse_file(&code).expect("the module parses");
        // Tuned for many sets, a pass over an object's members is the shared call; by
        // default, the map's own iteration.
        let passed = dir.join("passed.schema.json");
        std::fs::write(
            &passed,
            r#"{"$defs": {"Thing": {"type": "object", "patternProperties": {"^x": {"type": "string"}}}}}"#,
        )
        .unwrap();
        for (tuning, shared) in [
            (crate::validators::Tuning::OneSet, false),
            (crate::validators::Tuning::ManySets, true),
        ] {
            let out = dir.join(format!("{tuning:?}"));
            Builder::new()
                .schema(&passed)
                .out_dir(&out)
                .tuning(tuning)
                .compile()
                .unwrap();
            let code = std::fs::read_to_string(out.join("passed.rs")).unwrap();
            assert!(code.contains("is_match(k)"), "{code}");
            assert_eq!(code.contains("runtime::members(o)"), shared, "{code}");
        }
        let _ = std::fs::remove_dir_all(&dir);
    }
}
