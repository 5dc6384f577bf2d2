//! The Pilotage reference engine: the `workflow/v1` Language of Part III section 9, served by
//! the toolkit's engine framework (`pilotage_server`). This file is all an engine
//! author writes: the Language's declaration, its guides and catalog ([`catalog`]), and its
//! validate and execute stages ([`language`]). Everything Part III fixes (the manifest, the
//! welcome text, the tools and their schemas, argument routing, the run store, retention and
//! trace levels, resources, the transports) is the framework's.
//!
//! [`faults`] is a test-only layer around the served engine that breaks one rule at a time,
//! so that conformance checkers (`pilotage check`) can be shown to catch each.

pub mod catalog;
pub mod faults;
pub mod language;

use std::sync::Arc;
use std::time::Duration;

use pilotage_server::prelude::*;
use pilotage_types::{CatalogChangeKind, Execution};
use serde_json::{Map, Value};

pub use faults::Fault;

/// How long runs are retained (`PT1H` in the manifest: never `session`, so the same
/// declaration holds on stateless deployments, Part III 8.1).
pub const RETENTION: Duration = Duration::from_secs(3600);

/// What the engine serves beyond the required surface.
#[derive(Clone, Default)]
pub struct Options {
    /// Serve the guides and the catalog as MCP resources too (Part III 8.3).
    pub resources: bool,
    /// Hide the Pilotage tools from a client that did not declare the extension (Part III 1.3
    /// rule 3).
    pub hide_from_undeclared: bool,
    /// Declare workflow/v1 with `"execution": "both"`: `run_workflow` then requires `mode`
    /// (Part III 4.4); this engine has no deployment target, so a deployed workflow runs at
    /// once.
    pub execution_both: bool,
    /// How long runs are kept (default [`RETENTION`]).
    pub retention: Option<Duration>,
    /// Where runs are kept (default: in memory).
    pub store: Option<std::sync::Arc<dyn pilotage_server::RunStore>>,
    /// At most this many executes of one requester in flight (default: the framework's, 8).
    pub max_executes_per_identity: Option<usize>,
    /// Over HTTP: the endpoint as an OAuth resource server (feature `oauth`).
    #[cfg(feature = "oauth")]
    pub oauth: Option<pilotage_server::auth::ResourceServer>,
}

/// The `workflow/v1` Language.
#[derive(Debug, Clone)]
pub struct Workflow {
    /// Declared with `"execution": "both"`.
    pub execution_both: bool,
    /// How long runs are kept (`None`: [`RETENTION`]).
    pub retention: Option<Duration>,
    guides: Arc<[GuideText]>,
    catalog: Arc<Catalog>,
}

impl Workflow {
    /// The Language, its guides and catalog loaded once.
    pub fn new(execution_both: bool, retention: Option<Duration>) -> Self {
        let guides: Vec<GuideText> = catalog::guides()
            .into_iter()
            .map(|(guide, body)| GuideText::new(guide, body))
            .collect();
        let previous = [
            CatalogChange::new("cap_send_email", CatalogChangeKind::Modified),
            CatalogChange::new("cap_delete_user", CatalogChangeKind::Added),
        ];
        let catalog = Catalog::new(catalog::CATALOG_VERSION, catalog::entries())
            .with_previous(catalog::PREVIOUS_CATALOG_VERSION, previous);
        Self {
            execution_both,
            retention,
            guides: guides.into(),
            catalog: Arc::new(catalog),
        }
    }
}

impl Language for Workflow {
    type Program = Map<String, Value>;

    fn declaration(&self) -> Declaration {
        Declaration::new(catalog::LANGUAGE, "Workflow documents")
            .with_program("workflow", ProgramType::Object)
            .with_tool_names("validate_workflow", "run_workflow", "trace_run")
            .with_tool_descriptions(
                "Check a workflow/v1 document against the catalog and preview its plan (validate stage).",
                "Execute a workflow document or a promoted workflow. Execute stage of workflow/v1: runs the \
                 steps and returns the output, the outcome and, at trace_level summary or full, the trace.",
                "Fetch the stored trace of a workflow/v1 run by run_id (trace fetch stage).",
            )
            .with_destructive(true)
            .with_open_world(true)
            .with_execution(if self.execution_both {
                Execution::Both
            } else {
                Execution::Immediate
            })
            .with_retention(Retention::For(self.retention.unwrap_or(RETENTION)))
            .with_plan()
            .with_topic_fetch()
            .with_search()
            .with_changed_since()
            .with_program_ref()
    }

    fn guides(&self) -> Arc<[GuideText]> {
        self.guides.clone()
    }

    fn catalog(&self) -> Option<Arc<Catalog>> {
        Some(self.catalog.clone())
    }

    async fn validate(&self, program: &Self::Program, _context: Option<&Value>, _cx: &StageContext) -> Validated {
        let checked = language::check(&Value::Object(program.clone()));
        if !checked.diagnostics.is_empty() {
            return Validated::with_diagnostics(checked.diagnostics);
        }
        Validated::valid()
            .with_plan(language::plan(&checked.steps))
            .with_references(checked.steps.into_iter().map(|(_, capability)| capability))
    }

    async fn execute(&self, run: ExecuteInput<Self::Program>, _cx: &StageContext) -> Result<Ran, RequestError> {
        let input = run.input.unwrap_or_else(|| Value::Object(Map::new()));
        let done = language::run(&Value::Object(run.program), &input);
        Ok(Ran {
            outcome: done.outcome,
            output: done.output,
            steps: done.steps,
        })
    }
}

/// The engine with `options`.
pub fn engine(options: &Options) -> Engine {
    let mut builder = Engine::builder("pilotage-reference-engine", env!("CARGO_PKG_VERSION"))
        .language(Workflow::new(options.execution_both, options.retention));
    if let Some(store) = &options.store {
        builder = builder.run_store(store.clone());
    }
    if options.resources {
        builder = builder.resources();
    }
    if options.hide_from_undeclared {
        builder = builder.hide_from_undeclared();
    }
    if let Some(executes) = options.max_executes_per_identity {
        builder = builder.max_executes_per_identity(executes);
    }
    #[cfg(feature = "oauth")]
    if let Some(resource_server) = &options.oauth {
        builder = builder.oauth(resource_server.clone());
    }
    builder.build().expect("the workflow/v1 declaration is servable")
}
