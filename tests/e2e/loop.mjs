// Drives the Pilotage reference engine over stdio or streamable HTTP with the official
// TypeScript MCP SDK client through the whole loop of Part III 8.2 (manifest -> guide ->
// catalog -> validate -> execute -> trace fetch), plus an unknown run, an unknown tool and a
// structural fault, and the resources when the manifest names them (8.3: content equal to the
// tool responses). The client validates every structuredContent against the tool's
// outputSchema (Ajv) by itself; this script validates it once more with a fresh Ajv and
// asserts isError and the carrier errors as Part III 6, 7 and 9 say. It writes tools/list,
// the manifest and the initialize result it saw to OUT_DIR, for the conformance linter.
//
// usage: node loop.mjs OUT_DIR stdio ENGINE_BINARY [ENGINE_ARGS...]
//        node loop.mjs OUT_DIR http URL

import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { McpError } from "@modelcontextprotocol/sdk/types.js";
import Ajv from "ajv";

const [outDir, mode, target, ...engineArgs] = process.argv.slice(2);
if (!outDir || !target || (mode !== "stdio" && mode !== "http")) {
  console.error("usage: node loop.mjs OUT_DIR stdio ENGINE_BINARY [ENGINE_ARGS...] | node loop.mjs OUT_DIR http URL");
  process.exit(2);
}

const EXTENSION = "io.github.jafarsa0/pilotage";
const client = new Client(
  { name: "pilotage-e2e", version: "1.0.0" },
  { capabilities: { extensions: { [EXTENSION]: {} } } },
);
const transport = mode === "http"
  ? new StreamableHTTPClientTransport(new URL(target))
  : new StdioClientTransport({ command: target, args: engineArgs, stderr: "inherit" });
await client.connect(transport);

let passed = 0;
const ajv = new Ajv({ strict: false, allErrors: true });
const outputSchemas = new Map();

function check(name, condition) {
  assert.ok(condition, name);
  passed += 1;
  console.log(`ok - ${name}`);
}

async function call(name, args, { isError = false } = {}) {
  // The SDK client itself rejects a structuredContent that violates the outputSchema.
  const result = await client.callTool({ name, arguments: args });
  assert.equal(result.isError ?? false, isError, `${name}: isError should be ${isError}: ${JSON.stringify(result)}`);
  assert.ok(result.structuredContent, `${name}: structuredContent is required (Part III 6)`);
  const validate = outputSchemas.get(name);
  assert.ok(validate(result.structuredContent), `${name}: ${ajv.errorsText(validate.errors)}`);
  assert.equal(result.content?.[0]?.type, "text", `${name}: one text block`);
  return result.structuredContent;
}

async function carrier(name, args) {
  await assert.rejects(client.callTool({ name, arguments: args }), (error) => {
    assert.ok(error instanceof McpError, `${name}: a JSON-RPC error, got ${error}`);
    assert.equal(error.code, -32602, `${name}: -32602 Invalid params`);
    return true;
  });
}

// initialize
const capabilities = client.getServerCapabilities();
check("initialize declares the extension", capabilities?.extensions?.[EXTENSION] !== undefined);
const instructions = client.getInstructions() ?? "";
check("the welcome text names Pilotage and pilotage_manifest", instructions.includes("Pilotage") && instructions.includes("pilotage_manifest"));

// tools/list
const { tools } = await client.listTools();
for (const tool of tools) {
  assert.ok(tool.outputSchema, `${tool.name} has an outputSchema`);
  outputSchemas.set(tool.name, ajv.compile(tool.outputSchema));
}
check("tools/list has the six tools", tools.map((t) => t.name).sort().join(",") ===
  "pilotage_catalog,pilotage_get_guide,pilotage_manifest,run_workflow,trace_run,validate_workflow");

// discover
const manifest = await call("pilotage_manifest", {});
const declared = client.getServerCapabilities()?.extensions?.["io.github.jafarsa0/pilotage"]?.version;
check("manifest: the declared Pilotage version with workflow/v1", typeof declared === "string" && manifest.pilotage === declared && manifest.languages[0].name === "workflow/v1");
const language = manifest.languages[0];

// learn
const index = await call("pilotage_get_guide", { language: language.name });
check("guide index without bodies", index.guides.length === 3 && index.guides.every((g) => g.body === undefined));
const intro = await call("pilotage_get_guide", { language: language.name, id: "intro" });
check("guide fetch with body", intro.guide.body.startsWith("# workflow/v1"));
const topic = await call("pilotage_get_guide", { language: language.name, id: "intro", topic: "references" });
check("topic fetch returns the topic only", topic.guide.body.startsWith("## references") && !topic.guide.body.includes("## output"));
const missingGuide = await call("pilotage_get_guide", { language: language.name, id: "nope" }, { isError: true });
check("unknown guide is a not_found request error", missingGuide.error.kind === "not_found");
await carrier("pilotage_get_guide", { id: "intro" });
check("get_guide without language is a carrier error (strict access schema)", true);

// lookup
const list = await call("pilotage_catalog", { language: language.name, verb: "list", q: "profile" });
check("catalog search", list.items.length === 1 && list.items[0].id === "cap_read_user_profile");
const entry = await call("pilotage_catalog", { language: language.name, verb: "get", id: "cap_read_user_profile" });
check("catalog get", entry.entry.risk === "safe" && entry.catalog_version === list.catalog_version);
const changed = await call("pilotage_catalog", { language: language.name, verb: "changed_since", catalog_version: "cv_1a2b3c4d5e6f" });
check("catalog changed_since", changed.changes.length === 2);
const notApplicable = await call("pilotage_catalog", { language: language.name, verb: "get", id: "x", q: "y" }, { isError: true });
check("a member not applicable to the verb is invalid_request, with catalog_version", notApplicable.error.kind === "invalid_request" && notApplicable.catalog_version);

// validate
const program = {
  steps: [{ id: "profile", kind: "call", capability: "cap_read_user_profile", with: { user_id: "$.input.userId" } }],
  output: { name: "$.steps.profile.output.name" },
};
const valid = await call("validate_workflow", { workflow: program });
check("valid program: plan with risk", valid.valid === true && valid.plan.max_risk === "safe" && valid.diagnostics.length === 0);
const invalid = await call("validate_workflow", {
  workflow: { steps: [{ id: "profile", kind: "call", capability: "cap_read_user_profil" }] },
});
check("invalid program: diagnostics, isError false (Part III 9.3)", invalid.valid === false &&
  invalid.diagnostics[0].code === "unknown_capability" && invalid.diagnostics[0].path === "/steps/0/capability" &&
  invalid.diagnostics[0].hint === "close match: cap_read_user_profile");

// execute
const run = await call("run_workflow", { workflow: program, input: { userId: "42" }, trace_level: "full", expected_catalog_version: list.catalog_version });
check("execute: output, outcome and full trace (Part III 9.4)", run.outcome.ok === true && run.output.name === "Amira Hassan" &&
  run.trace.level === "full" && run.trace.steps[0].output.tier === "gold");
const failed = await call("run_workflow", { workflow: { steps: [{ id: "mail", kind: "call", capability: "cap_send_email", with: { to: "nobody", subject: "s" } }] } });
check("a failed run is ok: false with isError false", failed.outcome.ok === false && failed.outcome.status === "failed");
const neither = await call("run_workflow", { trace_level: "none" }, { isError: true });
check("neither runnable is invalid_request", neither.error.kind === "invalid_request");
const badLevel = await call("run_workflow", { workflow: program, trace_level: "verbose" }, { isError: true });
check("unknown trace_level is invalid_request, not a schema fault", badLevel.error.kind === "invalid_request");

// trace fetch
const fetched = await call("trace_run", { run_id: run.run_id });
check("trace fetch by run_id", fetched.run_id === run.run_id && fetched.trace.steps.length === 1 && fetched.output.name === "Amira Hassan");
const summary = await call("trace_run", { run_id: run.run_id, trace_level: "summary" });
check("trace fetch at summary drops step data", summary.trace.level === "summary" && summary.trace.steps[0].input === undefined);
const unknownRun = await call("trace_run", { run_id: "run_000000000000" }, { isError: true });
check("unknown run: not_found exactly as Part III 9.5", unknownRun.error.kind === "not_found" &&
  unknownRun.error.message === "unknown run: it may have expired");
const unknownRunResult = await client.callTool({ name: "trace_run", arguments: { run_id: "run_000000000000" } });
check("unknown run: the text content of Part III 9.5", unknownRunResult.content[0].text === "unknown run");

// resources (Part III 8.3), when the manifest names them
if (language.guides_resource || language.catalog_resource) {
  const listed = (await client.listResources()).resources.map((r) => r.uri);
  const read = async (uri) => JSON.parse((await client.readResource({ uri })).contents[0].text);
  check("guides_resource is pilotage://guides/workflow%2Fv1", language.guides_resource === "pilotage://guides/workflow%2Fv1");
  check("the resources are listed", listed.includes(language.guides_resource) && listed.includes(language.catalog_resource));
  assert.deepStrictEqual(await read(language.guides_resource), await call("pilotage_get_guide", { language: language.name }));
  check("the guide index resource equals the tool response", true);
  for (const guide of index.guides) {
    const uri = `${language.guides_resource}/${encodeURIComponent(guide.id)}`;
    assert.deepStrictEqual(await read(uri), await call("pilotage_get_guide", { language: language.name, id: guide.id }));
  }
  check("each guide resource equals the fetch response", true);
  assert.deepStrictEqual(await read(language.catalog_resource), await call("pilotage_catalog", { language: language.name, verb: "list" }));
  check("the catalog resource equals the list response", true);
} else {
  check("no resource is named when none is served", language.guides_resource === undefined && language.catalog_resource === undefined);
}

// carrier errors
await carrier("validate_workflw", {});
check("unknown tool is a -32602 carrier error (Part III 9.6)", true);
await carrier("trace_run", { run_id: 7 });
check("a wrong JSON type is a -32602 carrier error", true);

// what the linter checks
const initialize = { capabilities, instructions, serverInfo: client.getServerVersion() };
writeFileSync(join(outDir, "tools.json"), JSON.stringify({ tools }, null, 2));
writeFileSync(join(outDir, "manifest.json"), JSON.stringify(manifest, null, 2));
writeFileSync(join(outDir, "initialize.json"), JSON.stringify(initialize, null, 2));

await client.close();
console.log(`${passed} passed, 0 failed`);
