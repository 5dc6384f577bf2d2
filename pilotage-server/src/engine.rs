//! The engine: the Languages behind their declarations, and everything Part III fixes built
//! from them, in one place per rule:
//!
//! - the manifest (Part II 5.1 via the schema; Part III 4 binds its references), the inline
//!   manifest and the extension declaration (1.2, 3.2), the welcome text (3.4);
//! - the tool surface: the access tools (3.1, 4.1, 4.2) and three loop tools per Language
//!   built by the derive's runtime ([`pilotage_types::loop_tool`]: 4.3 to 4.6, 5, 3.4 signposts);
//! - dispatch: arguments routed to their Part III 7.1 channel, results in the envelope of 6;
//! - `pilotage_get_guide` (4.1), `pilotage_catalog` (4.2, 7.2 `catalog_version` siblings);
//! - runs (4.3, 8.1, 8.2, 8.4): ids, `store`, trace levels, retention, idempotency, the
//!   execute deadline (`bounds_exceeded`), a panicking Language (`internal`);
//! - resources (8.3), served by the very functions behind the tools.

use std::collections::BTreeMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use serde::Deserialize;
use serde_json::{json, Map, Value};

use super::language::{
    Catalog, Declaration, DerivedTool, ExecuteInput, GuideText, Language, Ran, Retention, StageContext, Validated,
};
use super::runs::{Expiry, IdempotencyHit, MemoryStore, RunRecord, RunStore, StoreError, StoreLimits};
use pilotage_types::loop_tool::{LoopToolSpec, LoopToolState, ProgramSpec};
use pilotage_types::shape::ShapeSchema;
use pilotage_types::{
    AccessTool, ArgumentFault, CapabilityDeclaration, CapabilitySettings, CapabilityValue, CatalogChange,
    CatalogChangedResult, CatalogGetResult, CatalogListResult, CatalogRequest, CatalogTool, Diagnostic,
    ExecuteResponse, ExecuteTraceLevel, GuideFetchResult, GuideIndexResult, GuideRequest, GuidesTool, LanguageEntry,
    LanguageIdentifier, LoopObject, Manifest, RequestError, RequestErrorKind, Stage, ToolDefinition, Trace,
    TraceFetchResponse, TraceLevel, TraceStep, ValidateResponse, VersionString,
};

type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// The outcome of the execute stage, before the framework builds the response.
pub(crate) enum Executed {
    /// The program did not validate (or did not fit its type): never started, never kept.
    Refused(Vec<Diagnostic>),
    /// The Run happened.
    Ran(Ran),
    /// A request error of the Language (or `not_found` for an unknown `program_ref`).
    Error(RequestError),
    /// The arguments did not fit the author's derived execute tool (Part III 7.1 routing).
    Fault(ArgumentFault),
}

/// The arguments of one call, for the stage: the raw arguments, and the author's derived
/// loop-tool struct that parses them, when the Language serves one for the stage.
#[derive(Clone, Copy)]
pub(crate) struct Call<'a> {
    pub arguments: &'a Value,
    pub derived: Option<DerivedTool>,
}

impl Call<'_> {
    /// `cx` with the arguments parsed into the derived struct (after the program fitted).
    fn bind(&self, mut cx: StageContext) -> Result<StageContext, ArgumentFault> {
        if let Some(derived) = self.derived {
            cx.arguments = Some((derived.parse)(self.arguments)?);
        }
        Ok(cx)
    }
}

/// A [`Language`] with its type erased, so that one engine serves several.
pub(crate) trait ErasedLanguage: Send + Sync {
    /// Compiles the program's schema, when known (the build's refusal names its pointer).
    fn prepare(&mut self, declaration: &Declaration) -> Result<(), BuildError>;
    fn language_guides(&self) -> Arc<[GuideText]>;
    fn language_catalog(&self) -> Option<Arc<Catalog>>;
    fn validate<'a>(
        &'a self,
        program: Value,
        context: Option<Value>,
        call: Call<'a>,
        cx: StageContext,
    ) -> BoxFuture<'a, Result<Validated, ArgumentFault>>;
    fn execute<'a>(
        &'a self,
        program: Result<Value, String>,
        input: ExecuteInput<()>,
        call: Call<'a>,
        cx: StageContext,
    ) -> BoxFuture<'a, Executed>;
    fn narrate(&self, trace: &Trace, question: Option<&str>, cx: &StageContext) -> Option<String>;
}

/// A [`Language`] of type `L` behind [`ErasedLanguage`].
pub(crate) struct ErasedFor<L> {
    language: L,
    argument: String,
    /// The program's JSON Schema, compiled at build, when known.
    shape: Option<ShapeSchema>,
}

impl<L> ErasedFor<L> {
    pub(crate) fn new(language: L, argument: String) -> Self {
        Self {
            language,
            argument,
            shape: None,
        }
    }
}

impl<L: Language> ErasedFor<L> {
    /// `program` as the Language's type, or its faults as diagnostics (Part III 4.6: program
    /// faults are diagnostics): every violation of the program's schema when it is known,
    /// else serde's first fault as `invalid_program` at the failing path.
    fn program_of(&self, program: Value) -> Result<L::Program, Vec<Diagnostic>> {
        if let Some(shape) = &self.shape {
            let violations = shape.check(&program);
            if !violations.is_empty() {
                return Err(violations
                    .iter()
                    .map(|violation| self.language.program_diagnostic(violation, violation.to_diagnostic()))
                    .collect());
            }
        }
        serde_path_to_error::deserialize::<_, L::Program>(program).map_err(|error| {
            vec![Diagnostic::error(
                "invalid_program",
                pilotage_types::loop_tool::pointer_of(error.path().iter()),
                format!(
                    "the program in `{}` does not fit its Language's shape: {}",
                    self.argument,
                    error.inner()
                ),
            )]
        })
    }
}

impl<L: Language> ErasedLanguage for ErasedFor<L> {
    fn prepare(&mut self, declaration: &Declaration) -> Result<(), BuildError> {
        let derived = || {
            declaration.derived[..2]
                .iter()
                .flatten()
                .find_map(|tool| (tool.state)()?.program_schema(&declaration.program_argument).cloned())
        };
        if let Some(schema) = self.language.program_schema().or_else(derived) {
            let shape = ShapeSchema::new(schema).map_err(|error| {
                BuildError(format!(
                    "{}: the program's JSON Schema cannot be checked by the toolkit: {error}",
                    declaration.name
                ))
            })?;
            self.shape = Some(shape);
        }
        Ok(())
    }

    fn language_guides(&self) -> Arc<[GuideText]> {
        self.language.guides()
    }

    fn language_catalog(&self) -> Option<Arc<Catalog>> {
        self.language.catalog()
    }

    fn validate<'a>(
        &'a self,
        program: Value,
        context: Option<Value>,
        call: Call<'a>,
        cx: StageContext,
    ) -> BoxFuture<'a, Result<Validated, ArgumentFault>> {
        Box::pin(async move {
            match self.program_of(program) {
                Ok(program) => {
                    let cx = call.bind(cx)?;
                    Ok(self.language.validate(&program, context.as_ref(), &cx).await)
                }
                Err(diagnostics) => Ok(Validated::with_diagnostics(diagnostics)),
            }
        })
    }

    fn execute<'a>(
        &'a self,
        program: Result<Value, String>,
        input: ExecuteInput<()>,
        call: Call<'a>,
        cx: StageContext,
    ) -> BoxFuture<'a, Executed> {
        Box::pin(async move {
            let program: L::Program = match program {
                Ok(inline) => match self.program_of(inline) {
                    Ok(program) => program,
                    Err(diagnostics) => return Executed::Refused(diagnostics),
                },
                Err(reference) => match self.language.program_ref(&reference) {
                    Some(program) => program,
                    None => {
                        return Executed::Error(RequestError::not_found(format!("unknown program_ref '{reference}'")))
                    }
                },
            };
            let cx = match call.bind(cx) {
                Ok(cx) => cx,
                Err(fault) => return Executed::Fault(fault),
            };
            let checked = self.language.validate(&program, input.context.as_ref(), &cx).await;
            if !checked.is_valid() {
                return Executed::Refused(checked.diagnostics);
            }
            let run = ExecuteInput {
                program,
                input: input.input,
                context: input.context,
                test_run: input.test_run,
                mode: input.mode,
            };
            match self.language.execute(run, &cx).await {
                Ok(ran) => Executed::Ran(ran),
                Err(error) => Executed::Error(error),
            }
        })
    }

    fn narrate(&self, trace: &Trace, question: Option<&str>, cx: &StageContext) -> Option<String> {
        self.language.narrate_in(trace, question, cx)
    }
}

/// One Language as the engine serves it.
pub(crate) struct Served {
    pub declaration: Declaration,
    pub language: Box<dyn ErasedLanguage>,
    pub has_catalog: bool,
    /// Its own validate, execute, trace tools (`None` when retention is `none`, and all
    /// `None` when the engine's shared tools serve it).
    pub tools: [Option<LoopToolState>; 3],
    /// The names of the loop tools that serve it (its own, or the shared ones).
    pub names: [Option<String>; 3],
}

impl Served {
    /// The Language's catalog, when it has one.
    fn catalog(&self) -> Option<Arc<Catalog>> {
        self.has_catalog.then(|| self.language.language_catalog()).flatten()
    }
}

/// Settings of an engine beyond its Languages.
#[derive(Clone)]
pub(crate) struct Settings {
    pub name: String,
    pub version: String,
    pub resources: bool,
    pub hide_from_undeclared: bool,
    pub execute_deadline: Duration,
    /// At most this many executes of one requester in flight at once.
    pub max_executes_per_identity: usize,
    pub limits: StoreLimits,
    pub instructions: Option<String>,
    /// Loop tools shared by every Language: (names, descriptions).
    pub shared: Option<([String; 3], [String; 3])>,
    /// The run store; `None`: a [`MemoryStore`] with `limits`.
    pub store: Option<Arc<dyn RunStore>>,
}

/// Everything one engine process shares between its sessions and requests.
pub(crate) struct Core {
    pub settings: Settings,
    pub languages: Vec<Served>,
    /// The loop tools shared by every Language, when the engine shares them.
    pub shared: [Option<LoopToolState>; 3],
    pub manifest: Manifest,
    pub tools: Vec<ToolDefinition>,
    /// [`Core::tools`] as rmcp's tools, converted once (every `tools/list` answers them).
    pub mcp_tools: Vec<rmcp::model::Tool>,
    pub instructions: String,
    pub runs: Arc<dyn RunStore>,
    /// The executes in flight, per requester (8.2: bounded work per requester).
    pub in_flight: InFlight,
}

/// The requester every request of a stateless deployment without an identity function is
/// (see [`crate::runs`]): all such requests share it.
pub(crate) const ANONYMOUS_STATELESS: &str = "stateless";

/// The anonymous stateless requester stands for many clients: its bound is this many times
/// the per-identity one.
pub(crate) const ANONYMOUS_FACTOR: usize = 8;

/// Executes in flight per requester, bounded: a requester at its bound is refused
/// (`bounds_exceeded`) until one of its executes ends, so that one requester cannot hold
/// every worker. Entries go when their count drops to zero (the table is as large as the
/// requesters with an execute in flight).
#[derive(Default)]
pub(crate) struct InFlight {
    counts: std::sync::Mutex<std::collections::HashMap<String, usize>>,
}

/// One execute's place in [`InFlight`], given back when dropped (a finished, failed,
/// timed-out or cancelled execute alike).
pub(crate) struct Slot<'a> {
    table: &'a InFlight,
    requester: String,
}

impl InFlight {
    /// A place for one more execute of `requester`, or `None` at `bound`.
    fn acquire(&self, requester: &str, bound: usize) -> Option<Slot<'_>> {
        let mut counts = self.counts.lock().unwrap_or_else(|e| e.into_inner());
        let count = counts.entry(requester.to_owned()).or_insert(0);
        if *count >= bound {
            if *count == 0 {
                counts.remove(requester);
            }
            return None;
        }
        *count += 1;
        Some(Slot {
            table: self,
            requester: requester.to_owned(),
        })
    }

    /// The executes of `requester` in flight now.
    #[cfg(test)]
    fn count(&self, requester: &str) -> usize {
        let counts = self.counts.lock().unwrap_or_else(|e| e.into_inner());
        counts.get(requester).copied().unwrap_or(0)
    }
}

impl Drop for Slot<'_> {
    fn drop(&mut self) {
        let mut counts = self.table.counts.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(count) = counts.get_mut(&self.requester) {
            *count -= 1;
            if *count == 0 {
                counts.remove(&self.requester);
            }
        }
    }
}

/// A tool answer: a result (structuredContent, `isError`), or a carrier error (-32602).
pub(crate) enum Answer {
    Result { content: Value, is_error: bool },
    Carrier(String),
}

impl Answer {
    fn ok(value: &impl serde::Serialize) -> Self {
        Self::Result {
            content: serde_json::to_value(value).expect("generated types serialize"),
            is_error: false,
        }
    }

    fn error(error: RequestError) -> Self {
        Self::Result {
            content: serde_json::to_value(&error).expect("generated types serialize"),
            is_error: true,
        }
    }

    fn of<T: serde::Serialize>(result: Result<T, RequestError>) -> Self {
        match result {
            Ok(value) => Self::ok(&value),
            Err(error) => Self::error(error),
        }
    }
}

/// Leaks `text` for the derive runtime's `'static` spec: done once per Language when an
/// engine is built.
fn leak(text: &str) -> &'static str {
    Box::leak(text.to_owned().into_boxed_str())
}

fn leak_list<T: Copy>(items: Vec<T>) -> &'static [T] {
    Box::leak(items.into_boxed_slice())
}

fn property(json_type: Option<&str>, description: &str) -> Value {
    match json_type {
        Some(json_type) => json!({"type": json_type, "description": description}),
        None => json!({"description": description}),
    }
}

/// The three loop tools of one Language (Part III 4.3 to 4.6, 5), built by the derive's
/// runtime so that the derive's rules hold for them as for a derived struct.
fn loop_tools(declaration: &Declaration, has_catalog: bool) -> [Option<LoopToolState>; 3] {
    shared_loop_tools(
        &[(declaration, has_catalog)],
        &declaration.tool_names,
        &declaration.tool_descriptions,
        declaration.derived.map(|tool| tool.and_then(|tool| (tool.state)())),
    )
}

/// The three loop tools serving `languages` together (Part III 4.3, 5: one program-bearing
/// argument per Language, a shared validate tool requiring none of them, 4.4 rule 9), or one
/// Language alone. A member is declared when any Language takes it; what a Language does not
/// declare is refused for it at dispatch.
fn shared_loop_tools(
    languages: &[(&Declaration, bool)],
    tool_names: &[String; 3],
    descriptions: &[String; 3],
    derived: [Option<&'static LoopToolState>; 3],
) -> [Option<LoopToolState>; 3] {
    let any = |f: &dyn Fn(&Declaration) -> bool| languages.iter().any(|(d, _)| f(d));
    let declaration = languages[0].0;
    let programs = leak_list(
        languages
            .iter()
            .map(|(d, _)| ProgramSpec {
                argument: leak(&d.program_argument),
                language: leak(&d.name),
            })
            .collect(),
    );
    let language_names = leak_list(languages.iter().map(|(d, _)| leak(&d.name)).collect());
    let has_catalog = languages.iter().any(|(_, catalog)| *catalog);
    let json_type = |shape: super::ProgramType| match shape {
        super::ProgramType::Object => Some("object"),
        super::ProgramType::String => Some("string"),
        super::ProgramType::Array => Some("array"),
        super::ProgramType::Any => None,
    };
    let both = declaration.execution == pilotage_types::Execution::Both;
    let mut validate = Map::new();
    let mut execute = Map::new();
    for (d, _) in languages {
        let program = property(json_type(d.program_type), &format!("The {} program.", d.name));
        validate.insert(d.program_argument.clone(), program.clone());
        execute.insert(d.program_argument.clone(), program);
    }
    if any(&|d| d.context_schema.is_some()) {
        validate.insert("context".into(), property(Some("object"), "The validation context."));
    }
    // A reference names no Language, so only a tool of one Language takes one.
    if languages.len() == 1 && declaration.program_ref {
        execute.insert(
            "program_ref".into(),
            property(Some("string"), "A promoted program, by reference."),
        );
    }
    execute.insert(
        "input".into(),
        property(json_type(declaration.input_type), "The run's input."),
    );
    if any(&|d| d.context_schema.is_some()) {
        execute.insert("context".into(), property(Some("object"), "The validation context."));
    }
    execute.insert(
        "trace_level".into(),
        property(
            Some("string"),
            "none, summary or full: the inline trace (default summary).",
        ),
    );
    execute.insert(
        "store".into(),
        property(
            Some("boolean"),
            "Keep the run for trace fetch (default: as the retention declares).",
        ),
    );
    if has_catalog {
        execute.insert(
            "expected_catalog_version".into(),
            property(Some("string"), "The catalog version the program was written against."),
        );
    }
    if any(&|d| d.idempotency) {
        execute.insert(
            "idempotency_key".into(),
            property(Some("string"), "The same key and request answer the same response."),
        );
    }
    if any(&|d| d.test_run) {
        execute.insert(
            "test_run".into(),
            property(Some("boolean"), "Run without real effects."),
        );
    }
    if both {
        execute.insert("mode".into(), property(Some("string"), "immediate or deploy."));
    }
    let mut trace = Map::new();
    trace.insert(
        "run_id".into(),
        property(Some("string"), "The run_id an execute response returned."),
    );
    trace.insert("trace_level".into(), property(Some("string"), "summary or full."));
    if any(&|d| d.narrate) {
        trace.insert("question".into(), property(Some("string"), "A question about the run."));
    }

    let build = |index: usize, stage: Stage, mut members: Map<String, Value>| {
        let (mut name, mut title, mut description) = (leak(&tool_names[index]), None, leak(&descriptions[index]));
        let mut required = Vec::new();
        // The author's derived struct names the tool and adds its own members (their schemas
        // as the derive made them permissive); the Part III members stay the framework's.
        if let Some(state) = derived[index] {
            let own = state.spec();
            if !state.definition.name.is_empty() {
                name = leak(&state.definition.name);
            }
            title = own.title;
            if !own.description.is_empty() {
                description = own.description;
            }
            let schema = &state.definition.input_schema;
            let is_own = |member: &str| {
                pilotage_types::reserved_member(member).is_none() && !programs.iter().any(|p| p.argument == member)
            };
            if let Some(Value::Object(properties)) = schema.get("properties") {
                for (member, property) in properties.iter().filter(|(member, _)| is_own(member)) {
                    members.insert(member.clone(), property.clone());
                }
            }
            if let Some(Value::Array(names)) = schema.get("required") {
                required.extend(
                    names
                        .iter()
                        .filter_map(Value::as_str)
                        .filter(|m| is_own(m))
                        .map(str::to_owned),
                );
            }
        }
        let names: Vec<&'static str> = members.keys().map(|k| leak(k)).collect();
        let spec = LoopToolSpec {
            stage,
            name,
            title,
            description,
            programs: if stage == Stage::Trace { &[] } else { programs },
            languages: language_names,
            catalog: has_catalog && stage == Stage::Execute,
            execution_both: both && stage == Stage::Execute,
            destructive: any(&|d| d.destructive.unwrap_or(true)),
            read_only: languages.iter().all(|(d, _)| d.read_only.unwrap_or(false)),
            idempotent: languages.iter().all(|(d, _)| d.idempotent),
            open_world: any(&|d| d.open_world.unwrap_or(false)),
            members: leak_list(names),
        };
        LoopToolState::new(
            json!({"type": "object", "properties": members, "required": required}),
            spec,
        )
    };
    [
        Some(build(0, Stage::Validate, validate)),
        Some(build(1, Stage::Execute, execute)),
        any(&|d| d.retention != Retention::None).then(|| build(2, Stage::Trace, trace)),
    ]
}

/// `settings` as a capability value: `true` when no sub-feature is on.
fn capability(settings: CapabilitySettings) -> CapabilityValue {
    let empty = settings == CapabilitySettings::new();
    if empty {
        CapabilityValue::Boolean(true)
    } else {
        CapabilityValue::CapabilitySettings(settings)
    }
}

fn flag(on: bool) -> Option<bool> {
    on.then_some(true)
}

/// The manifest entry of one Language (Part II 5.1; references bound to the fixed tool
/// names, Part III 4; capabilities at Language level, exactly what is declared).
fn language_entry(served: &Served, resources: bool) -> LanguageEntry {
    let declaration = &served.declaration;
    let name = |i: usize| served.names[i].clone();
    let mut loop_tools = LoopObject::new(name(0).unwrap_or_default());
    loop_tools.execute = name(1);
    loop_tools.trace = name(2);
    let mut guides = CapabilitySettings::new();
    guides.topic_fetch = flag(declaration.topic_fetch);
    let mut execute = CapabilitySettings::new();
    execute.idempotency = flag(declaration.idempotency);
    execute.test_run = flag(declaration.test_run);
    let mut trace_fetch = CapabilitySettings::new();
    trace_fetch.narrate = flag(declaration.narrate);
    let mut capabilities = CapabilityDeclaration::new()
        .with_guides(capability(guides))
        .with_validate(true)
        .with_execute(capability(execute));
    if declaration.plan {
        capabilities = capabilities.with_plan(true);
    }
    if served.names[2].is_some() {
        capabilities = capabilities.with_trace_fetch(capability(trace_fetch));
    }
    let mut entry = LanguageEntry::new(
        LanguageIdentifier(declaration.name.clone()),
        declaration.title.clone(),
        GuidesTool::PilotageGetGuide,
        loop_tools,
        declaration.locator.clone(),
    )
    .with_execution(declaration.execution.clone())
    .with_trace(declaration.trace.clone())
    .with_retention(pilotage_types::Retention(declaration.retention.declared()));
    if served.has_catalog {
        let mut catalog = CapabilitySettings::new();
        catalog.search = flag(declaration.search);
        catalog.changed_since = flag(declaration.changed_since);
        capabilities = capabilities.with_catalog(capability(catalog));
        entry = entry.with_catalog(CatalogTool::PilotageCatalog);
        if resources {
            entry = entry.with_catalog_resource(catalog_uri(&declaration.name));
        }
    }
    if resources {
        entry = entry.with_guides_resource(guides_uri(&declaration.name));
    }
    if let Some(schema) = &declaration.context_schema {
        entry = entry.with_context_schema(schema.clone());
    }
    entry.with_capabilities(capabilities)
}

/// The welcome text of Part III 3.4: names Pilotage, directs the agent to `pilotage_manifest`
/// first, and maps the loop.
fn welcome(languages: &[Served]) -> String {
    let names: Vec<&str> = languages.iter().map(|l| l.declaration.name.as_str()).collect();
    let mut text = format!(
        "This server speaks Pilotage ({}): call pilotage_manifest first. It serves the program Language{} {}",
        pilotage_types::EXTENSION_ID,
        if names.len() == 1 { "" } else { "s" },
        names.join(", ")
    );
    text.push_str(": learn with pilotage_get_guide");
    if languages.iter().any(|l| l.has_catalog) {
        text.push_str(", look up with pilotage_catalog");
    }
    for served in languages {
        let tool = |i: usize| served.names[i].clone();
        text.push_str(&format!(
            "; {}: validate with {}",
            served.declaration.name,
            tool(0).unwrap_or_default()
        ));
        if let Some(execute) = tool(1) {
            text.push_str(&format!(", execute with {execute}"));
        }
        if let Some(trace) = tool(2) {
            text.push_str(&format!(", fetch traces with {trace}"));
        }
    }
    text.push('.');
    text
}

/// `name` percent-encoded as one RFC 3986 path segment (Part III 8.3: `/` becomes `%2F`).
pub fn path_segment(name: &str) -> String {
    name.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' => char::from(b).to_string(),
            other => format!("%{other:02X}"),
        })
        .collect()
}

/// The resource URI of the guide index of `language` (Part III 8.3).
pub fn guides_uri(language: &str) -> String {
    format!("pilotage://guides/{}", path_segment(language))
}

/// The resource URI of one guide (Part III 8.3).
pub fn guide_uri(language: &str, id: &str) -> String {
    format!("{}/{}", guides_uri(language), path_segment(id))
}

/// The resource URI of the catalog of `language` (Part III 8.3).
pub fn catalog_uri(language: &str) -> String {
    format!("pilotage://catalog/{}", path_segment(language))
}

/// Part III 4.5: the execute tool's hints follow from the catalog, or what the author states
/// agrees with it. Unstated hints are filled in (`Some`) from the catalog's `risk_hints`.
fn resolve_effects(declaration: &mut Declaration, catalog: Option<&Catalog>) -> Result<(), BuildError> {
    let entries = catalog.map(|c| c.entries.as_slice()).unwrap_or_default();
    let destructive_entry = entries.iter().find(|e| e.risk_hints.destructive);
    let writing_entry = entries.iter().find(|e| !e.risk_hints.read_only);
    if let (Some(false), Some(entry)) = (declaration.destructive, destructive_entry) {
        return Err(BuildError(format!(
            "{}: the execute tool is declared not destructive, but the catalog entry `{}` is destructive \
             (risk_hints.destructive); its Runs may destroy (Part III 4.5): drop with_destructive(false)",
            declaration.name, entry.id
        )));
    }
    if let (Some(true), Some(entry)) = (declaration.read_only, writing_entry) {
        return Err(BuildError(format!(
            "{}: the execute tool is declared read-only, but the catalog entry `{}` is not read-only \
             (risk_hints.readOnly false) (Part III 4.5)",
            declaration.name, entry.id
        )));
    }
    if catalog.is_some() {
        let all_read_only = !entries.is_empty() && writing_entry.is_none();
        declaration.destructive.get_or_insert(destructive_entry.is_some());
        declaration.read_only.get_or_insert(all_read_only);
        declaration
            .open_world
            .get_or_insert(entries.iter().any(|e| e.risk_hints.open_world));
    }
    if declaration.read_only == Some(true) && declaration.destructive == Some(true) {
        return Err(BuildError(format!(
            "{}: the execute tool cannot be both read-only and destructive",
            declaration.name
        )));
    }
    Ok(())
}

/// Part III 4.1: every guide's topics answer in the topic form, so each has a `## <topic>`
/// section; guide ids are unique, and a guide names the Language that serves it (or none,
/// filled in when served).
fn check_guides(declaration: &Declaration, guides: &[GuideText]) -> Result<(), BuildError> {
    let mut ids = std::collections::BTreeSet::new();
    for text in guides {
        let guide = &text.guide;
        if !ids.insert(guide.id.as_str()) {
            return Err(BuildError(format!(
                "{}: two guides have the id `{}`",
                declaration.name, guide.id
            )));
        }
        if !guide.language.0.is_empty() && guide.language.0 != declaration.name {
            return Err(BuildError(format!(
                "{}: the guide `{}` names the Language `{}` (leave it empty, or use GuideText::from_markdown)",
                declaration.name, guide.id, guide.language.0
            )));
        }
        for topic in &guide.topics {
            if topic_section(&text.body, topic).is_none() {
                return Err(BuildError(format!(
                    "{}: the guide `{}` lists the topic `{topic}`, but its body has no `## {topic}` section \
                     for the topic form to answer (Part III 4.1)",
                    declaration.name, guide.id
                )));
            }
        }
    }
    Ok(())
}

/// The author's derived loop tools agree with the declaration they serve: the stage, the
/// program argument and Language, and every Part III member they list is one the framework
/// serves for this declaration.
fn check_derived(declaration: &Declaration, tools: &[Option<LoopToolState>; 3]) -> Result<(), BuildError> {
    const SLOTS: [(Stage, &str); 3] = [
        (Stage::Validate, "validate"),
        (Stage::Execute, "execute"),
        (Stage::Trace, "trace"),
    ];
    for (index, derived) in declaration.derived.iter().enumerate() {
        let Some(derived) = derived else { continue };
        let (stage, slot) = SLOTS[index];
        let name = derived.type_name;
        let Some(state) = (derived.state)() else {
            return Err(BuildError(format!(
                "{}: `{name}` is not a #[derive(PilotageTool)] struct",
                declaration.name
            )));
        };
        let spec = state.spec();
        if spec.stage != stage {
            return Err(BuildError(format!(
                "{}: `{name}` is a {} tool; it cannot serve as the {slot} tool",
                declaration.name,
                spec.stage.loop_member()
            )));
        }
        let Some(served) = &tools[index] else {
            return Err(BuildError(format!(
                "{}: `{name}` is given as the {slot} tool, but the Language keeps no runs (retention none), \
                 so it has no {slot} tool",
                declaration.name
            )));
        };
        match (stage, spec.programs) {
            (Stage::Trace, _) => {
                if !spec.languages.is_empty() && !spec.languages.contains(&declaration.name.as_str()) {
                    return Err(BuildError(format!(
                        "{}: the trace tool `{name}` serves {:?}, not this Language",
                        declaration.name, spec.languages
                    )));
                }
            }
            (_, [program])
                if program.argument == declaration.program_argument && program.language == declaration.name => {}
            (_, programs) => {
                return Err(BuildError(format!(
                    "{}: `{name}` must have one program member, `{}` of language \"{}\" (the declaration's program \
                     argument); it has {}",
                    declaration.name,
                    declaration.program_argument,
                    declaration.name,
                    if programs.is_empty() {
                        "none".to_owned()
                    } else {
                        programs
                            .iter()
                            .map(|p| format!("`{}` of \"{}\"", p.argument, p.language))
                            .collect::<Vec<_>>()
                            .join(", ")
                    }
                )));
            }
        }
        let served_members = served.spec().members;
        for member in spec.members {
            if pilotage_types::reserved_member(member).is_some() && !served_members.contains(member) {
                return Err(BuildError(format!(
                    "{}: `{name}` lists the Part III member `{member}`, which this Language's {slot} tool does not \
                     take (declare the sub-feature it belongs to, or drop the member)",
                    declaration.name
                )));
            }
        }
        if stage == Stage::Execute && spec.execution_both != (declaration.execution == pilotage_types::Execution::Both)
        {
            return Err(BuildError(format!(
                "{}: `{name}` says execution {}, the declaration {}",
                declaration.name,
                if spec.execution_both {
                    "\"both\""
                } else {
                    "not \"both\""
                },
                declaration.execution.as_str()
            )));
        }
    }
    Ok(())
}

/// Why an engine could not be built.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BuildError(pub String);

impl std::fmt::Display for BuildError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "cannot build the engine: {}", self.0)
    }
}

impl std::error::Error for BuildError {}

impl Core {
    pub(crate) fn build(
        settings: Settings,
        languages: Vec<(Declaration, Box<dyn ErasedLanguage>)>,
    ) -> Result<Self, BuildError> {
        if languages.is_empty() {
            return Err(BuildError("an engine serves at least one Language".into()));
        }
        let mut served = Vec::new();
        let mut names = std::collections::BTreeSet::new();
        for (mut declaration, mut language) in languages {
            if !<LanguageIdentifier as pilotage_types::SchemaDef>::is_valid(&Value::String(declaration.name.clone())) {
                return Err(BuildError(format!(
                    "`{}` is not a Language identifier (name/vN)",
                    declaration.name
                )));
            }
            let catalog = language.language_catalog();
            let has_catalog = catalog.is_some();
            if (declaration.search || declaration.changed_since) && !has_catalog {
                return Err(BuildError(format!(
                    "{}: catalog sub-features are declared but the Language has no catalog",
                    declaration.name
                )));
            }
            resolve_effects(&mut declaration, catalog.as_deref())?;
            check_guides(&declaration, &language.language_guides())?;
            if settings.shared.is_some() && declaration.derived.iter().any(Option::is_some) {
                return Err(BuildError(format!(
                    "{}: derived loop tools cannot be shared tools (share_loop_tools serves several Languages \
                     through the framework's own tools)",
                    declaration.name
                )));
            }
            language.prepare(&declaration)?;
            let tools = if settings.shared.is_some() {
                [None, None, None]
            } else {
                loop_tools(&declaration, has_catalog)
            };
            check_derived(&declaration, &tools)?;
            let tool_names = tools.each_ref().map(|t| t.as_ref().map(|t| t.definition.name.clone()));
            served.push(Served {
                declaration,
                language,
                has_catalog,
                tools,
                names: tool_names,
            });
        }
        let shared = match &settings.shared {
            None => [None, None, None],
            Some((tool_names, descriptions)) => {
                let mut arguments = std::collections::BTreeSet::new();
                for s in &served {
                    if !arguments.insert(s.declaration.program_argument.clone()) {
                        return Err(BuildError(format!(
                            "shared loop tools need a program argument of its own per Language (Part III 5): \
                             `{}` is used twice",
                            s.declaration.program_argument
                        )));
                    }
                    if s.declaration.execution != served[0].declaration.execution {
                        return Err(BuildError(
                            "shared loop tools serve Languages of one execution (`mode` is a member of the tool)"
                                .into(),
                        ));
                    }
                }
                let languages: Vec<(&Declaration, bool)> =
                    served.iter().map(|s| (&s.declaration, s.has_catalog)).collect();
                let tools = shared_loop_tools(&languages, tool_names, descriptions, [None, None, None]);
                let tool_names = tools.each_ref().map(|t| t.as_ref().map(|t| t.definition.name.clone()));
                for s in &mut served {
                    s.names = tool_names.clone();
                    if s.declaration.retention == Retention::None {
                        s.names[2] = None;
                    }
                }
                tools
            }
        };
        for tool in served
            .iter()
            .flat_map(|s| s.tools.iter())
            .chain(shared.iter())
            .flatten()
        {
            if !names.insert(tool.definition.name.clone()) {
                return Err(BuildError(format!("two tools are named `{}`", tool.definition.name)));
            }
        }
        for access in [AccessTool::Manifest, AccessTool::GetGuide, AccessTool::Catalog] {
            if names.contains(access.name()) {
                return Err(BuildError(format!("a loop tool is named `{}`", access.name())));
            }
        }
        let entries: Vec<LanguageEntry> = served.iter().map(|s| language_entry(s, settings.resources)).collect();
        let manifest = Manifest::new(VersionString(pilotage_types::PILOTAGE_VERSION.to_owned()), entries);
        let mut tools = vec![
            AccessTool::Manifest.definition().clone(),
            AccessTool::GetGuide.definition().clone(),
        ];
        if served.iter().any(|s| s.has_catalog) {
            tools.push(AccessTool::Catalog.definition().clone());
        }
        for language in &served {
            tools.extend(language.tools.iter().flatten().map(|t| t.definition.clone()));
        }
        tools.extend(shared.iter().flatten().map(|t| t.definition.clone()));
        let instructions = settings.instructions.clone().unwrap_or_else(|| welcome(&served));
        let runs = settings
            .store
            .clone()
            .unwrap_or_else(|| Arc::new(MemoryStore::new(settings.limits)));
        let mcp_tools = tools.iter().map(pilotage_types::mcp::tool).collect();
        Ok(Self {
            settings,
            languages: served,
            shared,
            manifest,
            tools,
            mcp_tools,
            instructions,
            runs,
            in_flight: InFlight::default(),
        })
    }

    /// The Language (when one tool serves one) and the stage of the tool `name`, for the
    /// request's span: `manifest`, `guides`, `catalog`, `validate`, `execute` or `trace`.
    pub(crate) fn describe(&self, name: &str, arguments: &Value) -> (Option<String>, Option<&'static str>) {
        const STAGES: [&str; 3] = ["validate", "execute", "trace"];
        let language = arguments.get("language").and_then(Value::as_str).map(str::to_owned);
        if name == AccessTool::Manifest.name() {
            return (None, Some("manifest"));
        }
        if name == AccessTool::GetGuide.name() {
            return (language, Some("guides"));
        }
        if name == AccessTool::Catalog.name() {
            return (language, Some("catalog"));
        }
        for served in &self.languages {
            if let Some(index) = served.names.iter().position(|n| n.as_deref() == Some(name)) {
                let shared = self.shared.iter().flatten().any(|t| t.definition.name == name);
                let language = if shared {
                    self.languages
                        .iter()
                        .find(|l| {
                            arguments
                                .get(&l.declaration.program_argument)
                                .is_some_and(|v| !v.is_null())
                        })
                        .map(|l| l.declaration.name.clone())
                } else {
                    Some(served.declaration.name.clone())
                };
                return (language, Some(STAGES[index]));
            }
        }
        (None, None)
    }

    fn served(&self, language: &str) -> Option<&Served> {
        self.languages.iter().find(|l| l.declaration.name == language)
    }

    fn unknown_language(language: &str) -> RequestError {
        RequestError::not_found(format!("unknown language '{language}'"))
    }

    /// Answers one `tools/call` of a Pilotage tool; `None` for a tool that is not one.
    pub(crate) async fn call(&self, name: &str, arguments: &Value, identity: &str) -> Option<Answer> {
        if name == AccessTool::Manifest.name() {
            return Some(Answer::ok(&self.manifest));
        }
        if name == AccessTool::GetGuide.name() {
            return Some(match GuideRequest::from_arguments(arguments, &self.manifest) {
                Ok(request) => Answer::of(self.guide(&request)),
                Err(fault) => fault_answer(fault, Stage::Validate, None),
            });
        }
        if name == AccessTool::Catalog.name() && self.languages.iter().any(|l| l.has_catalog) {
            return Some(match CatalogRequest::from_arguments(arguments, &self.manifest) {
                Ok(request) => self.catalog(&request),
                Err(fault) => {
                    let version = arguments
                        .get("language")
                        .and_then(Value::as_str)
                        .and_then(|l| self.served(l))
                        .and_then(|s| s.language.language_catalog())
                        .map(|c| c.version.clone());
                    let fault = match version {
                        Some(version) => fault.with_catalog_version(version),
                        None => fault,
                    };
                    fault_answer(fault, Stage::Validate, None)
                }
            });
        }
        for (index, tool) in self.shared.iter().enumerate() {
            let Some(tool) = tool.as_ref().filter(|t| t.definition.name == name) else {
                continue;
            };
            let chosen = match index {
                // The Language is the one whose program argument is there (the tool's
                // eligibility rules have refused none or several for validate; for execute,
                // the runnable selection).
                0 | 1 => self.languages.iter().find(|l| {
                    arguments
                        .get(&l.declaration.program_argument)
                        .is_some_and(|v| !v.is_null())
                }),
                _ => None,
            };
            return Some(match (index, chosen) {
                (0, Some(served)) => self.validate(served, tool, arguments, identity).await,
                (1, Some(served)) => self.execute(served, tool, arguments, identity).await,
                (0 | 1, None) => match tool.from_arguments::<Value>(arguments) {
                    Err(fault) => fault_answer(fault, if index == 0 { Stage::Validate } else { Stage::Execute }, None),
                    Ok(_) => Answer::error(RequestError::invalid_request(
                        "supply the program in the argument of its Language",
                    )),
                },
                _ => self.fetch_shared(tool, arguments, identity).await,
            });
        }
        for served in &self.languages {
            for (index, tool) in served.tools.iter().enumerate() {
                let Some(tool) = tool.as_ref().filter(|t| t.definition.name == name) else {
                    continue;
                };
                return Some(match index {
                    0 => self.validate(served, tool, arguments, identity).await,
                    1 => self.execute(served, tool, arguments, identity).await,
                    _ => self.fetch(served, tool, arguments, identity).await,
                });
            }
        }
        None
    }

    fn guide(&self, request: &GuideRequest) -> Result<Value, RequestError> {
        let served = self
            .served(request.language())
            .ok_or_else(|| Self::unknown_language(request.language()))?;
        let guides = served.language.language_guides();
        // A guide built from Markdown alone names no Language: it is the one serving it.
        let metadata = |text: &GuideText| {
            let mut guide = text.guide.clone();
            if guide.language.0.is_empty() {
                guide.language = LanguageIdentifier(served.declaration.name.clone());
            }
            guide
        };
        let (id, topic) = match request {
            GuideRequest::Index { .. } => {
                let index = GuideIndexResult::new(guides.iter().map(metadata));
                return Ok(serde_json::to_value(index).expect("serializes"));
            }
            GuideRequest::Fetch { id, .. } => (id, None),
            GuideRequest::Topic { id, topic, .. } => (id, Some(topic)),
        };
        let Some(text) = guides.iter().find(|g| &g.guide.id == id) else {
            return Err(RequestError::not_found(format!("unknown guide '{id}'")));
        };
        let mut guide = metadata(text);
        guide.body = Some(match topic {
            None => text.body.clone(),
            Some(topic) => topic_section(&text.body, topic)
                .ok_or_else(|| RequestError::not_found(format!("unknown topic '{topic}' of guide '{id}'")))?,
        });
        Ok(serde_json::to_value(GuideFetchResult::new(guide)).expect("serializes"))
    }

    fn catalog(&self, request: &CatalogRequest) -> Answer {
        let Some(catalog) = self
            .served(request.language())
            .and_then(|s| s.language.language_catalog())
        else {
            // CatalogRequest has refused a Language that declares no catalog; what is left is
            // one the manifest does not list.
            return Answer::error(Self::unknown_language(request.language()));
        };
        let version = catalog.version.clone();
        let with_version = |error: RequestError| error.with_catalog_version(version.clone());
        match request {
            CatalogRequest::List {
                kind,
                tag,
                q,
                cursor,
                limit,
                ..
            } => match list(&catalog, kind, tag, q, cursor, *limit) {
                Ok(page) => Answer::ok(&page),
                Err(error) => Answer::error(with_version(error)),
            },
            CatalogRequest::Get { id, .. } => match catalog.entries.iter().find(|e| &e.id == id) {
                Some(entry) => Answer::ok(&CatalogGetResult::new(entry.clone(), version)),
                None => Answer::error(with_version(RequestError::not_found(format!("unknown entry '{id}'")))),
            },
            CatalogRequest::ChangedSince { catalog_version, .. } => match changes_since(&catalog, catalog_version) {
                Some(changes) => Answer::ok(&CatalogChangedResult::new(version, changes)),
                None => Answer::error(with_version(RequestError::from_kind(
                    RequestErrorKind::UnknownBaseline,
                    format!("unknown catalog_version {catalog_version}: list the catalog again"),
                ))),
            },
        }
    }

    async fn validate(&self, served: &Served, tool: &LoopToolState, arguments: &Value, identity: &str) -> Answer {
        #[derive(Deserialize)]
        struct Members {
            context: Option<Value>,
        }
        let members = match tool.from_arguments::<Members>(arguments) {
            Ok(members) => members,
            Err(fault) => return fault_answer(fault, Stage::Validate, None),
        };
        if members.context.is_some() && served.declaration.context_schema.is_none() {
            return Answer::ok(&ValidateResponse::invalid([context_binding(&served.declaration)]));
        }
        let program = arguments
            .get(&served.declaration.program_argument)
            .cloned()
            .unwrap_or(Value::Null);
        let cx = StageContext::new(identity);
        let call = Call {
            arguments,
            derived: served.declaration.derived[0],
        };
        let checked = match served.language.validate(program, members.context, call, cx).await {
            Ok(checked) => checked,
            Err(fault) => return fault_answer(fault, Stage::Validate, None),
        };
        let valid = checked.is_valid();
        let mut response = ValidateResponse::new(valid, checked.diagnostics);
        if valid {
            if served.declaration.plan {
                response.plan = checked.plan;
            }
            response.references = checked.references;
        }
        if let Some(catalog) = served.catalog() {
            response.catalog_version = Some(catalog.version.clone());
        }
        Answer::ok(&response)
    }

    async fn execute(&self, served: &Served, tool: &LoopToolState, arguments: &Value, identity: &str) -> Answer {
        #[derive(Deserialize)]
        struct Members {
            program_ref: Option<String>,
            input: Option<Value>,
            context: Option<Value>,
            trace_level: Option<ExecuteTraceLevel>,
            store: Option<bool>,
            expected_catalog_version: Option<String>,
            idempotency_key: Option<String>,
            test_run: Option<bool>,
            mode: Option<String>,
        }
        let run_id = super::runs::new_run_id();
        let members = match tool.from_arguments::<Members>(arguments) {
            Ok(members) => members,
            Err(fault) => return fault_answer(fault, Stage::Execute, Some(&run_id)),
        };
        // Bounded work per requester: past its bound, refused before anything runs.
        let bound = if identity == ANONYMOUS_STATELESS {
            self.settings.max_executes_per_identity.saturating_mul(ANONYMOUS_FACTOR)
        } else {
            self.settings.max_executes_per_identity
        };
        let Some(_slot) = self.in_flight.acquire(identity, bound) else {
            tracing::warn!(
                error.type = "bounds_exceeded",
                pilotage.requester = %super::telemetry::identity_hash(identity),
                bound,
                "a requester is at its bound of executes in flight; refused"
            );
            return Answer::error(RequestError::from_kind(
                RequestErrorKind::BoundsExceeded,
                format!(
                    "this requester already has {bound} executes in flight, the engine's bound \
                     (max_executes_per_identity): retry when one has finished"
                ),
            ));
        };
        let declaration = &served.declaration;
        // A shared tool takes every Language's members; what this Language does not declare is
        // refused for it as an undeclared sub-feature is (Part III 7.1).
        for (given, declared, member) in [
            (
                members.idempotency_key.is_some(),
                declaration.idempotency,
                "idempotency_key",
            ),
            (members.test_run.is_some(), declaration.test_run, "test_run"),
        ] {
            if given && !declared {
                let feature = if member == "test_run" {
                    "execute.test_run"
                } else {
                    "execute.idempotency"
                };
                return Answer::error(RequestError::unsupported(format!(
                    "`{member}` is not supported by {}: it does not declare {feature}",
                    declaration.name
                )));
            }
        }
        if members.context.is_some() && declaration.context_schema.is_none() {
            return Answer::ok(&ExecuteResponse::validation_error(
                run_id,
                [context_binding(declaration)],
            ));
        }
        // ExecuteRequest.store: true under retention none is unsupported, never ignored.
        if members.store == Some(true) && declaration.retention == Retention::None {
            return Answer::error(RequestError::unsupported(format!(
                "{} keeps no runs (retention none): store true is unsupported",
                declaration.name
            )));
        }
        let idempotency = members.idempotency_key.clone().map(|key| {
            let mut request = arguments.as_object().cloned().unwrap_or_default();
            request.remove("idempotency_key");
            (key, canonical(&Value::Object(request)))
        });
        if let Some((key, fingerprint)) = &idempotency {
            let hit = match self.runs.idempotency(identity, key, fingerprint).await {
                Ok(hit) => hit,
                Err(error) => return store_failed(error),
            };
            match hit {
                IdempotencyHit::Replay(response) => return Answer::ok(&response),
                IdempotencyHit::Conflict => {
                    return Answer::error(RequestError::from_kind(
                        RequestErrorKind::IdempotencyConflict,
                        format!("idempotency_key '{key}' was used with another request"),
                    ))
                }
                IdempotencyHit::Miss => {}
            }
        }
        if let (Some(expected), Some(catalog)) = (&members.expected_catalog_version, served.catalog()) {
            if expected != &catalog.version {
                let outcome = pilotage_types::Outcome::failure(
                    "catalog_drift",
                    format!("the catalog is at {}, not {expected}: validate again", catalog.version),
                );
                return Answer::ok(&ExecuteResponse::new(run_id, outcome));
            }
        }
        let program = match arguments.get(&declaration.program_argument).filter(|v| !v.is_null()) {
            Some(inline) => Ok(inline.clone()),
            None => Err(members.program_ref.clone().unwrap_or_default()),
        };
        let input = ExecuteInput {
            program: (),
            input: members.input,
            context: members.context,
            test_run: members.test_run.unwrap_or(false),
            mode: members.mode,
        };
        let cx = StageContext::new(identity).with_run_id(run_id.clone());
        let call = Call {
            arguments,
            derived: declaration.derived[1],
        };
        // The execute stage is bounded (Part III 8.2): past the deadline the request is
        // answered bounds_exceeded; a panic of the Language is an internal error.
        let stage = std::panic::AssertUnwindSafe(served.language.execute(program, input, call, cx));
        let executed = match tokio::time::timeout(self.settings.execute_deadline, futures_catch_unwind(stage)).await {
            Ok(Ok(executed)) => executed,
            Ok(Err(())) => {
                tracing::error!(
                    error.type = "panic",
                    pilotage.language = %declaration.name,
                    pilotage.run_id = %run_id,
                    "the Language panicked while executing; the request is answered internal"
                );
                return Answer::error(RequestError::internal(
                    "the Language failed while executing (a fault of the server)",
                ));
            }
            Err(_) => {
                tracing::warn!(
                    error.type = "deadline",
                    pilotage.language = %declaration.name,
                    pilotage.run_id = %run_id,
                    deadline_s = self.settings.execute_deadline.as_secs_f64(),
                    "a run did not finish within the execute deadline; answered bounds_exceeded"
                );
                return Answer::error(RequestError::from_kind(
                    RequestErrorKind::BoundsExceeded,
                    format!(
                        "the run did not finish within the engine's bound of {} s",
                        self.settings.execute_deadline.as_secs_f64()
                    ),
                ));
            }
        };
        let response = match executed {
            Executed::Error(error) => return Answer::error(error),
            Executed::Fault(fault) => return fault_answer(fault, Stage::Execute, Some(&run_id)),
            // A refused Run is never retained.
            Executed::Refused(diagnostics) => ExecuteResponse::validation_error(run_id, diagnostics),
            Executed::Ran(ran) => {
                let recorded = declaration.trace.clone();
                let full = ran.steps;
                let steps = at_level(&full, &recorded);
                let requested = members.trace_level.unwrap_or(ExecuteTraceLevel::Summary);
                let inline = match requested {
                    ExecuteTraceLevel::Full => Some(min_level(TraceLevel::Full, &recorded)),
                    ExecuteTraceLevel::Summary => Some(TraceLevel::Summary),
                    _ => None,
                };
                let output = if ran.outcome.ok { ran.output.clone() } else { None };
                let keep = match (members.store, declaration.retention) {
                    (Some(false), _) | (_, Retention::None) => None,
                    (_, Retention::For(duration)) => Some(Expiry::At(SystemTime::now() + duration)),
                    (_, Retention::Session) => Some(Expiry::WithSession),
                };
                if let Some(expiry) = keep {
                    let record = RunRecord::new(
                        declaration.name.clone(),
                        ran.outcome.clone(),
                        output.clone(),
                        steps.clone(),
                        recorded,
                    );
                    if let Err(error) = self.runs.put(identity, &run_id, record, expiry).await {
                        return store_failed(error);
                    }
                }
                let mut response = ExecuteResponse::new(run_id.clone(), ran.outcome);
                response.output = output;
                if let Some(level) = inline {
                    response.trace = Some(Trace::new(run_id, level.clone(), at_level(&steps, &level)));
                }
                response
            }
        };
        if let Some((key, fingerprint)) = &idempotency {
            if let Err(error) = self.runs.remember(identity, key, fingerprint, &response).await {
                return store_failed(error);
            }
        }
        Answer::ok(&response)
    }

    /// A trace fetch through the shared trace tool: the record says whose run it is.
    async fn fetch_shared(&self, tool: &LoopToolState, arguments: &Value, identity: &str) -> Answer {
        let run_id = arguments.get("run_id").and_then(Value::as_str).unwrap_or_default();
        let owner = match self.runs.get(identity, run_id).await {
            Ok(Some(record)) => self.served(&record.language),
            Ok(None) => None,
            Err(error) => return store_failed(error),
        };
        match owner {
            Some(served) => self.fetch(served, tool, arguments, identity).await,
            // Argument faults first, then the one not_found of Part III 9.5.
            None => match tool.from_arguments::<Value>(arguments) {
                Err(fault) => fault_answer(fault, Stage::Trace, None),
                Ok(_) => Answer::error(RequestError::not_found("unknown run: it may have expired")),
            },
        }
    }

    async fn fetch(&self, served: &Served, tool: &LoopToolState, arguments: &Value, identity: &str) -> Answer {
        #[derive(Deserialize)]
        struct Members {
            run_id: String,
            trace_level: Option<TraceLevel>,
            question: Option<String>,
        }
        let members = match tool.from_arguments::<Members>(arguments) {
            Ok(members) => members,
            Err(fault) => return fault_answer(fault, Stage::Trace, None),
        };
        if members.question.is_some() && !served.declaration.narrate {
            return Answer::error(RequestError::unsupported(format!(
                "`question` is not supported by {}: it does not declare trace_fetch.narrate",
                served.declaration.name
            )));
        }
        let call = Call {
            arguments,
            derived: served.declaration.derived[2],
        };
        let cx = match call.bind(StageContext::new(identity)) {
            Ok(cx) => cx,
            Err(fault) => return fault_answer(fault, Stage::Trace, None),
        };
        // Part III 9.5: one not_found for an unknown, an expired and another identity's run.
        let unknown = || Answer::error(RequestError::not_found("unknown run: it may have expired"));
        let record = match self.runs.get(identity, &members.run_id).await {
            Ok(Some(record)) => record,
            Ok(None) => return unknown(),
            Err(error) => return store_failed(error),
        };
        if record.language != served.declaration.name {
            return unknown();
        }
        let level = min_level(members.trace_level.unwrap_or(TraceLevel::Full), &record.recorded);
        let trace = Trace::new(members.run_id.clone(), level.clone(), at_level(&record.steps, &level));
        let mut response = TraceFetchResponse::new(members.run_id, record.outcome, trace.clone());
        response.output = record.output;
        if served.declaration.narrate {
            response.narration = served.language.narrate(&trace, members.question.as_deref(), &cx);
        }
        Answer::ok(&response)
    }

    /// The resources of Part III 8.3: (URI, name, content), each content what the tool it
    /// mirrors answers (the same function computes both).
    pub(crate) fn resources(&self) -> Vec<(String, String, Value)> {
        if !self.settings.resources {
            return Vec::new();
        }
        let mut out = Vec::new();
        for served in &self.languages {
            let name = &served.declaration.name;
            let index = GuideRequest::Index { language: name.clone() };
            if let Ok(content) = self.guide(&index) {
                out.push((guides_uri(name), format!("{name} guides"), content));
            }
            for text in served.language.language_guides().iter() {
                let fetch = GuideRequest::Fetch {
                    language: name.clone(),
                    id: text.guide.id.clone(),
                };
                if let Ok(content) = self.guide(&fetch) {
                    out.push((guide_uri(name, &text.guide.id), text.guide.title.clone(), content));
                }
            }
            if let Some(catalog) = served.catalog() {
                if let Ok(page) = list(&catalog, &None, &None, &None, &None, None) {
                    let content = serde_json::to_value(page).expect("serializes");
                    out.push((catalog_uri(name), format!("{name} catalog"), content));
                }
            }
        }
        out
    }
}

/// `value` as JSON with object keys sorted at every depth: the same request always gives the
/// same text, whatever order its members came in.
fn canonical(value: &Value) -> String {
    fn sorted(value: &Value) -> Value {
        match value {
            Value::Object(members) => {
                let mut keys: Vec<&String> = members.keys().collect();
                keys.sort();
                Value::Object(keys.into_iter().map(|k| (k.clone(), sorted(&members[k]))).collect())
            }
            Value::Array(items) => Value::Array(items.iter().map(sorted).collect()),
            other => other.clone(),
        }
    }
    sorted(value).to_string()
}

/// Runs `future`, turning a panic into `Err(())`.
async fn futures_catch_unwind<F: Future>(future: std::panic::AssertUnwindSafe<F>) -> Result<F::Output, ()> {
    struct CatchUnwind<F>(F);
    impl<F: Future> Future for CatchUnwind<F> {
        type Output = Result<F::Output, ()>;
        fn poll(self: Pin<&mut Self>, cx: &mut std::task::Context<'_>) -> std::task::Poll<Self::Output> {
            // Safety: the inner future is never moved out of its pinned wrapper.
            let inner = unsafe { self.map_unchecked_mut(|s| &mut s.0) };
            match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| inner.poll(cx))) {
                Ok(std::task::Poll::Ready(value)) => std::task::Poll::Ready(Ok(value)),
                Ok(std::task::Poll::Pending) => std::task::Poll::Pending,
                Err(_) => std::task::Poll::Ready(Err(())),
            }
        }
    }
    CatchUnwind(future.0).await
}

/// The diagnostic of a context the Language does not take (Part III 4.4 rule 10: never a
/// request error).
fn context_binding(declaration: &Declaration) -> Diagnostic {
    Diagnostic::error(
        "context_binding",
        "",
        format!(
            "{} takes no validation context; the supplied `context` was not bound (Part III 4.4 rule 10)",
            declaration.name
        ),
    )
}

/// A store failure, as the request error a client sees (the store's message kept for the
/// operator, Part III 7.2: `internal` is a fault of the server).
fn store_failed(error: StoreError) -> Answer {
    tracing::error!(error.type = "store", reason = %error, "the run store failed; the request is answered internal");
    Answer::error(RequestError::internal(format!(
        "the run could not be stored or read: {error}"
    )))
}

/// The lower of two trace levels (`summary` < `full`); an unknown level counts as summary.
fn min_level(requested: TraceLevel, recorded: &TraceLevel) -> TraceLevel {
    if requested == TraceLevel::Full && *recorded == TraceLevel::Full {
        TraceLevel::Full
    } else {
        TraceLevel::Summary
    }
}

/// `steps` at `level`: summary drops step inputs and outputs (Part II 5.8).
fn at_level(steps: &[TraceStep], level: &TraceLevel) -> Vec<TraceStep> {
    steps
        .iter()
        .map(|step| {
            let mut step = step.clone();
            if *level != TraceLevel::Full {
                step.input = None;
                step.output = None;
            }
            step
        })
        .collect()
}

/// An [`ArgumentFault`] on its Part III 7.1 channel: a carrier error, a request error, or
/// program diagnostics as the stage's response (`run_id` for an execute response).
fn fault_answer(fault: ArgumentFault, stage: Stage, run_id: Option<&str>) -> Answer {
    match fault {
        ArgumentFault::Carrier { message } => Answer::Carrier(message),
        ArgumentFault::Request(error) => Answer::error(error),
        ArgumentFault::Program(diagnostics) => match stage {
            Stage::Execute => Answer::ok(&ExecuteResponse::validation_error(
                run_id.map(str::to_owned).unwrap_or_else(super::runs::new_run_id),
                diagnostics,
            )),
            _ => Answer::ok(&ValidateResponse::invalid(diagnostics)),
        },
    }
}

/// The `## <topic>` section of a Markdown body, heading included, up to the next `## `.
pub(crate) fn topic_section(body: &str, topic: &str) -> Option<String> {
    let heading = format!("## {topic}");
    let start = body
        .lines()
        .scan(0usize, |offset, line| {
            let at = *offset;
            *offset += line.len() + 1;
            Some((at, line))
        })
        .find(|(_, line)| line.trim_end() == heading)?
        .0;
    let rest = &body[start..];
    let end = rest
        .match_indices("\n## ")
        .map(|(at, _)| at + 1)
        .next()
        .unwrap_or(rest.len());
    Some(rest[..end].trim_end().to_owned())
}

/// The largest page `list` answers, and the page when no `limit` is given (Part III 4.2: a
/// server MAY cap `limit`).
pub(crate) const MAX_PAGE: u64 = 100;
const DEFAULT_PAGE: u64 = 50;

/// One page of the catalog, filtered by `kind`, `tag` and `q` (case-insensitive, in the name,
/// id and description). The cursor is the offset of the next entry, opaque to clients.
fn list(
    catalog: &Catalog,
    kind: &Option<String>,
    tag: &Option<String>,
    q: &Option<String>,
    cursor: &Option<String>,
    limit: Option<u64>,
) -> Result<CatalogListResult, RequestError> {
    let limit = usize::try_from(limit.unwrap_or(DEFAULT_PAGE).min(MAX_PAGE)).unwrap_or(1);
    let start: usize = match cursor {
        None => 0,
        Some(cursor) => cursor
            .strip_prefix('o')
            .and_then(|n| n.parse().ok())
            .ok_or_else(|| RequestError::invalid_request(format!("cursor '{cursor}' is not one this server gave")))?,
    };
    let q = q.as_deref().map(str::to_lowercase);
    let matching: Vec<&pilotage_types::CatalogEntry> = catalog
        .entries
        .iter()
        .filter(|e| kind.as_ref().is_none_or(|k| &e.kind == k))
        .filter(|e| {
            tag.as_ref()
                .is_none_or(|t| e.tags.as_ref().is_some_and(|tags| tags.contains(t)))
        })
        .filter(|e| {
            q.as_ref().is_none_or(|q| {
                e.name.to_lowercase().contains(q)
                    || e.id.to_lowercase().contains(q)
                    || e.description.as_ref().is_some_and(|d| d.to_lowercase().contains(q))
            })
        })
        .collect();
    let page = CatalogListResult::new(
        matching.iter().skip(start).take(limit).map(|e| (*e).clone()),
        catalog.version.clone(),
    );
    Ok(if start + limit < matching.len() {
        page.with_next_cursor(format!("o{}", start + limit))
    } else {
        page
    })
}

/// What changed from `baseline` to the current version, each entry once with its last
/// change; `None` for a version the history does not know.
fn changes_since(catalog: &Catalog, baseline: &str) -> Option<Vec<CatalogChange>> {
    if baseline == catalog.version {
        return Some(Vec::new());
    }
    let at = catalog.history.iter().position(|r| r.version == baseline)?;
    let mut last: BTreeMap<String, CatalogChange> = BTreeMap::new();
    let mut order: Vec<String> = Vec::new();
    for revision in &catalog.history[at..] {
        for change in &revision.changes {
            if !last.contains_key(&change.id) {
                order.push(change.id.clone());
            }
            last.insert(change.id.clone(), change.clone());
        }
    }
    Some(order.into_iter().filter_map(|id| last.remove(&id)).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn executes_in_flight_are_bounded_per_requester_and_given_back() {
        let table = InFlight::default();
        let first = table.acquire("a", 2).expect("a slot");
        let second = table.acquire("a", 2).expect("a second slot");
        assert!(table.acquire("a", 2).is_none(), "the third is refused");
        assert!(table.acquire("b", 2).is_some(), "another requester has its own bound");
        drop(first);
        assert_eq!(table.count("a"), 1);
        assert!(table.acquire("a", 2).is_some(), "a slot given back is taken again");
        drop(second);
        assert_eq!(table.count("a"), 0);
        assert!(
            table.counts.lock().unwrap().is_empty(),
            "no entry outlives its executes"
        );
        assert!(table.acquire("c", 0).is_none() && table.counts.lock().unwrap().is_empty());
    }

    #[test]
    fn topic_sections_end_at_the_next_heading() {
        let body = "# Guide\n\n## steps\nOne.\nTwo.\n\n## output\nThree.\n";
        assert_eq!(topic_section(body, "steps").as_deref(), Some("## steps\nOne.\nTwo."));
        assert_eq!(topic_section(body, "output").as_deref(), Some("## output\nThree."));
        assert_eq!(topic_section(body, "missing"), None);
        assert_eq!(topic_section(body, "step"), None, "whole headings only");
    }

    #[test]
    fn changes_since_follows_the_history() {
        let change = |id: &str, kind| CatalogChange::new(id, kind);
        let catalog = Catalog::new("v3", [])
            .with_previous("v1", [change("a", pilotage_types::CatalogChangeKind::Added)])
            .with_previous(
                "v2",
                [
                    change("a", pilotage_types::CatalogChangeKind::Modified),
                    change("b", pilotage_types::CatalogChangeKind::Added),
                ],
            );
        assert_eq!(changes_since(&catalog, "v3"), Some(Vec::new()));
        let since_v1 = changes_since(&catalog, "v1").unwrap();
        assert_eq!(since_v1.len(), 2);
        assert_eq!(since_v1[0].change, pilotage_types::CatalogChangeKind::Modified);
        assert_eq!(changes_since(&catalog, "v0"), None);
    }

    #[test]
    fn pages_cover_every_entry_once() {
        let entries: Vec<pilotage_types::CatalogEntry> = (0..250)
            .map(|i| {
                pilotage_types::CatalogEntry::new(
                    format!("e{i}"),
                    "function",
                    format!("Entry {i}"),
                    "safe",
                    pilotage_types::RiskHints::new().with_read_only(true),
                )
            })
            .collect();
        let catalog = Catalog::new("v1", entries);
        let mut seen = Vec::new();
        let mut cursor = None;
        loop {
            let page = list(&catalog, &None, &None, &None, &cursor, Some(1000)).unwrap();
            assert!(page.items.len() as u64 <= MAX_PAGE);
            seen.extend(page.items.iter().map(|e| e.id.clone()));
            match page.next_cursor {
                Some(next) => cursor = Some(next),
                None => break,
            }
        }
        assert_eq!(seen.len(), 250);
        assert!(list(&catalog, &None, &None, &None, &Some("bogus".into()), None).is_err());
        let found = list(&catalog, &None, &None, &Some("ENTRY 24".into()), &None, None).unwrap();
        assert_eq!(found.items.len(), 11, "Entry 24 and 240-249");
    }
}
