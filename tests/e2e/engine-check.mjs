// Smoke test of engine.mjs (the rules/v2 Pilotage engine on the TypeScript SDK server) with the
// official TypeScript SDK client, over stdio and streamable HTTP (sessions and stateless).
//
// Then, over stdio, each `--break NAME` fault switch: the one broken behaviour is visible, and an
// unknown NAME is a usage error (exit status 2).
//
// usage: node engine-check.mjs [stdio|http|stateless|faults ...]   (default: all four)

import assert from "node:assert/strict";
import { spawn, spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { request as httpRequest } from "node:http";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { CallToolResultSchema, McpError } from "@modelcontextprotocol/sdk/types.js";
import Ajv from "ajv";
import Ajv2020 from "ajv/dist/2020.js";

const here = dirname(fileURLToPath(import.meta.url));
const ENGINE = join(here, "engine.mjs");
const EXTENSION = "io.github.jafarsa0/pilotage";
const LANGUAGE = "rules/v2";

// The Pilotage data shapes (2020-12) and the generated outputSchema unions.
const pilotageSchema = JSON.parse(readFileSync(join(here, "..", "..", "schemas", "pilotage.schema.json"), "utf8"));
const ajv2020 = new Ajv2020({ strict: false, allErrors: true });
ajv2020.addSchema(pilotageSchema);
const shape = (def) => {
  const validate = ajv2020.getSchema(`${pilotageSchema.$id}#/$defs/${def}`);
  assert.ok(validate, `schema $defs/${def}`);
  return (value) => {
    assert.ok(validate(value), `${def}: ${ajv2020.errorsText(validate.errors)}\n${JSON.stringify(value)}`);
    return true;
  };
};
const outputFile = (name) =>
  JSON.parse(readFileSync(join(here, "..", "..", "pilotage-types", "output-schemas", `${name}.inlined.json`), "utf8"));

let passed = 0;
function check(name, condition) {
  assert.ok(condition, name);
  passed += 1;
  console.log(`ok - ${name}`);
}

/** Records every message the client transport receives, to see the raw initialize result and
 * the raw JSON-RPC error messages (the SDK client hides both). */
function spy(transport) {
  const seen = [];
  const start = transport.start.bind(transport);
  transport.start = async () => {
    const handler = transport.onmessage;
    transport.onmessage = (message, extra) => {
      seen.push(message);
      handler?.(message, extra);
    };
    return start();
  };
  return seen;
}

async function startHttpEngine(args) {
  const child = spawn(process.execPath, [ENGINE, ...args], { stdio: ["ignore", "inherit", "pipe"] });
  const url = await new Promise((resolve, reject) => {
    let buffered = "";
    child.stderr.on("data", (chunk) => {
      buffered += chunk;
      const match = /http:\/\/127\.0\.0\.1:\d+\/mcp/.exec(buffered);
      if (match) resolve(match[0]);
    });
    child.on("exit", (code) => reject(new Error(`engine exited ${code}: ${buffered}`)));
    setTimeout(() => reject(new Error(`no URL on stderr: ${buffered}`)), 10000);
  });
  child.stderr.resume();
  return { child, url };
}

function rawPost(url, body, headers = {}) {
  return new Promise((resolve, reject) => {
    const target = new URL(url);
    const data = JSON.stringify(body);
    const req = httpRequest(
      {
        host: "127.0.0.1",
        port: target.port,
        path: target.pathname,
        method: "POST",
        headers: {
          "content-type": "application/json",
          accept: "application/json, text/event-stream",
          "content-length": Buffer.byteLength(data),
          ...headers,
        },
      },
      (res) => {
        let text = "";
        res.on("data", (chunk) => (text += chunk));
        res.on("end", () => resolve({ status: res.statusCode, headers: res.headers, text }));
      },
    );
    req.on("error", reject);
    req.end(data);
  });
}

async function exercise(label, transport, { stateless = false } = {}) {
  console.log(`# ${label}`);
  const seen = spy(transport);
  const client = new Client({ name: "pilotage-engine-check", version: "1.0.0" }, { capabilities: { extensions: { [EXTENSION]: {} } } });
  await client.connect(transport);
  const t = (name) => `${label}: ${name}`;

  // initialize (Part III 1.2, 3.2, 3.4)
  const initialize = seen.find((m) => m.id !== undefined && m.result?.protocolVersion);
  check(t("initialize declares the extension, version 1.1"), client.getServerCapabilities()?.extensions?.[EXTENSION]?.version === "1.1");
  check(t("initialize has no _meta (no inline manifest)"), initialize && initialize.result._meta === undefined);
  const instructions = client.getInstructions() ?? "";
  check(t("welcome text names Pilotage and pilotage_manifest"), instructions.includes("Pilotage") && instructions.includes("pilotage_manifest"));
  if (stateless) check(t("stateless: no session id"), transport.sessionId === undefined);
  else if (transport instanceof StreamableHTTPClientTransport) check(t("sessions: a session id"), typeof transport.sessionId === "string");

  // tools/list (Part III 3.4, 4, 4.5, 4.6, 5, 6)
  const { tools } = await client.listTools();
  const tool = Object.fromEntries(tools.map((x) => [x.name, x]));
  check(t("tools/list has exactly the five tools, no pilotage_catalog"), tools.map((x) => x.name).sort().join(",") ===
    "apply_rules,check_rules,pilotage_get_guide,pilotage_manifest,rules_trace");
  const files = { pilotage_manifest: "manifest", pilotage_get_guide: "get_guide", check_rules: "validate", apply_rules: "execute", rules_trace: "trace" };
  for (const [name, file] of Object.entries(files)) assert.deepStrictEqual(tool[name].outputSchema, outputFile(file), name);
  check(t("every outputSchema is the generated union"), true);
  const ajv = new Ajv({ strict: false, allErrors: true });
  const validators = Object.fromEntries(tools.map((x) => [x.name, ajv.compile(x.outputSchema)]));
  assert.deepStrictEqual(tool.pilotage_get_guide.inputSchema, {
    type: "object",
    properties: { language: { type: "string" }, id: { type: "string" }, topic: { type: "string" } },
    required: ["language"],
  });
  check(t("pilotage_get_guide has the 4.1 input schema"), true);
  check(t("pilotage_manifest input schema: object, nothing required"), tool.pilotage_manifest.inputSchema.type === "object" && !tool.pilotage_manifest.inputSchema.required?.length);
  const declaration = { [EXTENSION]: { argument: "ruleset", language: LANGUAGE } };
  assert.deepStrictEqual(tool.check_rules._meta, declaration);
  assert.deepStrictEqual(tool.apply_rules._meta, declaration);
  check(t("check_rules and apply_rules declare ruleset under the full _meta key only"), tool.rules_trace._meta === undefined);
  assert.deepStrictEqual(tool.check_rules.inputSchema, { type: "object", properties: { ruleset: { type: "object" } }, required: ["ruleset"] });
  assert.deepStrictEqual(tool.apply_rules.inputSchema, {
    type: "object",
    properties: { ruleset: { type: "object" }, input: { type: "object" }, trace_level: { type: "string" } },
  });
  assert.deepStrictEqual(tool.rules_trace.inputSchema, {
    type: "object",
    properties: { run_id: { type: "string" }, trace_level: { type: "string" } },
    required: ["run_id"],
  });
  check(t("loop schemas permissive (4.4, 4.6)"), tools.every((x) => x.inputSchema.additionalProperties === undefined));
  check(t("annotations (4.5)"), ["pilotage_manifest", "pilotage_get_guide", "check_rules", "rules_trace"].every((n) => tool[n].annotations?.readOnlyHint === true) &&
    tool.apply_rules.annotations.readOnlyHint === false && tool.apply_rules.annotations.destructiveHint === false);
  const d = (n) => tool[n].description.toLowerCase();
  check(t("descriptions carry the 3.4 signposts"), /start here|call this first/.test(d("pilotage_manifest")) &&
    d("pilotage_get_guide").includes("learn") && d("pilotage_get_guide").includes("guides") &&
    d("check_rules").includes("validate") && d("apply_rules").includes("execute") && d("rules_trace").includes("trace") &&
    ["check_rules", "apply_rules", "rules_trace"].every((n) => tool[n].description.includes(LANGUAGE)));

  // every result: structuredContent, one text block, isError as expected, valid against its outputSchema
  const call = async (name, args, { isError = false } = {}) => {
    const result = await client.callTool({ name, arguments: args });
    assert.equal(result.isError ?? false, isError, `${name} ${JSON.stringify(args)}: isError should be ${isError}: ${JSON.stringify(result)}`);
    assert.ok(result.structuredContent, `${name}: structuredContent`);
    assert.ok(validators[name](result.structuredContent), `${name}: ${ajv.errorsText(validators[name].errors)}`);
    assert.equal(result.content.length, 1);
    assert.equal(result.content[0].type, "text");
    assert.deepStrictEqual(JSON.parse(result.content[0].text), result.structuredContent);
    return result.structuredContent;
  };
  const requestError = async (name, args, kind) => {
    const content = await call(name, args, { isError: true });
    shape("RequestError")(content);
    assert.equal(content.error.kind, kind, `${name} ${JSON.stringify(args)}: ${JSON.stringify(content)}`);
    return content;
  };
  const carrier = async (name, args, exactMessage) => {
    await assert.rejects(client.callTool({ name, arguments: args }), (error) => {
      assert.ok(error instanceof McpError, `${name}: a JSON-RPC error, got ${error}`);
      assert.equal(error.code, -32602, `${name}: -32602`);
      return true;
    });
    if (exactMessage !== undefined) {
      const reply = seen.findLast((m) => m.error);
      assert.equal(reply.error.message, exactMessage);
    }
  };

  // discover
  const manifest = await call("pilotage_manifest", {});
  shape("Manifest")(manifest);
  const language = manifest.languages[0];
  check(t("manifest valid against $defs/Manifest"), manifest.pilotage === "1.1" && manifest.languages.length === 1);
  assert.deepStrictEqual(language, {
    name: LANGUAGE,
    title: "Rule sets",
    guides: "pilotage_get_guide",
    loop: { validate: "check_rules", execute: "apply_rules", trace: "rules_trace" },
    capabilities: { guides: true, validate: true, execute: true, trace_fetch: true },
    locator: "json-pointer",
    execution: "immediate",
    trace: "summary",
    retention: "PT10M",
  });
  check(t("Language entry: no catalog, loop, Language-level capabilities, summary, PT10M"), language.catalog === undefined && manifest.capabilities === undefined);
  check(t("every loop name is in tools/list"), Object.values(language.loop).every((n) => tool[n]));

  // learn (4.1)
  const index = await call("pilotage_get_guide", { language: LANGUAGE });
  shape("GuideIndexResult")(index);
  check(t("guide index: two guides, no body"), index.guides.length === 2 && index.guides.every((g) => g.body === undefined && g.language === LANGUAGE));
  const guide = await call("pilotage_get_guide", { language: LANGUAGE, id: index.guides[0].id });
  shape("GuideFetchResult")(guide);
  check(t("guide fetch by id, with body"), guide.guide.body.startsWith("# rules/v2") && guide.guide.size_bytes === Buffer.byteLength(guide.guide.body));
  await requestError("pilotage_get_guide", { language: LANGUAGE, id: index.guides[0].id, topic: "when" }, "unsupported");
  check(t("topic without topic_fetch: unsupported"), true);
  await requestError("pilotage_get_guide", { language: "rules/v9" }, "not_found");
  await requestError("pilotage_get_guide", { language: LANGUAGE, id: "nope" }, "not_found");
  check(t("unknown language / id: not_found"), true);
  await carrier("pilotage_get_guide", { id: "rules-v2" });
  await carrier("pilotage_get_guide", { language: LANGUAGE, id: 3 });
  check(t("get_guide missing language / wrong type: -32602"), true);

  // validate
  const program = {
    rules: [
      { id: "vip", when: "is_vip", then: "route_priority" },
      { id: "refund", when: "mentions_refund", then: "tag_billing" },
    ],
  };
  const valid = await call("check_rules", { ruleset: program });
  shape("ValidateResponse")(valid);
  check(t("valid rule set: valid, no diagnostics"), valid.valid === true && valid.diagnostics.length === 0 && valid.plan === undefined);
  const invalid = await call("check_rules", { ruleset: { rules: [{ id: "a", when: "x" }] } });
  shape("ValidateResponse")(invalid);
  check(t("rule missing then: missing_then at /rules/0/then, isError false"), invalid.valid === false &&
    invalid.diagnostics.length === 1 && invalid.diagnostics[0].code === "missing_then" &&
    invalid.diagnostics[0].path === "/rules/0/then" && invalid.diagnostics[0].severity === "error");
  const warned = await call("check_rules", { ruleset: { rules: [{ id: "a", when: "x", then: "y", "p/q": 1 }] } });
  check(t("unknown member: warning with an escaped pointer, still valid"), warned.valid === true && warned.diagnostics[0].path === "/rules/0/p~1q");
  const context = await call("check_rules", { ruleset: program, context: {} });
  check(t("unsupported context: context_binding diagnostic, not invalid_request"), context.valid === false && context.diagnostics[0].code === "context_binding");
  await carrier("check_rules", {});
  await carrier("check_rules", { ruleset: "rules" });
  await carrier("check_rules", { ruleset: [] });
  check(t("check_rules without ruleset / wrong type: -32602"), true);

  // execute
  const executed = await call("apply_rules", { ruleset: program, input: { is_vip: true, mentions_refund: false } });
  shape("ExecuteResponse")(executed);
  check(t("execute: output.actions, success, summary trace by default"), executed.outcome.ok === true && executed.outcome.error === null &&
    JSON.stringify(executed.output) === '{"actions":["route_priority"]}' && executed.trace.level === "summary" &&
    executed.trace.run_id === executed.run_id && executed.trace.steps.length === 2);
  const quiet = await call("apply_rules", { ruleset: program, input: { mentions_refund: 1 }, trace_level: "none" });
  check(t("trace_level none: no trace"), quiet.trace === undefined && quiet.output.actions[0] === "tag_billing");
  const full = await call("apply_rules", { ruleset: program, input: {}, trace_level: "full" });
  check(t("trace_level full: served at summary (declared maximum)"), full.trace.level === "summary" && full.output.actions.length === 0);
  const refused = await call("apply_rules", { ruleset: { rules: [{ id: "a", when: "x" }] } });
  shape("ExecuteResponse")(refused);
  check(t("invalid rule set on execute: validation_error with diagnostics, isError false"), refused.outcome.ok === false &&
    refused.outcome.status === "validation_error" && typeof refused.outcome.error === "string" &&
    refused.diagnostics[0].path === "/rules/0/then" && refused.trace === undefined && refused.output === undefined);
  const failed = await call("apply_rules", { ruleset: { rules: [{ id: "stop", when: "blocked", then: "fail: account blocked" }] }, input: { blocked: true } });
  check(t("a failing rule: ok false, status failed, isError false"), failed.outcome.ok === false && failed.outcome.status === "failed" &&
    failed.outcome.error === "rule 'stop' failed: account blocked" && failed.output === undefined && failed.trace.steps[0].outcome.ok === false);
  await requestError("apply_rules", {}, "invalid_request");
  await requestError("apply_rules", { input: {}, trace_level: "summary" }, "invalid_request");
  check(t("neither ruleset: invalid_request"), true);
  await requestError("apply_rules", { ruleset: program, trace_level: "verbose" }, "invalid_request");
  check(t("unknown trace_level: invalid_request (not -32602)"), true);
  await requestError("apply_rules", { ruleset: program, mode: "deploy" }, "invalid_request");
  await requestError("apply_rules", { ruleset: program, test_run: true }, "unsupported");
  check(t("mode: invalid_request; test_run: unsupported"), true);
  await carrier("apply_rules", { ruleset: program, trace_level: 2 });
  await carrier("apply_rules", { ruleset: program, input: "x" });
  check(t("apply_rules wrong JSON types: -32602"), true);

  // trace fetch (stateless: every call is answered by a new Server; the runs are the engine's)
  const fetched = await call("rules_trace", { run_id: executed.run_id });
  shape("TraceFetchResponse")(fetched);
  check(t("trace fetch of a stored run"), fetched.run_id === executed.run_id && fetched.outcome.ok === true &&
    fetched.trace.level === "summary" && fetched.trace.steps.length === 2 && fetched.output.actions[0] === "route_priority");
  const fetchedFull = await call("rules_trace", { run_id: quiet.run_id, trace_level: "full" });
  check(t("trace fetch at full: min(requested, recorded) = summary; the trace of a none run is stored"), fetchedFull.trace.level === "summary");
  const fetchedFailed = await call("rules_trace", { run_id: failed.run_id });
  check(t("a failed run is stored"), fetchedFailed.outcome.status === "failed");
  const unknownRun = await requestError("rules_trace", { run_id: "run_0000000000000000" }, "not_found");
  check(t("unknown run: not_found, 'unknown run: it may have expired'"), unknownRun.error.message === "unknown run: it may have expired");
  const refusedRun = await requestError("rules_trace", { run_id: refused.run_id }, "not_found");
  check(t("a refused run is not retained, indistinguishable from unknown"), JSON.stringify(refusedRun) === JSON.stringify(unknownRun));
  await requestError("rules_trace", { run_id: executed.run_id, trace_level: "none" }, "invalid_request");
  check(t("trace fetch at none: invalid_request"), true);
  await carrier("rules_trace", {});
  await carrier("rules_trace", { run_id: 7 });
  check(t("rules_trace missing / wrong-typed run_id: -32602"), true);

  // carrier error for an unknown tool (9.6), the wire message exactly
  await carrier("validate_rules", {}, "Unknown tool: validate_rules");
  check(t("unknown tool: -32602 'Unknown tool: validate_rules' on the wire"), true);

  await client.close();
}

async function http(stateless) {
  const label = stateless ? "http-stateless" : "http-sessions";
  const { child, url } = await startHttpEngine(["--http", "0", ...(stateless ? ["--stateless"] : [])]);
  try {
    check(`${label}: URL on stderr binds 127.0.0.1`, url.startsWith("http://127.0.0.1:"));
    await exercise(label, new StreamableHTTPClientTransport(new URL(url)), { stateless });
    const init = { jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "raw", version: "1" } } };
    const evilHost = await rawPost(url, init, { host: "evil.example:80" });
    check(`${label}: a non-loopback Host header is refused (403)`, evilHost.status === 403);
    const evilOrigin = await rawPost(url, init, { origin: "http://evil.example" });
    check(`${label}: a non-loopback Origin is refused (403)`, evilOrigin.status === 403);
    const localhost = await rawPost(url, init, { host: `localhost:${new URL(url).port}`, origin: "http://localhost:3000" });
    check(`${label}: Host localhost and a loopback Origin are accepted`, localhost.status === 200);
    if (stateless) {
      const list = await rawPost(url, { jsonrpc: "2.0", id: 2, method: "tools/list" });
      check(`${label}: tools/list without initialize or session`, list.status === 200 && JSON.parse(list.text).result.tools.length === 5);
    } else {
      const noSession = await rawPost(url, { jsonrpc: "2.0", id: 2, method: "tools/list" });
      check(`${label}: a non-initialize POST without a session is refused (400)`, noSession.status === 400);
      const badSession = await rawPost(url, { jsonrpc: "2.0", id: 2, method: "tools/list" }, { "mcp-session-id": "nope" });
      check(`${label}: an unknown session is 404`, badSession.status === 404);
    }
  } finally {
    child.kill("SIGTERM");
  }
}

// ---------------------------------------------------------------------------------------------
// The --break fault switches (engine.mjs header): each one visibly breaks its behaviour.

const RULESET = { rules: [{ id: "vip", when: "is_vip", then: "route_priority" }] };
const INVALID_RULESET = { rules: [{ id: "a", when: "x" }] };

/** For each fault: what must be seen over a stdio session started with `--break NAME`. */
const FAULT_CHECKS = {
  "no-structured-content": async ({ raw, check }) => {
    const manifest = await raw("pilotage_manifest", {});
    check("a pilotage_manifest result lacks structuredContent, keeps its text and isError false",
      manifest.structuredContent === undefined && JSON.parse(manifest.content[0].text).pilotage === "1.1" && manifest.isError === false);
    const missing = await raw("rules_trace", { run_id: "run_0000000000000000" });
    check("a request error lacks structuredContent, keeps isError true",
      missing.structuredContent === undefined && missing.isError === true && JSON.parse(missing.content[0].text).error.kind === "not_found");
  },
  "invalid-program-is-error": async ({ raw, check }) => {
    const invalid = await raw("check_rules", { ruleset: INVALID_RULESET });
    check("check_rules on an invalid rule set: isError true, invalid_request, no diagnostics",
      invalid.isError === true && invalid.structuredContent.error?.kind === "invalid_request" &&
      typeof invalid.structuredContent.error.message === "string" && invalid.structuredContent.valid === undefined);
    const valid = await raw("check_rules", { ruleset: RULESET });
    check("check_rules on a valid rule set: still valid true", valid.isError === false && valid.structuredContent.valid === true);
  },
  "trace-level-32602": async ({ raw, check }) => {
    const carrier = async (args) => {
      try {
        await raw("apply_rules", args);
      } catch (error) {
        return error instanceof McpError && error.code === -32602;
      }
      return false;
    };
    check("apply_rules {trace_level: unknown} without a rule set: JSON-RPC -32602",
      await carrier({ trace_level: "pilotage-check-unknown-level" }));
    check("apply_rules {ruleset, trace_level: verbose}: JSON-RPC -32602", await carrier({ ruleset: RULESET, trace_level: "verbose" }));
    const missing = await raw("apply_rules", {});
    check("apply_rules without a rule set: still invalid_request", missing.isError === true && missing.structuredContent.error.kind === "invalid_request");
    const known = await raw("apply_rules", { input: {}, trace_level: "summary" });
    check("apply_rules, a known trace_level, no rule set: still invalid_request", known.isError === true && known.structuredContent.error.kind === "invalid_request");
  },
  "request-error-is-error-false": async ({ raw, check }) => {
    const missing = await raw("rules_trace", { run_id: "run_0000000000000000" });
    check("an unknown run: not_found request error with isError false",
      missing.isError === false && missing.structuredContent.error.kind === "not_found");
    const guide = await raw("pilotage_get_guide", { language: "rules/v9" });
    check("an unknown language: not_found request error with isError false",
      guide.isError === false && guide.structuredContent.error.kind === "not_found");
  },
  "unknown-kind": async ({ raw, check }) => {
    const missing = await raw("rules_trace", { run_id: "run_0000000000000000" });
    check("an unknown run: kind rate_limited, isError true", missing.isError === true && missing.structuredContent.error.kind === "rate_limited");
    const noRuleset = await raw("apply_rules", {});
    check("apply_rules without a rule set: kind rate_limited", noRuleset.structuredContent.error.kind === "rate_limited");
  },
  "malformed-execute": async ({ raw, check }) => {
    const executed = await raw("apply_rules", { ruleset: RULESET, input: { is_vip: true } });
    check("apply_rules: run_id is the number 42", executed.isError === false && executed.structuredContent.run_id === 42 &&
      executed.structuredContent.outcome.ok === true);
    const refused = await raw("apply_rules", { ruleset: INVALID_RULESET });
    check("apply_rules refused (validation_error): run_id is the number 42", refused.structuredContent.run_id === 42);
    const missing = await raw("apply_rules", {});
    check("apply_rules request error: unchanged (no run_id)", missing.isError === true && missing.structuredContent.run_id === undefined &&
      missing.structuredContent.error.kind === "invalid_request");
  },
  "trace-level-enum": async ({ client, raw, check }) => {
    const { tools } = await client.listTools();
    const apply = tools.find((x) => x.name === "apply_rules");
    assert.deepStrictEqual(apply.inputSchema.properties.trace_level, { type: "string", enum: ["none", "summary", "full"] });
    check("apply_rules inputSchema: trace_level enumerated", true);
    const verbose = await raw("apply_rules", { ruleset: RULESET, trace_level: "verbose" });
    check("behaviour unchanged: unknown trace_level is still invalid_request", verbose.isError === true && verbose.structuredContent.error.kind === "invalid_request");
  },
  "no-program-declaration": async ({ client, check }) => {
    const { tools } = await client.listTools();
    const tool = Object.fromEntries(tools.map((x) => [x.name, x]));
    check("check_rules and apply_rules carry no _meta", tool.check_rules._meta === undefined && tool.apply_rules._meta === undefined);
  },
  "unknown-language-success": async ({ raw, check }) => {
    const guide = await raw("pilotage_get_guide", { language: "rules/v9" });
    check("get_guide, unknown language: {guides: []}, isError false",
      guide.isError === false && JSON.stringify(guide.structuredContent) === '{"guides":[]}');
    const missing = await raw("pilotage_get_guide", { language: LANGUAGE, id: "nope" });
    check("get_guide, unknown id: still not_found", missing.isError === true && missing.structuredContent.error.kind === "not_found");
  },
  "no-welcome": async ({ client, raw, check }) => {
    check("initialize result has no instructions", client.getInstructions() === undefined);
    check("the extension is still declared", client.getServerCapabilities()?.extensions?.[EXTENSION]?.version === "1.1");
    const manifest = await raw("pilotage_manifest", {});
    check("pilotage_manifest still answers", manifest.structuredContent.pilotage === "1.1");
  },
};

async function faults() {
  console.log("# faults");
  for (const [fault, expect] of Object.entries(FAULT_CHECKS)) {
    const transport = new StdioClientTransport({ command: process.execPath, args: [ENGINE, "--break", fault], stderr: "pipe" });
    const client = new Client({ name: "pilotage-engine-check", version: "1.0.0" }, { capabilities: { extensions: { [EXTENSION]: {} } } });
    await client.connect(transport);
    // The raw CallToolResult: client.request, not client.callTool (which checks outputSchema).
    const raw = (name, args) => client.request({ method: "tools/call", params: { name, arguments: args } }, CallToolResultSchema);
    try {
      await expect({ client, raw, check: (name, condition) => check(`--break ${fault}: ${name}`, condition) });
    } finally {
      await client.close();
    }
  }
  const bogus = spawnSync(process.execPath, [ENGINE, "--break", "bogus"], { encoding: "utf8", timeout: 10000 });
  check("--break bogus: exit status 2, usage on stderr", bogus.status === 2 && /unknown --break fault: bogus/.test(bogus.stderr) && /usage:/.test(bogus.stderr));
  const bare = spawnSync(process.execPath, [ENGINE, "--break"], { encoding: "utf8", timeout: 10000 });
  check("--break without NAME: exit status 2", bare.status === 2);
}

const modes = process.argv.slice(2).length ? process.argv.slice(2) : ["stdio", "http", "stateless", "faults"];
for (const mode of modes) {
  if (mode === "stdio") {
    await exercise("stdio", new StdioClientTransport({ command: process.execPath, args: [ENGINE], stderr: "inherit" }));
  } else if (mode === "http") {
    await http(false);
  } else if (mode === "stateless") {
    await http(true);
  } else if (mode === "faults") {
    await faults();
  } else {
    console.error(`unknown mode ${mode}`);
    process.exit(2);
  }
}
console.log(`${passed} passed, 0 failed`);
