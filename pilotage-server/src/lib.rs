//! A Pilotage engine framework on rmcp. You describe your
//! Language and write its validate and execute stages; the framework serves the whole
//! Pilotage surface Part III fixes, on every revision rmcp speaks, over stdio and HTTP, so
//! that the engine cannot break 10.1.
//!
//! # From an empty crate to a served, checked engine
//!
//! **1. The dependencies.**
//!
//! ```toml
//! [dependencies]
//! pilotage-server = "0.1"          # features "sqlite", "postgres": the database run stores
//! pilotage-types = { version = "0.1", features = ["derive"] }  # only for #[derive(PilotageTool)]
//! serde = { version = "1", features = ["derive"] }
//! serde_json = "1"
//! schemars = "1"                   # programs checked schema-first, and the derive
//! tokio = { version = "1", features = ["rt-multi-thread", "macros"] }
//! ```
//!
//! (`pilotage new NAME --language ID` writes such a crate, which builds and is clean under
//! `pilotage check --allow-execute` as written.)
//!
//! **2. Your program as a `serde` type, and your Language.** A program that does not fit the
//! type is reported through diagnostics, never as an error, and `validate` is not called for
//! it: when the type also derives `schemars::JsonSchema` and [`Language::program_schema`]
//! returns its schema, with *every* violation of that schema (a code, the JSON Pointer and a
//! message each); without one, with serde's first fault as one `invalid_program`
//! diagnostic. Your `validate` reports everything else about it.
//!
//! ```
//! use pilotage_server::prelude::*;
//!
//! /// A program: numbers to add.
//! #[derive(serde::Deserialize, schemars::JsonSchema)]
//! pub struct Sum {
//!     pub numbers: Vec<f64>,
//! }
//!
//! pub struct Adder;
//!
//! impl Language for Adder {
//!     type Program = Sum;
//!
//!     fn declaration(&self) -> Declaration {
//!         Declaration::new("adder/v1", "Sums of numbers")
//!     }
//!
//!     fn program_schema(&self) -> Option<serde_json::Value> {
//!         Some(program_schema::<Sum>())
//!     }
//!
//!     fn guides(&self) -> std::sync::Arc<[GuideText]> {
//!         // Topics, size and version come from the body: one topic per `## ` section.
//!         let body = "# Adding numbers\n\n## programs\n`{\"numbers\": [1, 2]}`\n";
//!         vec![GuideText::from_markdown("intro", "Adding numbers", GuideLevel::Core, body)].into()
//!     }
//!
//!     async fn validate(&self, program: &Sum, _context: Option<&serde_json::Value>, _cx: &StageContext) -> Validated {
//!         if program.numbers.is_empty() {
//!             return Validated::with_diagnostics([Diagnostic::error("empty", "/numbers", "give at least one number")]);
//!         }
//!         Validated::valid()
//!     }
//!
//!     async fn execute(&self, run: ExecuteInput<Sum>, _cx: &StageContext) -> Result<Ran, RequestError> {
//!         let total: f64 = run.program.numbers.iter().sum();
//!         let step = TraceStep::new("sum", Outcome::success("success")).with_output(total);
//!         Ok(Ran::success(total, [step]))
//!     }
//! }
//! # let engine = Engine::builder("adder-engine", "1.0").language(Adder).build().unwrap();
//! # assert_eq!(engine.manifest().languages.len(), 1);
//! ```
//!
//! **A catalog** (optional): the environment-bound names programs may use (Part II 5.4),
//! served by `pilotage_catalog`. Each [`CatalogEntry`](pilotage_types::CatalogEntry) has an
//! `id` (what programs name and `with_references` lists), a `kind` (what sort of name it is, in
//! your Language's words: `tool`, `function`, `table`, `operation`...), a `name`, a `risk` (a
//! short word for people: `none`, `low`, `writes`...) and `risk_hints`, the booleans a host
//! compares before a run (`readOnly`, `destructive`, `openWorld`; the host's risk gate uses
//! these, not the MCP annotations). The execute tool's `destructiveHint` and `readOnlyHint`
//! follow from them unless you state them, and stating one the catalog contradicts is a
//! [`BuildError`] naming the entry (Part III 4.5).
//!
//! ```
//! use std::sync::Arc;
//! use pilotage_server::prelude::*;
//!
//! let send = CatalogEntry::new("send_email", "tool", "Send an email", "external",
//!         RiskHints::new().with_open_world(true))
//!     .with_description("Sends one email.")
//!     .with_input_schema(serde_json::Map::from_iter([("type".to_owned(), serde_json::json!("object"))]));
//! let delete = CatalogEntry::new("delete_user", "tool", "Delete a user", "destroys",
//!         RiskHints::new().with_destructive(true));
//! let catalog = Arc::new(Catalog::new("2026-12-01", [send, delete]));
//! // In `impl Language`: fn catalog(&self) -> Option<Arc<Catalog>> { Some(self.catalog.clone()) }
//! # assert_eq!(catalog.entries.len(), 2);
//! ```
//!
//! A trace step's and a plan step's `calls` names the catalog entry (its `id`) that the step
//! invokes, so that a trace or a plan can be matched against the catalog's risk hints.
//!
//! **Loop tools of your own** (optional): when execute (or validate, or trace fetch) needs a
//! typed argument of yours beside the Part III ones (a dry-run flag, an environment, a
//! budget), derive the tool and name it in the declaration. The framework still owns the
//! Part III members, their channels and the envelope; your stage function reads the struct
//! from [`StageContext::arguments`]. The derive's compile-time rules hold: a member that
//! would break Part III's permissive schema does not compile.
//!
//! ```
//! use pilotage_server::prelude::*;
//! # #[derive(serde::Deserialize, schemars::JsonSchema)] pub struct Sum { pub numbers: Vec<f64> }
//!
//! /// Add numbers up.
//! #[derive(serde::Deserialize, schemars::JsonSchema, PilotageTool)]
//! #[pilotage(stage = "execute", name = "adder_run", language = "adder/v1")]
//! pub struct AdderRun {
//!     #[pilotage(program)]
//!     pub program: Option<Sum>,
//!     /// Round the sum to this many digits.
//!     pub digits: Option<u32>,
//!     /// Read by the framework (the derive asks every execute tool for it, Part III 4.4).
//!     pub trace_level: Option<String>,
//! }
//!
//! struct Adder;
//! impl Language for Adder {
//!     type Program = Sum;
//!     fn declaration(&self) -> Declaration {
//!         Declaration::new("adder/v1", "Sums of numbers").with_execute_tool::<AdderRun>()
//!     }
//!     async fn validate(&self, _: &Sum, _: Option<&serde_json::Value>, _: &StageContext) -> Validated {
//!         Validated::valid()
//!     }
//!     async fn execute(&self, run: ExecuteInput<Sum>, cx: &StageContext) -> Result<Ran, RequestError> {
//!         let digits = cx.arguments::<AdderRun>().and_then(|call| call.digits);
//!         let total: f64 = run.program.numbers.iter().sum();
//!         let total = digits.map_or(total, |d| (total * 10f64.powi(d as i32)).round() / 10f64.powi(d as i32));
//!         Ok(Ran::success(total, []))
//!     }
//! }
//! let engine = Engine::builder("adder-engine", "1.0").language(Adder).build().unwrap();
//! assert!(engine.tools().iter().any(|t| t.name == "adder_run" && t.input_schema["properties"]["digits"].is_object()));
//! ```
//!
//! **3. An engine, served.** [`Engine::builder`] takes any number of Languages, and options
//! (resources, hiding from undeclared clients, the execute deadline, the run store's bounds,
//! your own MCP tools, an identity function for HTTP).
//!
//! ```no_run
//! # use pilotage_server::prelude::*;
//! # struct Adder;
//! # impl Language for Adder { type Program = serde_json::Value;
//! #   fn declaration(&self) -> Declaration { Declaration::new("adder/v1", "Sums") }
//! #   async fn validate(&self, _: &serde_json::Value, _: Option<&serde_json::Value>, _: &StageContext) -> Validated { Validated::valid() }
//! #   async fn execute(&self, _: ExecuteInput<serde_json::Value>, _: &StageContext) -> Result<Ran, RequestError> { Ok(Ran::success(0, [])) } }
//! #[tokio::main(flavor = "current_thread")]
//! async fn main() -> Result<(), Box<dyn std::error::Error>> {
//!     let engine = Engine::builder("adder-engine", env!("CARGO_PKG_VERSION")).language(Adder).build()?;
//!     match std::env::args().nth(1).as_deref() {
//!         Some("--http") => engine.serve_http("127.0.0.1:8080".parse()?, HttpOptions::default()).await?,
//!         _ => engine.serve_stdio().await?,
//!     }
//!     Ok(())
//! }
//! ```
//!
//! **4. Checked.** `pilotage check --allow-execute --program adder/v1=sum.json -- cargo run`
//! (or `--url http://127.0.0.1:8080/mcp`, with `--stateless` for 2026-07-28) probes every rule
//! of Part III against it.
//!
//! # What the framework owns
//!
//! - the manifest from the declarations, `pilotage_manifest`, the inline manifest in
//!   initialize `_meta` and on `server/discover`, the extension declaration, the welcome text
//!   and the signposts of every tool (1.2, 3, 3.4); hiding from undeclared clients (1.3);
//! - `pilotage_get_guide` (index, fetch, topic) and `pilotage_catalog` (`list` with `kind`,
//!   `tag`, `q`, paging; `get`; `changed_since`), `catalog_version` on every answer that needs
//!   it, errors included (4.1, 4.2, 7.2);
//! - three loop tools per Language, built by the derive's runtime (4.3 to 4.6, 5), argument
//!   routing to the channels of 7.1, the result envelope of 6;
//! - runs: ids with 128 random bits, retention, `store`, trace levels (inline at the
//!   requested level, fetch at min(requested, recorded)), idempotency keys, test runs,
//!   narration, the execute deadline (`bounds_exceeded`) and a panicking Language (`internal`)
//!   (4.3, 8.1, 8.2); a run is visible only to the identity that started it (8.4), and the
//!   store is bounded ([`StoreLimits`]); the store is a [`RunStore`]: in memory by default,
//!   or (features `sqlite`, `postgres`) a database that outlives the process and is shared by
//!   every engine process on it ([`open_store`], [`EngineBuilder::run_store`]);
//! - resources at the percent-encoded URIs of 8.3, from the functions behind the tools;
//! - stdio; streamable HTTP with sessions or stateless, Host and Origin rules, bounded bodies,
//!   a session cap and idle expiry ([`HttpOptions`]); an `axum` router to mount
//!   ([`Engine::http_router`]);
//! - your own MCP tools beside the Pilotage ones ([`EngineBuilder::own_tools`]);
//! - what an operator sees ([`telemetry`]): a `tracing` span per request, health endpoints,
//!   and (feature `metrics`) the `mcp.server.operation.duration` histogram;
//! - (feature `oauth`) an OAuth resource server in front of the HTTP endpoint: bearer JWTs
//!   verified against the issuers' keys, opaque tokens introspected (`auth`).

/// The wire types, validators and tool definitions this framework speaks.
pub use pilotage_types as types;
/// The official Rust MCP SDK this framework serves with (`=3.11.0`), for [`EngineBuilder::own_tools`]
/// and custom handlers ([`Engine::serve_stdio_with`]): use it through this path so that your tools
/// and the framework agree on one version.
pub use rmcp;

#[cfg(feature = "oauth")]
pub mod auth;
mod engine;
mod handler;
mod http;
mod language;
mod runs;
pub mod store_contract;
#[cfg(feature = "postgres")]
mod store_postgres;
#[cfg(feature = "sqlite")]
mod store_sqlite;
pub mod telemetry;

use std::sync::Arc;
use std::time::Duration;

pub use engine::{catalog_uri, guide_uri, guides_uri, path_segment, BuildError};
pub use handler::{IdentityFn, OwnTools, PilotageServer};
pub use http::HttpOptions;
pub use language::{
    default_tool_names, iso8601, Catalog, CatalogRevision, Declaration, ExecuteInput, GuideText, Language, ProgramType,
    Ran, Retention, StageContext, Validated,
};
pub use runs::{
    new_run_id, open_store, Expiry, IdempotencyHit, MemoryStore, RunRecord, RunStore, StoreError, StoreFuture,
    StoreLimits, StoreSizes,
};
#[cfg(feature = "postgres")]
pub use store_postgres::{PostgresOptions, PostgresStore};
#[cfg(feature = "sqlite")]
pub use store_sqlite::{SqliteStore, MIGRATIONS as SQLITE_MIGRATIONS};

/// The JSON Schema of a program type that derives `schemars::JsonSchema`, as
/// [`Language::program_schema`] takes it (draft 2020-12, the deserialization view): programs
/// are then checked against it and every violation is answered as a diagnostic.
///
/// ```
/// #[derive(serde::Deserialize, schemars::JsonSchema)]
/// struct Sum { numbers: Vec<f64> }
/// let schema = pilotage_server::program_schema::<Sum>();
/// assert_eq!(schema["required"], serde_json::json!(["numbers"]));
/// ```
pub fn program_schema<T: schemars::JsonSchema>() -> serde_json::Value {
    schemars::generate::SchemaSettings::draft2020_12()
        .for_deserialize()
        .into_generator()
        .into_root_schema_for::<T>()
        .to_value()
}

/// Everything an engine author needs, in one `use`.
pub mod prelude {
    pub use super::{
        open_store, program_schema, BuildError, Catalog, Declaration, Engine, EngineBuilder, ExecuteInput, GuideText,
        HttpOptions, Language, ProgramType, Ran, Retention, RunStore, StageContext, StoreLimits, Validated,
    };
    pub use pilotage_types::shape::ShapeViolation;
    pub use pilotage_types::PilotageTool;
    pub use pilotage_types::{
        CatalogChange, CatalogChangeKind, CatalogEntry, Diagnostic, Guide, GuideLevel, LanguageIdentifier, Locator,
        Outcome, Plan, PlanStep, RequestError, RiskHints, Trace, TraceLevel, TraceStep,
    };
}

/// A built engine: its Languages, its surface and its run store, shared by every connection
/// (cloning shares them).
#[derive(Clone)]
pub struct Engine {
    core: Arc<engine::Core>,
    own_tools: Option<Arc<OwnTools>>,
    identity_fn: Option<IdentityFn>,
    /// Feature oauth: the resource server in front of the HTTP endpoint.
    #[cfg(feature = "oauth")]
    oauth: Option<Arc<auth::Verifier>>,
}

impl std::fmt::Debug for Engine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Engine")
            .field("name", &self.core.settings.name)
            .field("languages", &self.core.manifest.languages.len())
            .field("limits", &self.core.runs.limits())
            .finish_non_exhaustive()
    }
}

/// Builds an [`Engine`]: [`Engine::builder`], then one [`EngineBuilder::language`] per
/// Language, options, and [`EngineBuilder::build`].
pub struct EngineBuilder {
    settings: engine::Settings,
    languages: Vec<(Declaration, Box<dyn engine::ErasedLanguage>)>,
    own_tools: Option<Arc<OwnTools>>,
    identity_fn: Option<IdentityFn>,
    #[cfg(feature = "oauth")]
    oauth: Option<auth::ResourceServer>,
}

impl std::fmt::Debug for EngineBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EngineBuilder")
            .field("name", &self.settings.name)
            .field("languages", &self.languages.len())
            .finish_non_exhaustive()
    }
}

impl Engine {
    /// A builder for an engine that names itself `name` `version` in `serverInfo`.
    pub fn builder(name: impl Into<String>, version: impl Into<String>) -> EngineBuilder {
        EngineBuilder {
            settings: engine::Settings {
                name: name.into(),
                version: version.into(),
                resources: false,
                hide_from_undeclared: false,
                execute_deadline: Duration::from_secs(60),
                max_executes_per_identity: 8,
                limits: StoreLimits::default(),
                instructions: None,
                shared: None,
                store: None,
            },
            languages: Vec::new(),
            own_tools: None,
            identity_fn: None,
            #[cfg(feature = "oauth")]
            oauth: None,
        }
    }

    /// The manifest it serves.
    pub fn manifest(&self) -> &pilotage_types::Manifest {
        &self.core.manifest
    }

    /// The Pilotage tools it lists, in `tools/list` order.
    pub fn tools(&self) -> &[pilotage_types::ToolDefinition] {
        &self.core.tools
    }

    /// The welcome text (initialize `instructions`).
    pub fn instructions(&self) -> &str {
        &self.core.instructions
    }

    /// The run store (its sizes, for monitoring: [`RunStore::sizes`]).
    pub fn runs(&self) -> &dyn RunStore {
        self.core.runs.as_ref()
    }

    /// Answers one `tools/call` of a Pilotage tool in-process, as `identity` (Part III 8.4):
    /// the result, or the carrier error (-32602) its arguments deserve; `None` for a tool that
    /// is not one of the engine's Pilotage tools.
    pub async fn call(
        &self,
        name: &str,
        arguments: &serde_json::Value,
        identity: &str,
    ) -> Option<Result<rmcp::model::CallToolResult, rmcp::model::ErrorData>> {
        let answer = self.core.call(name, arguments, identity).await?;
        Some(handler::result(answer))
    }

    /// The initialize result this engine answers a client that declared Pilotage (and, on
    /// 2026-07-28, the content of `server/discover`).
    pub fn initialize_result(&self) -> rmcp::model::InitializeResult {
        self.connection(false).info(Some(true))
    }

    /// A handler for one connection (`stateless`: a request of a stateless HTTP deployment).
    pub fn connection(&self, stateless: bool) -> PilotageServer {
        PilotageServer::new(
            self.core.clone(),
            self.own_tools.clone(),
            self.identity_fn.clone(),
            stateless,
        )
    }

    /// Serves one client over standard input and output until it disconnects.
    pub async fn serve_stdio(&self) -> std::io::Result<()> {
        self.serve_stdio_with(|server| server).await
    }

    /// [`Engine::serve_stdio`] serving `wrap` of the connection's handler (a handler of your
    /// own around the engine's, which must delegate to it).
    pub async fn serve_stdio_with<H: rmcp::ServerHandler>(
        &self,
        wrap: impl FnOnce(PilotageServer) -> H,
    ) -> std::io::Result<()> {
        use rmcp::ServiceExt;
        let service = wrap(self.connection(false))
            .serve(rmcp::transport::stdio())
            .await
            .map_err(|e| std::io::Error::other(e.to_string()))?;
        service
            .waiting()
            .await
            .map_err(|e| std::io::Error::other(e.to_string()))?;
        Ok(())
    }
}

impl EngineBuilder {
    /// Serves `language` (its declaration is read once, now).
    pub fn language<L: Language>(mut self, language: L) -> Self {
        let declaration = language.declaration();
        let argument = declaration.program_argument.clone();
        self.languages
            .push((declaration, Box::new(engine::ErasedFor::new(language, argument))));
        self
    }

    /// Also serves the guides and catalogs as MCP resources (Part III 8.3).
    pub fn resources(mut self) -> Self {
        self.settings.resources = true;
        self
    }

    /// Hides the Pilotage tools (and the welcome text) from a client known not to have
    /// declared the extension (Part III 1.3 rule 3; the default shows them to every client).
    pub fn hide_from_undeclared(mut self) -> Self {
        self.settings.hide_from_undeclared = true;
        self
    }

    /// Bounds each Run (default 60 s): past it the request answers `bounds_exceeded`
    /// (Part III 8.2).
    pub fn execute_deadline(mut self, deadline: Duration) -> Self {
        self.settings.execute_deadline = deadline;
        self
    }

    /// Bounds the work of one requester (Part III 8.4: the session, or the authorization
    /// identity): at most `executes` of its executes run at once (default 8); one more is
    /// refused with the request error `bounds_exceeded` before anything runs, so that one
    /// requester cannot hold every worker. On stateless HTTP without an identity function,
    /// every request is the one anonymous requester, whose bound is eight times this (64 by
    /// default): give the engine an identity to bound clients one by one.
    pub fn max_executes_per_identity(mut self, executes: usize) -> Self {
        self.settings.max_executes_per_identity = executes;
        self
    }

    /// Bounds the run store the engine makes itself (default [`StoreLimits::default`]): the
    /// in-memory store used when no [`Self::run_store`] is given. Once a store is given, its
    /// own limits apply (pass them to [`open_store`] or the store's constructor) and these are
    /// not used.
    pub fn store_limits(mut self, limits: StoreLimits) -> Self {
        self.settings.limits = limits;
        self
    }

    /// Serves every Language through three shared loop tools named `validate`, `execute` and
    /// `trace` (Part III 4.3, 5): each Language keeps its program argument (which must differ
    /// between them), the validate tool requires none of them and takes exactly one (4.4
    /// rule 9), and a run's trace is fetched whatever its Language. Every Language must have
    /// the same execution (`mode` is a member of the shared execute tool); `program_ref` is
    /// taken only by a Language's own tool. The descriptions get the stage and Language
    /// signposts where they lack them.
    pub fn share_loop_tools(mut self, validate: &str, execute: &str, trace: &str) -> Self {
        let names = [validate.to_owned(), execute.to_owned(), trace.to_owned()];
        let descriptions = [
            "Check a program of any of this server's Languages and list its diagnostics.".to_owned(),
            "Run a program of any of this server's Languages and return its outcome, output and trace.".to_owned(),
            "Fetch the stored trace of a run by run_id.".to_owned(),
        ];
        self.settings.shared = Some((names, descriptions));
        self
    }

    /// Keeps runs in `store` (default: a [`MemoryStore`] with the [`Self::store_limits`]);
    /// a database store outlives the process and is shared by every engine process on it.
    pub fn run_store(mut self, store: Arc<dyn RunStore>) -> Self {
        self.settings.store = Some(store);
        self
    }

    /// Replaces the composed welcome text (it must still name Pilotage and direct the agent
    /// to `pilotage_manifest` first, Part III 3.4).
    pub fn instructions(mut self, text: impl Into<String>) -> Self {
        self.settings.instructions = Some(text.into());
        self
    }

    /// Serves your own MCP tools beside the Pilotage ones (see [`OwnTools`] for the rmcp
    /// version and features they need).
    pub fn own_tools(mut self, tools: OwnTools) -> Self {
        self.own_tools = Some(Arc::new(tools));
        self
    }

    /// Derives the authorization identity of an HTTP request (for example the subject of a
    /// verified OAuth token): runs are then visible to that identity across its sessions, and
    /// to no one else (Part III 8.4).
    pub fn identity(
        mut self,
        identity: impl Fn(&::http::request::Parts) -> Option<String> + Send + Sync + 'static,
    ) -> Self {
        self.identity_fn = Some(Arc::new(identity));
        self
    }

    /// Feature `oauth`: protects the HTTP endpoint as an OAuth resource server (MCP
    /// authorization): every request to it needs a bearer JWT that one of `resource_server`'s
    /// authorization servers issued for this resource, with its scopes, and the protected
    /// resource metadata is served (see [`auth`]). The requester (Part III 8.4) is then the
    /// token's issuer and subject (`auth:<iss>#<sub>`), so that runs follow the subject across
    /// sessions and engine processes on one store; an [`Self::identity`] function is asked only
    /// for a request without a verified token. The configuration is checked by
    /// [`Self::build`]. Stdio is not concerned.
    #[cfg(feature = "oauth")]
    pub fn oauth(mut self, resource_server: auth::ResourceServer) -> Self {
        self.oauth = Some(resource_server);
        self
    }

    /// Builds the engine, or says why its declarations cannot be served.
    pub fn build(self) -> Result<Engine, BuildError> {
        if let Some(text) = &self.settings.instructions {
            if !(text.contains("Pilotage") || text.contains(pilotage_types::EXTENSION_ID))
                || !text.contains(pilotage_types::MANIFEST_TOOL)
            {
                return Err(BuildError(
                    "the welcome text must name Pilotage and direct the agent to pilotage_manifest first (Part III 3.4)"
                        .into(),
                ));
            }
        }
        #[cfg(feature = "oauth")]
        let (identity_fn, oauth) = match self.oauth {
            Some(resource_server) => (
                Some(auth::identity_fn(self.identity_fn)),
                Some(Arc::new(auth::Verifier::new(resource_server)?)),
            ),
            None => (self.identity_fn, None),
        };
        #[cfg(not(feature = "oauth"))]
        let identity_fn = self.identity_fn;
        let core = engine::Core::build(self.settings, self.languages)?;
        Ok(Engine {
            core: Arc::new(core),
            own_tools: self.own_tools,
            identity_fn,
            #[cfg(feature = "oauth")]
            oauth,
        })
    }
}
