//! What an engine author writes: a [`Language`] (its [`Declaration`], guides, catalog, and the
//! validate and execute stage functions), and the values those functions take and return.
//! Everything protocol-shaped is built from these by the framework.

use std::any::Any;
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

use pilotage_types::shape::ShapeViolation;
use pilotage_types::{
    ArgumentFault, CatalogChange, CatalogEntry, Diagnostic, Guide, GuideLevel, LanguageIdentifier, Outcome,
    PilotageTool, Plan, RequestError, TraceLevel, TraceStep,
};

/// How long a Language keeps a Run's record for trace fetch (Part II via the schema's
/// `retention`; Part III 8.1).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Retention {
    /// Nothing is kept: trace fetch always answers `not_found`; `store: true` is `unsupported`.
    None,
    /// Kept for this long after the Run (an ISO 8601 duration on the wire).
    For(Duration),
    /// Kept for the MCP session (stdio, HTTP with sessions); refused on a stateless HTTP
    /// deployment (Part III 8.1, 10.1-11).
    Session,
}

impl Retention {
    /// The manifest's `retention` string: `none`, `session`, or an ISO 8601 duration such as
    /// `PT1H`.
    pub fn declared(self) -> String {
        match self {
            Self::None => "none".to_owned(),
            Self::Session => pilotage_types::SESSION_RETENTION.to_owned(),
            Self::For(duration) => iso8601(duration),
        }
    }
}

/// `duration` as an ISO 8601 duration of hours, minutes and seconds (`PT1H`, `PT90S` is
/// written `PT1M30S`; at least `PT0S`).
pub fn iso8601(duration: Duration) -> String {
    let total = duration.as_secs();
    let (hours, minutes, seconds) = (total / 3600, total / 60 % 60, total % 60);
    let mut text = "PT".to_owned();
    if hours > 0 {
        text.push_str(&format!("{hours}H"));
    }
    if minutes > 0 {
        text.push_str(&format!("{minutes}M"));
    }
    if seconds > 0 || total == 0 {
        text.push_str(&format!("{seconds}S"));
    }
    text
}

/// The JSON type of a Language's program, which its loop tools declare for the program
/// argument (Part III 4.6: program members are constrained by JSON type only).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum ProgramType {
    /// A JSON object (the default).
    #[default]
    Object,
    /// A JSON string (a text-form program).
    String,
    /// A JSON array.
    Array,
    /// Any JSON value.
    Any,
}

/// Everything the manifest, the welcome text and the loop tools say about one Language.
/// Built with [`Declaration::new`] and the `with_*` setters; every sub-feature is off until
/// declared, and the framework serves exactly what is declared.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Declaration {
    /// The Language identifier, e.g. `workflow/v1`.
    pub name: String,
    /// Its human title.
    pub title: String,
    /// `json-pointer` (the default) or `text-range`: how diagnostics point into programs.
    pub locator: pilotage_types::Locator,
    /// `immediate` (the default), `deploy` or `both` (then the execute tool requires `mode`).
    pub execution: pilotage_types::Execution,
    /// The trace level runs are recorded at: `summary` or `full` (the default).
    pub trace: TraceLevel,
    /// How long runs are kept for trace fetch.
    pub retention: Retention,
    /// The JSON Schema of the validation context, when the Language takes one.
    pub context_schema: Option<Map<String, Value>>,
    /// The program's JSON type.
    pub program_type: ProgramType,
    /// The JSON type of a run's `input` (default an object).
    pub input_type: ProgramType,
    /// The name of the program argument of the loop tools (default `program`).
    pub program_argument: String,
    /// The loop tools' names (default `<language>_validate`, `_execute`, `_trace`, the
    /// Language identifier with every character other than a letter, digit or `_` as `_`).
    pub tool_names: [String; 3],
    /// One sentence for each loop tool's description (the framework adds the stage and
    /// Language signposts of Part III 3.4 when they are missing).
    pub tool_descriptions: [String; 3],
    /// The execute tool's `destructiveHint` (Part III 4.5), when the author states it
    /// ([`Declaration::with_destructive`]). Unstated, it follows from the catalog: `true` when
    /// any entry's `risk_hints.destructive` is, `false` when none is; without a catalog,
    /// `true` (a Run may change the world). Stated `false` beside a destructive catalog entry
    /// is a [`crate::BuildError`] naming the entry.
    pub destructive: Option<bool>,
    /// The execute tool's `readOnlyHint`, when stated ([`Declaration::with_read_only`]).
    /// Unstated, it follows from the catalog: `true` when every entry is `readOnly` (and
    /// there is at least one), else `false`; without a catalog, `false`. Stated `true` beside
    /// an entry that is not read-only is a [`crate::BuildError`] naming the entry.
    pub read_only: Option<bool>,
    /// The execute tool's `idempotentHint` (default `false`; [`Declaration::with_idempotent`]).
    pub idempotent: bool,
    /// The execute tool's `openWorldHint`, when stated ([`Declaration::with_open_world`]).
    /// Unstated, `true` when any catalog entry's `risk_hints.openWorld` is, else `false`.
    pub open_world: Option<bool>,
    /// `plan`: validate answers a plan for a valid program.
    pub plan: bool,
    /// `execute.idempotency`: the execute tool takes `idempotency_key`.
    pub idempotency: bool,
    /// `execute.test_run`: the execute tool takes `test_run`.
    pub test_run: bool,
    /// `trace_fetch.narrate`: the trace tool takes `question`, answered by
    /// [`Language::narrate`].
    pub narrate: bool,
    /// `guides.topic_fetch`: guides can be fetched one `## topic` section at a time.
    pub topic_fetch: bool,
    /// `catalog.search`: `list` takes `q`.
    pub search: bool,
    /// `catalog.changed_since`: the catalog answers what changed since a version.
    pub changed_since: bool,
    /// `execute.program_ref`: Runs of promoted programs by reference
    /// ([`Language::program_ref`]).
    pub program_ref: bool,
    /// The author's `#[derive(PilotageTool)]` structs serving as the validate, execute and
    /// trace tools ([`Declaration::with_validate_tool`] and its siblings).
    pub(crate) derived: [Option<DerivedTool>; 3],
}

/// An author's `#[derive(PilotageTool)]` struct bound to one loop stage of a Language.
#[derive(Clone, Copy)]
pub(crate) struct DerivedTool {
    /// The struct's Rust type name, for build errors.
    pub type_name: &'static str,
    /// The derive's runtime state (definition, spec, program schemas).
    pub state: fn() -> Option<&'static pilotage_types::loop_tool::LoopToolState>,
    /// Parses the arguments into the struct (its Part III 7.1 routing), type-erased.
    pub parse: fn(&Value) -> Result<Arc<dyn Any + Send + Sync>, ArgumentFault>,
}

impl std::fmt::Debug for DerivedTool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.type_name)
    }
}

impl DerivedTool {
    fn of<T: PilotageTool + Send + Sync + 'static>() -> Self {
        fn parse<T: PilotageTool + Send + Sync + 'static>(
            arguments: &Value,
        ) -> Result<Arc<dyn Any + Send + Sync>, ArgumentFault> {
            T::from_arguments(arguments).map(|tool| Arc::new(tool) as Arc<dyn Any + Send + Sync>)
        }
        Self {
            type_name: std::any::type_name::<T>(),
            state: T::loop_tool_state,
            parse: parse::<T>,
        }
    }
}

/// The default loop tool names of a Language: its identifier with every character that is not
/// an ASCII letter, digit or `_` made `_`, then `_validate`, `_execute`, `_trace`.
pub fn default_tool_names(language: &str) -> [String; 3] {
    let stem: String = language
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() || c == '_' { c } else { '_' })
        .collect();
    [
        format!("{stem}_validate"),
        format!("{stem}_execute"),
        format!("{stem}_trace"),
    ]
}

impl Declaration {
    /// A Language `name` titled `title`: json-pointer locator, immediate execution, runs
    /// recorded at `full` and kept for an hour, an object program in the argument `program`,
    /// the default tool names, and no optional sub-feature.
    pub fn new(name: impl Into<String>, title: impl Into<String>) -> Self {
        let name = name.into();
        let tool_names = default_tool_names(&name);
        Self {
            title: title.into(),
            locator: pilotage_types::Locator::JsonPointer,
            execution: pilotage_types::Execution::Immediate,
            trace: TraceLevel::Full,
            retention: Retention::For(Duration::from_secs(3600)),
            context_schema: None,
            program_type: ProgramType::Object,
            program_argument: "program".to_owned(),
            input_type: ProgramType::Object,
            tool_names,
            tool_descriptions: [
                format!("Check a {name} program and list its diagnostics."),
                format!("Run a {name} program and return its outcome, output and trace."),
                format!("Fetch the stored trace of a {name} run by run_id."),
            ],
            destructive: None,
            read_only: None,
            idempotent: false,
            open_world: None,
            plan: false,
            idempotency: false,
            test_run: false,
            narrate: false,
            topic_fetch: false,
            search: false,
            changed_since: false,
            program_ref: false,
            derived: [None, None, None],
            name,
        }
    }

    /// Sets the locator.
    pub fn with_locator(mut self, locator: pilotage_types::Locator) -> Self {
        self.locator = locator;
        self
    }

    /// Sets the execution (`both`: the execute tool requires `mode`, Part III 4.4).
    pub fn with_execution(mut self, execution: pilotage_types::Execution) -> Self {
        self.execution = execution;
        self
    }

    /// Sets the recorded trace level.
    pub fn with_trace(mut self, trace: TraceLevel) -> Self {
        self.trace = trace;
        self
    }

    /// Sets the retention.
    pub fn with_retention(mut self, retention: Retention) -> Self {
        self.retention = retention;
        self
    }

    /// Declares a validation context and its schema.
    pub fn with_context_schema(mut self, schema: Map<String, Value>) -> Self {
        self.context_schema = Some(schema);
        self
    }

    /// Sets the program's JSON type and the program argument's name.
    pub fn with_program(mut self, argument: impl Into<String>, program_type: ProgramType) -> Self {
        self.program_argument = argument.into();
        self.program_type = program_type;
        self
    }

    /// Sets the JSON type of a run's `input`.
    pub fn with_input_type(mut self, input_type: ProgramType) -> Self {
        self.input_type = input_type;
        self
    }

    /// Names the three loop tools (validate, execute, trace).
    pub fn with_tool_names(mut self, validate: &str, execute: &str, trace: &str) -> Self {
        self.tool_names = [validate.to_owned(), execute.to_owned(), trace.to_owned()];
        self
    }

    /// Describes the three loop tools (validate, execute, trace); the stage and Language
    /// signposts are added where missing.
    pub fn with_tool_descriptions(mut self, validate: &str, execute: &str, trace: &str) -> Self {
        self.tool_descriptions = [validate.to_owned(), execute.to_owned(), trace.to_owned()];
        self
    }

    /// States the execute tool's `destructiveHint` (unstated, it follows from the catalog:
    /// see [`Declaration::destructive`]).
    pub fn with_destructive(mut self, destructive: bool) -> Self {
        self.destructive = Some(destructive);
        self
    }

    /// States the execute tool's `readOnlyHint` (unstated, it follows from the catalog: see
    /// [`Declaration::read_only`]).
    pub fn with_read_only(mut self, read_only: bool) -> Self {
        self.read_only = Some(read_only);
        self
    }

    /// States the execute tool's `idempotentHint` (default `false`).
    pub fn with_idempotent(mut self, idempotent: bool) -> Self {
        self.idempotent = idempotent;
        self
    }

    /// States the execute tool's `openWorldHint` (unstated, it follows from the catalog: see
    /// [`Declaration::open_world`]).
    pub fn with_open_world(mut self, open_world: bool) -> Self {
        self.open_world = Some(open_world);
        self
    }

    /// Serves the author's `#[derive(PilotageTool)]` struct `T` as this Language's validate
    /// tool. See [`Declaration::with_execute_tool`]: the same rules hold.
    pub fn with_validate_tool<T: PilotageTool + Send + Sync + 'static>(mut self) -> Self {
        self.derived[0] = Some(DerivedTool::of::<T>());
        self
    }

    /// Serves the author's `#[derive(PilotageTool)]` struct `T` as this Language's execute
    /// tool, with typed members of its own beside the Part III ones.
    ///
    /// The struct names the tool (its `name`, `title`, description and its own members); the
    /// framework still owns every Part III member (`input`, `trace_level`, `store`,
    /// `idempotency_key`, ...: declared by the framework as this declaration says, whether or
    /// not the struct lists them), their channels (Part III 7.1) and the envelope (6). Every
    /// call is parsed into `T` by the derive's rules (a member that does not fit is a request
    /// error, a program that does not fit is a diagnostic), and the stage function receives
    /// it through [`StageContext::arguments`]. The struct's program member must be this
    /// Language's program argument, its `language` this Language, and a Part III member it
    /// lists must be one this declaration serves: otherwise [`crate::EngineBuilder::build`]
    /// answers a [`crate::BuildError`] naming the struct and the member. When the program
    /// member's type also derives `schemars::JsonSchema` (it must, for the derive), programs
    /// are checked against that schema first and every violation is answered (see
    /// [`Language::program_schema`]).
    ///
    /// Not available with [`crate::EngineBuilder::share_loop_tools`] (a shared tool serves
    /// several Languages; the build says so).
    pub fn with_execute_tool<T: PilotageTool + Send + Sync + 'static>(mut self) -> Self {
        self.derived[1] = Some(DerivedTool::of::<T>());
        self
    }

    /// Serves the author's `#[derive(PilotageTool)]` struct `T` as this Language's trace
    /// tool; its own members reach [`Language::narrate_in`] through
    /// [`StageContext::arguments`]. See [`Declaration::with_execute_tool`].
    pub fn with_trace_tool<T: PilotageTool + Send + Sync + 'static>(mut self) -> Self {
        self.derived[2] = Some(DerivedTool::of::<T>());
        self
    }

    /// Declares `plan`.
    pub fn with_plan(mut self) -> Self {
        self.plan = true;
        self
    }

    /// Declares `execute.idempotency`.
    pub fn with_idempotency(mut self) -> Self {
        self.idempotency = true;
        self
    }

    /// Declares `execute.test_run`.
    pub fn with_test_run(mut self) -> Self {
        self.test_run = true;
        self
    }

    /// Declares `trace_fetch.narrate`.
    pub fn with_narrate(mut self) -> Self {
        self.narrate = true;
        self
    }

    /// Declares `guides.topic_fetch`.
    pub fn with_topic_fetch(mut self) -> Self {
        self.topic_fetch = true;
        self
    }

    /// Declares `catalog.search`.
    pub fn with_search(mut self) -> Self {
        self.search = true;
        self
    }

    /// Declares `catalog.changed_since`.
    pub fn with_changed_since(mut self) -> Self {
        self.changed_since = true;
        self
    }

    /// Accepts `program_ref` on the execute tool ([`Language::program_ref`]).
    pub fn with_program_ref(mut self) -> Self {
        self.program_ref = true;
        self
    }
}

/// One guide: its metadata (the generated [`Guide`], without `body`) and its Markdown body,
/// with one `## <topic>` section per topic for the topic form.
#[derive(Debug, Clone)]
pub struct GuideText {
    /// The metadata as the index lists it.
    pub guide: Guide,
    /// The body the fetch form returns.
    pub body: String,
}

impl GuideText {
    /// A guide from what its author knows: its `id`, `title`, `level` and Markdown `body`.
    /// The framework computes the rest: `topics` are the body's `## ` headings in order (the
    /// topic form answers the section under each), `language` is the Language that serves
    /// it, `size_bytes` the body's length in bytes, `tokens_estimate` a quarter of it
    /// (rounded up), and `version` a digest of the body (`sha-` and 16 hexadecimal digits of
    /// FNV-1a), so that it changes exactly when the body does.
    ///
    /// ```
    /// use pilotage_server::prelude::*;
    /// let guide = GuideText::from_markdown("intro", "Adding numbers", GuideLevel::Core,
    ///     "# Adding numbers\n\n## programs\n`{\"numbers\": [1, 2]}`\n\n## output\nThe sum.\n");
    /// assert_eq!(guide.guide.topics, ["programs", "output"]);
    /// assert_eq!(guide.guide.size_bytes, guide.body.len() as u64);
    /// ```
    pub fn from_markdown(
        id: impl Into<String>,
        title: impl Into<String>,
        level: GuideLevel,
        body: impl Into<String>,
    ) -> Self {
        let body = body.into();
        let topics = topics_of(&body);
        let guide = Guide::new(
            id,
            title,
            level,
            topics,
            LanguageIdentifier(String::new()),
            body_version(&body),
            0u64,
        )
        .with_tokens_estimate(body.len().div_ceil(4) as u64);
        Self::new(guide, body)
    }

    /// A guide from its full metadata and `body`; `size_bytes` is taken from the body, and
    /// the `language` is set to the serving Language's identifier when it is empty. Every
    /// topic must have a `## <topic>` section in the body (the build checks it); prefer
    /// [`GuideText::from_markdown`], which reads them from the body.
    pub fn new(mut guide: Guide, body: impl Into<String>) -> Self {
        let body = body.into();
        guide.size_bytes = body.len() as u64;
        guide.body = None;
        Self { guide, body }
    }
}

/// The `## ` headings of a Markdown body, in order, without repeats.
pub(crate) fn topics_of(body: &str) -> Vec<String> {
    let mut topics: Vec<String> = Vec::new();
    for line in body.lines() {
        // As the topic form reads a section: the whole heading line, trailing space aside.
        if let Some(topic) = line
            .trim_end()
            .strip_prefix("## ")
            .filter(|t| !t.is_empty() && !t.starts_with(char::is_whitespace))
        {
            if !topics.iter().any(|t| t == topic) {
                topics.push(topic.to_owned());
            }
        }
    }
    topics
}

/// `sha-` and the 64-bit FNV-1a digest of `body` in hexadecimal: a guide's content version.
fn body_version(body: &str) -> String {
    let digest = body.bytes().fold(0xcbf2_9ce4_8422_2325_u64, |hash, byte| {
        (hash ^ u64::from(byte)).wrapping_mul(0x0100_0000_01b3)
    });
    format!("sha-{digest:016x}")
}

/// One version of the catalog and the changes that led to it from the version before.
#[derive(Debug, Clone)]
pub struct CatalogRevision {
    /// The `catalog_version`.
    pub version: String,
    /// What changed from the previous revision to this one.
    pub changes: Vec<CatalogChange>,
}

/// A Language's catalog: its entries at the current version, and the history that
/// `changed_since` answers from (oldest first, the current version last; a version not in it
/// is `unknown_baseline`).
#[derive(Debug, Clone)]
pub struct Catalog {
    /// The current `catalog_version`.
    pub version: String,
    /// Every entry at that version.
    pub entries: Vec<CatalogEntry>,
    /// Earlier revisions, oldest first; the current version is implied after them.
    pub history: Vec<CatalogRevision>,
}

impl Catalog {
    /// A catalog at `version` with `entries` and no history.
    pub fn new(version: impl Into<String>, entries: impl IntoIterator<Item = CatalogEntry>) -> Self {
        Self {
            version: version.into(),
            entries: entries.into_iter().collect(),
            history: Vec::new(),
        }
    }

    /// The catalog with one earlier version: `version`, and the `changes` from it to the
    /// next one (appended in order).
    pub fn with_previous(
        mut self,
        version: impl Into<String>,
        changes: impl IntoIterator<Item = CatalogChange>,
    ) -> Self {
        self.history.push(CatalogRevision {
            version: version.into(),
            changes: changes.into_iter().collect(),
        });
        self
    }
}

/// What the validate stage found: its diagnostics (an error-severity one makes the program
/// invalid), and the plan of a valid program when the Language declares `plan`.
#[derive(Debug, Clone, Default)]
pub struct Validated {
    /// The findings, errors and warnings.
    pub diagnostics: Vec<Diagnostic>,
    /// The plan (sent only when the program is valid and `plan` is declared).
    pub plan: Option<Plan>,
    /// The catalog references the program uses, when valid (Part II 6.4 rule 5): the `id`
    /// of every catalog entry the program names (for example the operations its steps
    /// call), answered as the validate response's `references` so that an agent or host can
    /// look up their `risk_hints` before running it.
    pub references: Option<Vec<String>>,
}

impl Validated {
    /// A valid program without findings.
    pub fn valid() -> Self {
        Self::default()
    }

    /// A program with `diagnostics`.
    pub fn with_diagnostics(diagnostics: impl IntoIterator<Item = Diagnostic>) -> Self {
        Self {
            diagnostics: diagnostics.into_iter().collect(),
            ..Self::default()
        }
    }

    /// Sets the plan.
    pub fn with_plan(mut self, plan: Plan) -> Self {
        self.plan = Some(plan);
        self
    }

    /// Sets the catalog references: the catalog entry ids the program uses (see
    /// [`Validated::references`]).
    pub fn with_references(mut self, references: impl IntoIterator<Item = String>) -> Self {
        self.references = Some(references.into_iter().collect());
        self
    }

    /// Whether no diagnostic is an error.
    pub fn is_valid(&self) -> bool {
        !self
            .diagnostics
            .iter()
            .any(|d| d.severity == pilotage_types::DiagnosticSeverity::Error)
    }
}

/// What the execute stage did: the outcome, the output (only when `ok`), and the executed
/// steps at full detail (the framework derives the summary level and stores the record).
#[derive(Debug, Clone)]
pub struct Ran {
    /// The outcome (`Outcome::success(..)`, `Outcome::failure(..)`).
    pub outcome: Outcome,
    /// The output, sent only when the outcome is `ok`.
    pub output: Option<Value>,
    /// The steps, with inputs and outputs.
    pub steps: Vec<TraceStep>,
}

impl Ran {
    /// A Run that succeeded with `output`.
    pub fn success(output: impl Into<Value>, steps: impl IntoIterator<Item = TraceStep>) -> Self {
        Self {
            outcome: Outcome::success("success"),
            output: Some(output.into()),
            steps: steps.into_iter().collect(),
        }
    }

    /// A Run that failed with `status` and `error`.
    pub fn failure(
        status: impl Into<String>,
        error: impl Into<String>,
        steps: impl IntoIterator<Item = TraceStep>,
    ) -> Self {
        Self {
            outcome: Outcome::failure(status, error),
            output: None,
            steps: steps.into_iter().collect(),
        }
    }
}

/// What one execute request asks of the Language, already checked by the framework: the
/// program (inline, or resolved from `program_ref`) that validated, its input and context,
/// and the request's options.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct ExecuteInput<P> {
    /// The program.
    pub program: P,
    /// The run's input.
    pub input: Option<Value>,
    /// The validation context.
    pub context: Option<Value>,
    /// A test run (only when `execute.test_run` is declared): no real effects.
    pub test_run: bool,
    /// `immediate` or `deploy`, when execution is `both`.
    pub mode: Option<String>,
}

/// What a stage function knows about the request beside its arguments.
#[derive(Clone)]
#[non_exhaustive]
pub struct StageContext {
    /// The identity the request is made under (who may see its runs, Part III 8.4).
    pub identity: String,
    /// The run id, for execute (already chosen, so that steps and logs can name it).
    pub run_id: Option<String>,
    /// The call's arguments parsed into the author's derived loop-tool struct, when the
    /// Language serves one for this stage.
    pub(crate) arguments: Option<Arc<dyn Any + Send + Sync>>,
}

impl std::fmt::Debug for StageContext {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StageContext")
            .field("identity", &self.identity)
            .field("run_id", &self.run_id)
            .field("arguments", &self.arguments.is_some())
            .finish()
    }
}

impl StageContext {
    /// A context for `identity` (for calling stage functions in tests).
    pub fn new(identity: impl Into<String>) -> Self {
        Self {
            identity: identity.into(),
            run_id: None,
            arguments: None,
        }
    }

    /// Sets the run id.
    pub fn with_run_id(mut self, run_id: impl Into<String>) -> Self {
        self.run_id = Some(run_id.into());
        self
    }

    /// Sets the parsed arguments, as the framework does for a derived loop tool.
    pub fn with_arguments<T: Send + Sync + 'static>(mut self, arguments: T) -> Self {
        self.arguments = Some(Arc::new(arguments));
        self
    }

    /// The call's arguments as the author's `#[derive(PilotageTool)]` struct `T`, when the
    /// Language serves `T` for this stage ([`Declaration::with_execute_tool`] and its
    /// siblings); `None` otherwise (no struct bound, or another type asked for). The crate
    /// docs' "Loop tools of your own" has a whole example.
    ///
    /// ```
    /// use pilotage_server::prelude::*;
    /// struct DryRun(bool);
    /// let cx = StageContext::new("someone").with_arguments(DryRun(true));
    /// assert!(cx.arguments::<DryRun>().is_some_and(|d| d.0));
    /// assert!(cx.arguments::<String>().is_none());
    /// ```
    pub fn arguments<T: 'static>(&self) -> Option<&T> {
        self.arguments.as_deref()?.downcast_ref::<T>()
    }
}

/// A program Language served by the framework. The author implements the stage functions;
/// the framework owns the protocol around them.
///
/// `Program` is the program's Rust type: arguments are deserialized into it, and a program
/// that does not fit is reported through diagnostics (Part III 4.6), never as a request
/// error, and `validate` is not called for it:
///
/// - when the program's JSON Schema is known ([`Language::program_schema`], or the program
///   member of a derived loop tool: [`Declaration::with_execute_tool`]), the program is
///   checked against it first, by the toolkit's own checker
///   ([`pilotage_types::shape`]), and *every* violation is one diagnostic (a code per kind of
///   fault: `missing_member`, `wrong_type`, `unknown_member`, `not_allowed`,
///   `out_of_range`, `wrong_length`, `pattern_mismatch`, `no_variant`, ...; the JSON Pointer;
///   a message), which [`Language::program_diagnostic`] may rename or give hints;
/// - otherwise (the type does not derive `schemars::JsonSchema`) serde's first fault is one
///   `invalid_program` diagnostic at the failing path. To answer several faults with codes
///   of your own without a schema, take a loose type (`serde_json::Value`) and report them
///   from `validate`.
pub trait Language: Send + Sync + 'static {
    /// The program, as a `serde` type.
    type Program: DeserializeOwned + Send + Sync + 'static;

    /// The Language's declaration.
    fn declaration(&self) -> Declaration;

    /// Its guides (at least one is usual; none is allowed). Called on every guide request:
    /// keep them in an `Arc` and hand out a clone (`vec![..].into()` makes one).
    fn guides(&self) -> Arc<[GuideText]> {
        Arc::new([])
    }

    /// Its catalog, when it has one (the manifest then names `pilotage_catalog`). Called on
    /// every catalog request and with every validate and execute (for `catalog_version`):
    /// keep it in an `Arc` and hand out a clone; swap the `Arc` when the catalog changes.
    fn catalog(&self) -> Option<Arc<Catalog>> {
        None
    }

    /// The validate stage: the program's diagnostics, and its plan when valid. `context` is
    /// the validation context when the Language declares one.
    fn validate(
        &self,
        program: &Self::Program,
        context: Option<&Value>,
        cx: &StageContext,
    ) -> impl Future<Output = Validated> + Send;

    /// The execute stage, for a program that validated. A request error here (for example
    /// `bounds_exceeded`) is sent as one; a Run that fails is an `Ran` with an `ok: false`
    /// outcome.
    fn execute(
        &self,
        run: ExecuteInput<Self::Program>,
        cx: &StageContext,
    ) -> impl Future<Output = Result<Ran, RequestError>> + Send;

    /// A promoted program by reference (`execute.program_ref` declared); `None` answers
    /// `not_found`.
    fn program_ref(&self, reference: &str) -> Option<Self::Program> {
        let _ = reference;
        None
    }

    /// The narration of a stored run's trace (`trace_fetch.narrate` declared), answering
    /// `question` when one is asked.
    fn narrate(&self, trace: &pilotage_types::Trace, question: Option<&str>) -> Option<String> {
        let _ = (trace, question);
        None
    }

    /// [`Language::narrate`] with the request's context (its identity, and a derived trace
    /// tool's arguments: [`StageContext::arguments`]). The default calls `narrate`.
    fn narrate_in(&self, trace: &pilotage_types::Trace, question: Option<&str>, cx: &StageContext) -> Option<String> {
        let _ = cx;
        self.narrate(trace, question)
    }

    /// The JSON Schema of [`Language::Program`], when known: programs are then checked
    /// against it before they are deserialized, and every violation is answered as a
    /// diagnostic. The default is the schema of a derived loop tool's program member
    /// ([`Declaration::with_execute_tool`] or `with_validate_tool`), else none (serde's first
    /// fault is answered). When your program type derives `schemars::JsonSchema`, return
    /// [`crate::program_schema::<Self::Program>()`](crate::program_schema). A schema with a
    /// keyword the toolkit cannot check is a [`crate::BuildError`] naming its pointer.
    fn program_schema(&self) -> Option<Value> {
        None
    }

    /// The diagnostic answered for one violation of [`Language::program_schema`]: the
    /// default is `diagnostic` as the toolkit made it (its code, pointer and message); return
    /// another code, or add a hint (`diagnostic.with_hint(..)`).
    fn program_diagnostic(&self, violation: &ShapeViolation, diagnostic: Diagnostic) -> Diagnostic {
        let _ = violation;
        diagnostic
    }
}
