// A second, independent Pilotage engine, written on the official TypeScript MCP SDK server
// (the low-level `Server`), for testing Pilotage clients against an engine that is not the
// Rust reference engine. It serves one Language, `rules/v2` (rule sets), and is conformant to
// Part III 10.1 while differing from the reference engine wherever the specification allows:
//
// - discovery only through the `pilotage_manifest` tool: the initialize result declares the
//   extension (`capabilities.extensions`, 1.2) and carries the welcome text (`instructions`,
//   3.4), but no `_meta` manifest (3.2 makes that accelerator optional);
// - no catalog, hence no `pilotage_catalog` tool (4.2) and no `catalog` member in the Language;
// - capabilities declared at Language level; no plan; trace at most `summary`; retention
//   `PT10M` (an ISO 8601 duration, valid on stateless deployments too, 8.1);
// - the program argument is named `ruleset`, declared on check_rules and apply_rules under the
//   full `_meta` key (5);
// - the text content block of every result is the JSON of its structuredContent (6).
//
// usage: node engine.mjs                          # stdio
//        node engine.mjs --http PORT              # streamable HTTP, sessions (PORT 0: any free port)
//        node engine.mjs --http PORT --stateless  # streamable HTTP, a new Server per POST
//        node engine.mjs [...] --break NAME       # one deliberate conformance fault (below)
//        node engine.mjs [...] --diagnostics N    # check_rules floods N diagnostics (below)
//
// Over HTTP it binds 127.0.0.1 only, serves http://127.0.0.1:PORT/mcp (printed on stderr),
// refuses a non-loopback Host header (DNS rebinding) and a non-loopback Origin header.
//
// Fault injection, to show that a conformance checker catches each fault: `--break NAME` (one
// at a time, with any transport) changes exactly one behaviour; without it the engine is
// conformant. An unknown NAME is a usage error (exit status 2).
//
// - no-structured-content: every tools/call result omits structuredContent (the text content
//   and isError stay) (6);
// - invalid-program-is-error: check_rules with an invalid rule set answers isError: true with
//   the request error {"error": {"kind": "invalid_request", ...}} instead of valid: false
//   diagnostics (6, 7.1);
// - trace-level-32602: apply_rules with an unknown trace_level answers JSON-RPC -32602 instead
//   of a request error; trace_level is checked first, before the runnable selection, so
//   {"trace_level": "bogus"} without a rule set gets the -32602 too (a missing rule set with a
//   known or absent trace_level stays invalid_request) (7.1);
// - request-error-is-error-false: every request error is sent with isError: false (same
//   structuredContent) (7.1);
// - unknown-kind: every request error uses kind "rate_limited", outside the closed set (7.2);
// - malformed-execute: apply_rules responses (not request errors) carry run_id as the number 42
//   instead of a string (6);
// - trace-level-enum: the apply_rules inputSchema declares trace_level with
//   "enum": ["none", "summary", "full"] (behaviour otherwise unchanged) (4.6);
// - no-program-declaration: check_rules and apply_rules carry no _meta program declaration (5);
// - unknown-language-success: pilotage_get_guide with an unknown language answers the index
//   form {"guides": []} (isError false) instead of not_found (4.1, 7);
// - no-welcome: the initialize result has no instructions (no welcome text) (3.4);
// - foreign-envelope: every tool is listed without outputSchema, and the loop tools' results
//   break the result envelope while staying isError: false: apply_rules answers
//   {"run": {"id": "<run id>"}, "result": <output, or null when the run produced none>} instead
//   of an ExecuteResponse, check_rules {"ok": <valid>, "problems": [<diagnostics>]} instead of a
//   ValidateResponse, rules_trace {"run": {"id": "<run id>"}, "steps": [<trace steps>]}; request
//   errors, pilotage_manifest and pilotage_get_guide stay conformant, so the engine can still be
//   discovered (6).
//
// Large answers, to test a client's limits: `--diagnostics N` (N a positive integer, at most
// MAX_FLOOD; anything else is a usage error, exit status 2), with any transport and with or
// without `--break`. check_rules then answers every call that passes its inputSchema, whatever
// the rule set (and ignoring context, mode, test_run, program_ref), with valid: false and
// exactly N diagnostics, the i-th (0-based) {"severity": "error", "code": "rule_<i>", "path":
// "/rules/<i>", "message": <about 1 KB of text unique to i>}, in the ordinary result shape
// (structuredContent and its JSON as the text block): about 1.08 KB per diagnostic in
// structuredContent and 2.17 KB on the wire, where the text block repeats it, escaped (N = 20000:
// 21.5 MB of structuredContent, one 43.3 MB JSON-RPC line over stdio; N = 100000: 108 MB and
// 217 MB). The diagnostics are built once, on the first call. The other tools are unchanged.

import { randomBytes, randomUUID } from "node:crypto";
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { createMcpExpressApp } from "@modelcontextprotocol/sdk/server/express.js";
import {
  CallToolRequestSchema,
  ErrorCode,
  ListToolsRequestSchema,
  isInitializeRequest,
} from "@modelcontextprotocol/sdk/types.js";
import Ajv from "ajv";

export const EXTENSION = "io.github.jafarsa0/pilotage";
export const PILOTAGE_VERSION = "1.1";
export const LANGUAGE = "rules/v2";
const RETENTION_DECLARED = "PT10M";
const RETENTION_MS = 10 * 60 * 1000;
/** Part II 10.1: execution is bounded; a rule set is at most this many rules. */
const MAX_RULES = 1000;

/** `--diagnostics N`: the largest N (the serialized answer, about 2.2 KB per diagnostic on the
 * wire, must stay well under V8's maximum string length of 2^29 - 24 characters). */
export const MAX_FLOOD = 200000;
/** `--diagnostics N`: the length of each diagnostic's message (ASCII, nothing JSON escapes). */
const FLOOD_MESSAGE_LENGTH = 1000;

/** The `--break` fault names (see the header comment). */
export const FAULTS = Object.freeze([
  "no-structured-content",
  "invalid-program-is-error",
  "trace-level-32602",
  "request-error-is-error-false",
  "unknown-kind",
  "malformed-execute",
  "trace-level-enum",
  "no-program-declaration",
  "unknown-language-success",
  "no-welcome",
  "foreign-envelope",
]);

export const INSTRUCTIONS =
  "This server speaks Pilotage (io.github.jafarsa0/pilotage). Call pilotage_manifest first: it describes " +
  "the program Language rules/v2 (rule sets) and its loop. Then learn with pilotage_get_guide, check a rule " +
  "set with check_rules, run it with apply_rules and fetch a stored run's trace with rules_trace.";

// ---------------------------------------------------------------------------------------------
// Output schemas (Part III 6): the generated anyOf unions, read from disk at startup.

const here = dirname(fileURLToPath(import.meta.url));
const schemaDir = join(here, "..", "..", "pilotage-types", "output-schemas");
const outputSchema = (name) => JSON.parse(readFileSync(join(schemaDir, `${name}.inlined.json`), "utf8"));

// ---------------------------------------------------------------------------------------------
// The manifest (Part II 5.1, Part III 4).

const LOOP = { validate: "check_rules", execute: "apply_rules", trace: "rules_trace" };

export const MANIFEST = Object.freeze({
  pilotage: PILOTAGE_VERSION,
  languages: [
    {
      name: LANGUAGE,
      title: "Rule sets",
      guides: "pilotage_get_guide",
      loop: { ...LOOP },
      capabilities: { guides: true, validate: true, execute: true, trace_fetch: true },
      locator: "json-pointer",
      execution: "immediate",
      trace: "summary",
      retention: RETENTION_DECLARED,
    },
  ],
});

// ---------------------------------------------------------------------------------------------
// Guides (Part II 5.2, Part III 4.1). topic_fetch is not declared.

const GUIDE_BODIES = [
  {
    id: "rules-v2",
    title: "rules/v2: writing a rule set",
    level: "core",
    topics: ["ruleset", "rules", "when", "then", "fail", "input", "output", "trace"],
    body: `# rules/v2

A rule set is a JSON object with one member, \`rules\`: an array of rules.

    {"rules": [{"id": "greet", "when": "new_user", "then": "send_welcome"}]}

Each rule has three string members:

- \`id\`: unique within the rule set;
- \`when\`: the name of a key of the run's \`input\`; the rule fires when that value is truthy
  (present, and not false, 0, "", or null);
- \`then\`: the action the rule emits when it fires. The action \`fail\` (or \`fail: reason\`)
  stops the run with outcome \`failed\`.

Other members of a rule draw a warning. At most ${MAX_RULES} rules.

## loop

1. check_rules {"ruleset": ...}: diagnostics with JSON Pointer paths; \`valid: false\` is an
   ordinary result.
2. apply_rules {"ruleset": ..., "input": {...}, "trace_level": "none" | "summary" | "full"}:
   rules are evaluated in order; \`output.actions\` lists the actions of the rules that fired.
   The trace is recorded at \`summary\` (a \`full\` request is served at \`summary\`).
3. rules_trace {"run_id": ...}: the stored run, for ${RETENTION_DECLARED} (ISO 8601).
`,
  },
  {
    id: "rules-v2-examples",
    title: "rules/v2: examples",
    level: "examples",
    topics: ["examples"],
    body: `# rules/v2 examples

## routing a ticket

    ruleset: {"rules": [
      {"id": "vip", "when": "is_vip", "then": "route_priority"},
      {"id": "refund", "when": "mentions_refund", "then": "tag_billing"}
    ]}
    input:   {"is_vip": true, "mentions_refund": false}
    output:  {"actions": ["route_priority"]}

## a failing rule

    ruleset: {"rules": [{"id": "stop", "when": "blocked", "then": "fail: account blocked"}]}
    input:   {"blocked": true}
    outcome: {"ok": false, "status": "failed", "error": "rule 'stop' failed: account blocked"}
`,
  },
];

function guideMetadata({ id, title, level, topics, body }) {
  const size = Buffer.byteLength(body, "utf8");
  return {
    id,
    title,
    level,
    topics: [...topics],
    language: LANGUAGE,
    version: "2.0",
    size_bytes: size,
    tokens_estimate: Math.ceil(size / 4),
    format: "text/markdown",
  };
}

// ---------------------------------------------------------------------------------------------
// Tools (Part III 3.4, 4, 4.5, 4.6, 5).

const PROGRAM_DECLARATION = { [EXTENSION]: { argument: "ruleset", language: LANGUAGE } };

export const TOOLS = [
  {
    name: "pilotage_manifest",
    title: "Pilotage manifest",
    description:
      "Start here: call this first. Returns this server's Pilotage manifest: its program Language " +
      "rules/v2 (rule sets), the capabilities it declares and the names of the tools of its loop " +
      "(learn with pilotage_get_guide, then validate, execute and trace).",
    inputSchema: { type: "object", properties: {} },
    outputSchema: outputSchema("manifest"),
    annotations: { title: "Pilotage manifest", readOnlyHint: true, idempotentHint: true, openWorldHint: false },
  },
  {
    name: "pilotage_get_guide",
    title: "Pilotage guides",
    description:
      "Learn stage of Pilotage: the guides. Without id, lists the guides of a Language (metadata, " +
      "no body); with id, returns that guide with its body. language is required (rules/v2).",
    inputSchema: {
      type: "object",
      properties: {
        language: { type: "string" },
        id: { type: "string" },
        topic: { type: "string" },
      },
      required: ["language"],
    },
    outputSchema: outputSchema("get_guide"),
    annotations: { title: "Pilotage guides", readOnlyHint: true, idempotentHint: true, openWorldHint: false },
  },
  {
    name: LOOP.validate,
    title: "Check a rule set",
    description:
      "Validate stage of the rules/v2 Language: checks a rule set without running it and returns " +
      "{valid, diagnostics}, each diagnostic with a JSON Pointer path into the rule set. " +
      "valid: false is an ordinary result, not an error.",
    inputSchema: {
      type: "object",
      properties: { ruleset: { type: "object" } },
      required: ["ruleset"],
    },
    outputSchema: outputSchema("validate"),
    annotations: { title: "Check a rule set", readOnlyHint: true, idempotentHint: true, openWorldHint: false },
    _meta: PROGRAM_DECLARATION,
  },
  {
    name: LOOP.execute,
    title: "Apply a rule set",
    description:
      "Execute stage of the rules/v2 Language: runs a rule set against input and returns run_id, " +
      "outcome, output ({actions}) and, unless trace_level is none, the trace (recorded at summary). " +
      "A rule set that does not validate is refused with outcome validation_error and its diagnostics.",
    inputSchema: {
      type: "object",
      properties: {
        ruleset: { type: "object" },
        input: { type: "object" },
        trace_level: { type: "string" },
      },
    },
    outputSchema: outputSchema("execute"),
    annotations: {
      title: "Apply a rule set",
      readOnlyHint: false,
      destructiveHint: false,
      idempotentHint: true,
      openWorldHint: false,
    },
    _meta: PROGRAM_DECLARATION,
  },
  {
    name: LOOP.trace,
    title: "Fetch a rules/v2 trace",
    description:
      `Trace fetch stage of the rules/v2 Language: returns the stored outcome, output and trace of a ` +
      `run by the run_id apply_rules returned. Runs are kept ${RETENTION_DECLARED}.`,
    inputSchema: {
      type: "object",
      properties: {
        run_id: { type: "string" },
        trace_level: { type: "string" },
      },
      required: ["run_id"],
    },
    outputSchema: outputSchema("trace"),
    annotations: { title: "Fetch a rules/v2 trace", readOnlyHint: true, idempotentHint: true, openWorldHint: false },
  },
];

/** The tools/list entries as served: TOOLS, or TOOLS with one `--break` fault applied. */
export function toolsFor(fault) {
  const tools = structuredClone(TOOLS);
  const byName = (name) => tools.find((tool) => tool.name === name);
  if (fault === "foreign-envelope") {
    for (const tool of tools) delete tool.outputSchema;
  } else if (fault === "trace-level-enum") {
    byName(LOOP.execute).inputSchema.properties.trace_level = { type: "string", enum: ["none", "summary", "full"] };
  } else if (fault === "no-program-declaration") {
    delete byName(LOOP.validate)._meta;
    delete byName(LOOP.execute)._meta;
  }
  return tools;
}

// Structural faults (Part III 4.6, 7.1: a missing required member, a wrong JSON type) are found
// by the declared inputSchema itself and answered as JSON-RPC -32602. (Always the conformant
// schemas: the trace-level-enum fault changes only what tools/list declares.)
const ajv = new Ajv({ strict: false, allErrors: true });
const argumentValidators = new Map(TOOLS.map((tool) => [tool.name, ajv.compile(tool.inputSchema)]));

// ---------------------------------------------------------------------------------------------
// Results and errors (Part III 6, 7).

class RequestError extends Error {
  constructor(kind, message) {
    super(message);
    this.kind = kind;
  }
}

function toolResult(structuredContent, isError = false) {
  return {
    content: [{ type: "text", text: JSON.stringify(structuredContent) }],
    structuredContent,
    isError,
  };
}

/** A carrier error with the wire message exactly as given (McpError would prefix it with
 * "MCP error -32602: "; the SDK puts `error.message` on the wire verbatim). */
function carrierError(message) {
  return Object.assign(new Error(message), { code: ErrorCode.InvalidParams });
}

const escapeToken = (token) => token.replaceAll("~", "~0").replaceAll("/", "~1");
const isObject = (value) => value !== null && typeof value === "object" && !Array.isArray(value);
const diagnostic = (severity, code, path, message, hint) =>
  hint === undefined ? { severity, code, path, message } : { severity, code, path, message, hint };

// ---------------------------------------------------------------------------------------------
// The rules/v2 Language.

const RULE_MEMBERS = new Set(["id", "when", "then"]);

/** Static validation: every finding with a JSON Pointer into the rule set. */
export function check(ruleset) {
  const diagnostics = [];
  if (!isObject(ruleset)) {
    diagnostics.push(diagnostic("error", "invalid_ruleset", "", "a rule set is a JSON object with a `rules` array"));
    return diagnostics;
  }
  for (const key of Object.keys(ruleset)) {
    if (key !== "rules") {
      diagnostics.push(diagnostic("warning", "unknown_member", `/${escapeToken(key)}`, `unknown member '${key}' is ignored`));
    }
  }
  const rules = ruleset.rules;
  if (!Array.isArray(rules)) {
    diagnostics.push(diagnostic("error", "missing_rules", "/rules", "a rule set needs a `rules` array", 'e.g. {"rules": []}'));
    return diagnostics;
  }
  if (rules.length > MAX_RULES) {
    diagnostics.push(diagnostic("error", "too_many_rules", "/rules", `a rule set has at most ${MAX_RULES} rules, not ${rules.length}`));
    return diagnostics;
  }
  const seen = new Map();
  rules.forEach((rule, index) => {
    const at = `/rules/${index}`;
    if (!isObject(rule)) {
      diagnostics.push(diagnostic("error", "invalid_rule", at, "a rule is an object with string `id`, `when` and `then`"));
      return;
    }
    if (typeof rule.id !== "string" || rule.id === "") {
      diagnostics.push(diagnostic("error", "missing_id", `${at}/id`, "every rule needs a non-empty string `id`"));
    } else if (seen.has(rule.id)) {
      diagnostics.push(diagnostic("error", "duplicate_id", `${at}/id`, `rule id '${rule.id}' is already used by /rules/${seen.get(rule.id)}`));
    } else {
      seen.set(rule.id, index);
    }
    if (typeof rule.when !== "string" || rule.when === "") {
      diagnostics.push(diagnostic("error", "missing_when", `${at}/when`, "every rule needs a non-empty string `when`: the input key it tests"));
    }
    if (typeof rule.then !== "string" || rule.then === "") {
      diagnostics.push(diagnostic("error", "missing_then", `${at}/then`, "every rule needs a non-empty string `then`: the action it emits"));
    }
    for (const key of Object.keys(rule)) {
      if (!RULE_MEMBERS.has(key)) {
        diagnostics.push(diagnostic("warning", "unknown_member", `${at}/${escapeToken(key)}`, `unknown rule member '${key}' is ignored`, "a rule has id, when and then"));
      }
    }
  });
  return diagnostics;
}

/** `--diagnostics N`: N error diagnostics, the i-th with code rule_<i>, path /rules/<i> and a
 * message of FLOOD_MESSAGE_LENGTH characters that names i throughout (unique to i). */
export function floodDiagnostics(count) {
  const diagnostics = new Array(count);
  for (let i = 0; i < count; i += 1) {
    const piece = `rule_${i} at /rules/${i} is flagged by --diagnostics ${count}, diagnostic ${i} of ${count}; `;
    // A slice of one flat string (no concatenation after it: a cons string would be flattened,
    // copied, while the answer is serialized).
    const message = piece.repeat(Math.ceil(FLOOD_MESSAGE_LENGTH / piece.length)).slice(0, FLOOD_MESSAGE_LENGTH);
    diagnostics[i] = { severity: "error", code: `rule_${i}`, path: `/rules/${i}`, message };
  }
  return diagnostics;
}

const hasErrors = (diagnostics) => diagnostics.some((d) => d.severity === "error");
const SUCCESS = Object.freeze({ ok: true, status: "success", error: null });

/** Runs a valid rule set: the outcome, the output (when ok) and the summary trace steps. */
export function run(ruleset, input) {
  const actions = [];
  const steps = [];
  for (const [index, rule] of ruleset.rules.entries()) {
    const started = Date.now();
    const fires = Object.hasOwn(input, rule.when) && Boolean(input[rule.when]);
    const decision = {
      at: `/rules/${index}/when`,
      took: fires ? "fired" : "skipped",
      because: fires ? `input.${rule.when} is truthy` : `input.${rule.when} is absent or falsy`,
    };
    const failure = fires && /^fail(:|$)/.exec(rule.then);
    if (failure) {
      const reason = rule.then.slice(failure[0].length).trim();
      const error = `rule '${rule.id}' failed${reason ? `: ${reason}` : ""}`;
      const outcome = { ok: false, status: "failed", error };
      steps.push({ id: rule.id, outcome, t_ms: Date.now() - started, decisions: [decision] });
      return { outcome, steps, fired: actions.length };
    }
    if (fires) actions.push(rule.then);
    steps.push({ id: rule.id, outcome: { ...SUCCESS }, t_ms: Date.now() - started, decisions: [decision] });
  }
  return { outcome: { ...SUCCESS }, output: { actions }, steps, fired: actions.length };
}

// ---------------------------------------------------------------------------------------------
// The engine: one per process, shared by every Server (every HTTP session or stateless POST).

export class Engine {
  /** `fault`: undefined (conformant) or one of FAULTS; `diagnostics`: undefined, or the N of
   * `--diagnostics N` (1 to MAX_FLOOD). */
  constructor({ fault, diagnostics } = {}) {
    if (fault !== undefined && !FAULTS.includes(fault)) throw new Error(`unknown fault: ${fault}`);
    if (diagnostics !== undefined && !(Number.isSafeInteger(diagnostics) && diagnostics >= 1 && diagnostics <= MAX_FLOOD)) {
      throw new Error(`bad diagnostics count: ${diagnostics}`);
    }
    this.fault = fault;
    this.floodCount = diagnostics;
    this.flood = undefined; // built on the first check_rules call, then shared (never mutated)
    this.runs = new Map();
  }

  /** A request error result (7.1, 7.2), with the request-error faults applied. */
  requestError(kind, message) {
    return toolResult(
      { error: { kind: this.fault === "unknown-kind" ? "rate_limited" : kind, message } },
      this.fault !== "request-error-is-error-false",
    );
  }

  /** Handles one tools/call; throws a carrier error, or returns the CallToolResult. */
  call(name, args) {
    const result = this.dispatch(name, args);
    if (this.fault === "no-structured-content") delete result.structuredContent;
    return result;
  }

  dispatch(name, args) {
    const validateArguments = argumentValidators.get(name);
    if (!validateArguments) throw carrierError(`Unknown tool: ${name}`);
    if (!validateArguments(args)) {
      throw carrierError(`Invalid arguments for tool ${name}: ${ajv.errorsText(validateArguments.errors, { dataVar: "arguments" })}`);
    }
    if (
      this.fault === "trace-level-32602" &&
      name === LOOP.execute &&
      args.trace_level !== undefined &&
      !["none", "summary", "full"].includes(args.trace_level)
    ) {
      throw carrierError(`Invalid arguments for tool ${name}: unknown trace_level '${args.trace_level}': none, summary or full`);
    }
    try {
      switch (name) {
        case "pilotage_manifest":
          return toolResult(structuredClone(MANIFEST));
        case "pilotage_get_guide":
          return toolResult(this.guide(args));
        case LOOP.validate:
          return toolResult(this.validate(args));
        case LOOP.execute: {
          const response = this.execute(args);
          if (this.fault === "malformed-execute") response.run_id = 42;
          if (this.fault === "foreign-envelope") {
            return toolResult({ run: { id: response.run_id }, result: response.output ?? null });
          }
          return toolResult(response);
        }
        case LOOP.trace: {
          const record = this.fetch(args);
          if (this.fault === "foreign-envelope") {
            return toolResult({ run: { id: record.run_id }, steps: record.trace.steps });
          }
          return toolResult(record);
        }
      }
    } catch (error) {
      if (error instanceof RequestError) return this.requestError(error.kind, error.message);
      console.error(`engine: ${name} failed:`, error);
      return this.requestError("internal", "internal error");
    }
    throw carrierError(`Unknown tool: ${name}`);
  }

  guide({ language, id, topic }) {
    if (language !== LANGUAGE) {
      if (this.fault === "unknown-language-success") return { guides: [] };
      throw new RequestError("not_found", `unknown language '${language}': this server serves ${LANGUAGE}`);
    }
    if (topic !== undefined) {
      throw new RequestError("unsupported", `topic fetch is not declared for ${LANGUAGE}: fetch the whole guide by id`);
    }
    if (id === undefined) return { guides: GUIDE_BODIES.map(guideMetadata) };
    const found = GUIDE_BODIES.find((guide) => guide.id === id);
    if (!found) throw new RequestError("not_found", `unknown guide '${id}'`);
    return { guide: { ...guideMetadata(found), body: found.body } };
  }

  /** Eligibility checks shared by the loop tools that take a rule set (Part III 4.4, 4.6, 7.1). */
  eligibility(args) {
    if (args.mode !== undefined) {
      throw new RequestError("invalid_request", `mode is accepted only by Languages whose execution is "both"; ${LANGUAGE} is "immediate"`);
    }
    if (args.test_run !== undefined) {
      throw new RequestError("unsupported", `test_run is not declared for ${LANGUAGE}`);
    }
    if (args.program_ref !== undefined) {
      throw new RequestError("unsupported", `${LANGUAGE} has no promoted programs: send the rule set in ruleset`);
    }
    if (args.idempotency_key !== undefined) {
      throw new RequestError("unsupported", `idempotency_key is not declared for ${LANGUAGE} (execute.idempotency)`);
    }
  }

  /** Diagnostics for a rule set, plus the context-binding finding (Part III 4.4 rule 10). */
  diagnose(args) {
    const diagnostics = check(args.ruleset);
    if (args.context !== undefined) {
      diagnostics.push(diagnostic("error", "context_binding", "", `${LANGUAGE} takes no validation context`, "omit context"));
    }
    return diagnostics;
  }

  validate(args) {
    let diagnostics;
    if (this.floodCount !== undefined) {
      this.flood ??= floodDiagnostics(this.floodCount);
      diagnostics = this.flood;
    } else {
      this.eligibility(args);
      diagnostics = this.diagnose(args);
    }
    if (this.fault === "invalid-program-is-error" && hasErrors(diagnostics)) {
      const count = diagnostics.filter((d) => d.severity === "error").length;
      throw new RequestError("invalid_request", `the rule set is invalid (${count} error${count === 1 ? "" : "s"})`);
    }
    if (this.fault === "foreign-envelope") return { ok: !hasErrors(diagnostics), problems: diagnostics };
    return { valid: !hasErrors(diagnostics), diagnostics };
  }

  execute(args) {
    let level = "summary";
    if (args.trace_level !== undefined) {
      if (!["none", "summary", "full"].includes(args.trace_level)) {
        throw new RequestError("invalid_request", `unknown trace_level '${args.trace_level}': none, summary or full`);
      }
      // min(requested, declared): the Language records at most summary.
      level = args.trace_level === "none" ? "none" : "summary";
    }
    this.eligibility(args);
    if (args.ruleset === undefined) {
      throw new RequestError("invalid_request", "nothing to run: send the rule set in ruleset");
    }
    const run_id = `run_${randomBytes(8).toString("hex")}`;
    const diagnostics = this.diagnose(args);
    if (hasErrors(diagnostics)) {
      // A refused Run: no trace, never retained; run_id is returned all the same.
      const count = diagnostics.filter((d) => d.severity === "error").length;
      return {
        run_id,
        outcome: { ok: false, status: "validation_error", error: `the rule set did not validate (${count} error${count === 1 ? "" : "s"})` },
        diagnostics,
      };
    }
    const result = run(args.ruleset, args.input ?? {});
    const trace = {
      run_id,
      level: "summary",
      steps: result.steps,
      stats: { rules: args.ruleset.rules.length, evaluated: result.steps.length, fired: result.fired },
    };
    const response = { run_id, outcome: result.outcome };
    if (result.outcome.ok) response.output = result.output;
    if (args.store !== false) {
      this.prune();
      this.runs.set(run_id, { record: structuredClone({ ...response, trace }), expires: Date.now() + RETENTION_MS });
    }
    if (level !== "none") response.trace = trace;
    return response;
  }

  fetch({ run_id, trace_level, question }) {
    if (trace_level !== undefined && !["summary", "full"].includes(trace_level)) {
      throw new RequestError("invalid_request", `unknown trace_level '${trace_level}' for a trace fetch: summary or full`);
    }
    // Part III 7.1: an argument of an undeclared sub-feature (trace_fetch.narrate) is refused.
    if (question !== undefined) {
      throw new RequestError("unsupported", `question is not declared for ${LANGUAGE} (trace_fetch.narrate)`);
    }
    this.prune();
    const stored = this.runs.get(run_id);
    // Part III 9.5: unknown and expired runs are one and the same not_found.
    if (!stored) throw new RequestError("not_found", "unknown run: it may have expired");
    // min(requested, recorded): recorded at summary.
    return structuredClone(stored.record);
  }

  prune() {
    const now = Date.now();
    for (const [id, stored] of this.runs) if (stored.expires <= now) this.runs.delete(id);
  }
}

/** A new MCP Server over `engine`: the extension declared and the welcome text, no `_meta`. */
export function createServer(engine) {
  const tools = toolsFor(engine.fault);
  const server = new Server(
    { name: "pilotage-rules-engine", title: "Pilotage rules/v2 engine (TypeScript SDK)", version: "0.1.0" },
    {
      // The SDK's ServerCapabilities carries `extensions`; its initialize handler returns
      // capabilities, serverInfo and instructions, and no `_meta`.
      capabilities: { tools: {}, extensions: { [EXTENSION]: { version: PILOTAGE_VERSION } } },
      ...(engine.fault === "no-welcome" ? {} : { instructions: INSTRUCTIONS }),
    },
  );
  server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: structuredClone(tools) }));
  server.setRequestHandler(CallToolRequestSchema, async (request) =>
    engine.call(request.params.name, request.params.arguments ?? {}),
  );
  server.onerror = (error) => console.error("engine:", error.message ?? error);
  return server;
}

// ---------------------------------------------------------------------------------------------
// Transports.

const LOOPBACK_HOSTNAMES = new Set(["localhost", "127.0.0.1", "[::1]"]);

/** Refuses a browser Origin that is not loopback (the Host header is checked by the SDK's
 * localhost middleware). */
function originCheck(req, res, next) {
  const origin = req.headers.origin;
  if (origin !== undefined) {
    let hostname;
    try {
      hostname = new URL(origin).hostname;
    } catch {
      hostname = undefined;
    }
    if (!LOOPBACK_HOSTNAMES.has(hostname)) {
      res.status(403).json({ jsonrpc: "2.0", error: { code: -32000, message: `Invalid Origin: ${origin}` }, id: null });
      return;
    }
  }
  next();
}

const jsonRpcError = (res, status, code, message) =>
  res.status(status).json({ jsonrpc: "2.0", error: { code, message }, id: null });

async function serveHttp(engine, port, stateless) {
  // createMcpExpressApp with host 127.0.0.1 installs the Host-header validation (localhost,
  // 127.0.0.1, [::1]; port-agnostic) before the JSON body parser.
  const app = createMcpExpressApp({ host: "127.0.0.1" });
  app.use(originCheck);

  if (stateless) {
    app.post("/mcp", async (req, res) => {
      const server = createServer(engine);
      const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
      res.on("close", () => {
        transport.close().catch(() => {});
        server.close().catch(() => {});
      });
      try {
        await server.connect(transport);
        await transport.handleRequest(req, res, req.body);
      } catch (error) {
        console.error("engine: HTTP request failed:", error);
        if (!res.headersSent) jsonRpcError(res, 500, ErrorCode.InternalError, "Internal server error");
      }
    });
    const notAllowed = (_req, res) => jsonRpcError(res, 405, -32000, "Method not allowed: this deployment is stateless");
    app.get("/mcp", notAllowed);
    app.delete("/mcp", notAllowed);
  } else {
    const sessions = new Map();
    app.post("/mcp", async (req, res) => {
      const sessionId = req.headers["mcp-session-id"];
      try {
        let transport;
        if (typeof sessionId === "string") {
          transport = sessions.get(sessionId);
          if (!transport) return jsonRpcError(res, 404, -32001, "Session not found");
        } else if (isInitializeRequest(req.body)) {
          transport = new StreamableHTTPServerTransport({
            sessionIdGenerator: () => randomUUID(),
            onsessioninitialized: (id) => sessions.set(id, transport),
          });
          transport.onclose = () => {
            if (transport.sessionId) sessions.delete(transport.sessionId);
          };
          await createServer(engine).connect(transport);
        } else {
          return jsonRpcError(res, 400, -32000, "Bad Request: Mcp-Session-Id header is required");
        }
        await transport.handleRequest(req, res, req.body);
      } catch (error) {
        console.error("engine: HTTP request failed:", error);
        if (!res.headersSent) jsonRpcError(res, 500, ErrorCode.InternalError, "Internal server error");
      }
    });
    const withSession = async (req, res) => {
      const sessionId = req.headers["mcp-session-id"];
      const transport = typeof sessionId === "string" ? sessions.get(sessionId) : undefined;
      if (!transport) {
        return typeof sessionId === "string"
          ? jsonRpcError(res, 404, -32001, "Session not found")
          : jsonRpcError(res, 400, -32000, "Bad Request: Mcp-Session-Id header is required");
      }
      await transport.handleRequest(req, res);
    };
    app.get("/mcp", withSession);
    app.delete("/mcp", withSession);
  }

  await new Promise((resolve, reject) => {
    const listener = app.listen(port, "127.0.0.1", () => {
      const url = `http://127.0.0.1:${listener.address().port}/mcp`;
      console.error(`engine: serving MCP over streamable HTTP at ${url} (${stateless ? "stateless" : "sessions"})`);
      resolve();
    });
    listener.on("error", reject);
    const stop = () => listener.close(() => process.exit(0));
    process.on("SIGINT", stop);
    process.on("SIGTERM", stop);
  });
}

function usage(message) {
  if (message) console.error(`engine: ${message}`);
  console.error("usage: node engine.mjs [--http PORT [--stateless]] [--break NAME] [--diagnostics N]");
  console.error(`       NAME: ${FAULTS.join(", ")}`);
  console.error(`       N: 1 to ${MAX_FLOOD}`);
  process.exit(2);
}

async function main(argv) {
  let port;
  let stateless = false;
  let fault;
  let diagnostics;
  for (let i = 0; i < argv.length; i += 1) {
    if (argv[i] === "--http") {
      const value = argv[++i];
      if (value === undefined || !/^\d+$/.test(value) || Number(value) > 65535) usage(`bad port: ${value}`);
      port = Number(value);
    } else if (argv[i] === "--stateless") {
      stateless = true;
    } else if (argv[i] === "--break") {
      const value = argv[++i];
      if (fault !== undefined) usage("--break is given once: one fault at a time");
      if (value === undefined) usage("--break needs a fault NAME");
      if (!FAULTS.includes(value)) usage(`unknown --break fault: ${value}`);
      fault = value;
    } else if (argv[i] === "--diagnostics") {
      const value = argv[++i];
      if (diagnostics !== undefined) usage("--diagnostics is given once");
      if (value === undefined || !/^[1-9]\d*$/.test(value) || Number(value) > MAX_FLOOD) {
        usage(`bad --diagnostics count: ${value} (a positive integer, at most ${MAX_FLOOD})`);
      }
      diagnostics = Number(value);
    } else if (argv[i] === "--help" || argv[i] === "-h") {
      usage();
    } else {
      usage(`unknown argument: ${argv[i]}`);
    }
  }
  if (stateless && port === undefined) usage("--stateless needs --http PORT");
  const engine = new Engine({ fault, diagnostics });
  if (fault !== undefined) console.error(`engine: --break ${fault}: deliberately NOT conformant`);
  if (diagnostics !== undefined) console.error(`engine: --diagnostics ${diagnostics}: check_rules answers ${diagnostics} diagnostics`);
  if (port === undefined) {
    await createServer(engine).connect(new StdioServerTransport());
  } else {
    await serveHttp(engine, port, stateless);
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  main(process.argv.slice(2)).catch((error) => {
    console.error("engine:", error);
    process.exit(1);
  });
}
