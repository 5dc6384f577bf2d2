"""Drive the Pilotage reference engine through the whole loop with the official Python MCP SDK.

The Python twin of tests/e2e/loop.mjs (TypeScript SDK): manifest -> guides -> catalog ->
validate -> execute -> trace fetch (Part III 8.2), plus an unknown run (9.5), an unknown tool
(9.6), a structural fault, and the resources when the manifest names them (8.3: content equal
to the tool responses). Every structuredContent, request errors included, is validated against
the tool's outputSchema (Part III 6: the schema must accept every shape the tool produces).

Two revision modes:

  --mode handshake  Client(mode="legacy"): initialize at 2025-11-25 with
                    capabilities.extensions["io.github.jafarsa0/pilotage"] = {}.
  --mode stateless  Client(mode="auto"): the SDK sends server/discover at 2026-07-28 and, on
                    success, stamps _meta["io.modelcontextprotocol/clientCapabilities"] (with the
                    extension) on every later request. The script fails if the SDK fell back to
                    initialize, so a pass means the stateless revision was really spoken.

usage: python loop.py [--mode handshake|stateless] [--timeout S] [--out DIR] stdio ENGINE [ARGS...]
       python loop.py [--mode handshake|stateless] [--timeout S] [--out DIR] http URL

Prints one `ok - <check>` line per check and ends with `N passed, M failed`; exits 0 only
when nothing failed.
"""

from __future__ import annotations

import argparse
import json
import sys
import traceback
from pathlib import Path
from typing import Any

import anyio
import jsonschema
from mcp import Client
from mcp.client import advertise
from mcp.client.stdio import StdioServerParameters
from mcp.shared.exceptions import MCPError

EXTENSION = "io.github.jafarsa0/pilotage"
HANDSHAKE_VERSION = "2025-11-25"
STATELESS_VERSION = "2026-07-28"
KINDS = {"not_found", "invalid_request", "unknown_baseline", "idempotency_conflict", "bounds_exceeded", "unsupported",
         "internal"}  # schemas/pilotage.schema.json RequestError.kind (Part III 7.2)

PROGRAM = {
    "steps": [
        {"id": "profile", "kind": "call", "capability": "cap_read_user_profile", "with": {"user_id": "$.input.userId"}}
    ],
    "output": {"name": "$.steps.profile.output.name"},
}
INVALID_PROGRAM = {"steps": [{"id": "profile", "kind": "call", "capability": "cap_read_user_profil"}]}


class CheckFailed(Exception):
    pass


class Loop:
    def __init__(self, client: Client, mode: str, timeout: float) -> None:
        self.client = client
        self.mode = mode
        self.timeout = timeout
        self.passed = 0
        self.failed = 0
        self.validators: dict[str, Any] = {}
        self.last: dict[str, Any] | None = None  # the last exchange, printed on failure

    # -- reporting ---------------------------------------------------------------------------

    def check(self, name: str, condition: bool, detail: Any = None, *, count: bool = True) -> None:
        if condition:
            if count:
                self.passed += 1
                print(f"ok - {name}", flush=True)
            return
        self.failed += 1
        print(f"not ok - {name}", flush=True)
        if detail is not None:
            print(f"  detail: {_dump(detail)}", flush=True)
        if self.last is not None:
            print(f"  last exchange: {_dump(self.last)}", flush=True)

    def require(self, name: str, condition: bool, detail: Any = None, *, count: bool = True) -> None:
        """A check the rest of the loop depends on: stop on failure."""
        self.check(name, condition, detail, count=count)
        if not condition:
            raise CheckFailed(name)

    # -- calls -------------------------------------------------------------------------------

    async def raw_call(self, name: str, args: dict[str, Any]) -> Any:
        self.last = {"request": {"method": "tools/call", "name": name, "arguments": args}}
        result = await self.client.call_tool(name, args, read_timeout_seconds=self.timeout)
        self.last["response"] = result.model_dump(by_alias=True, mode="json", exclude_none=True)
        return result

    async def call(self, name: str, args: dict[str, Any], *, is_error: bool = False) -> dict[str, Any]:
        """tools/call; asserts isError, structuredContent, the outputSchema and one text block."""
        result = await self.raw_call(name, args)
        got = bool(result.is_error)
        # per-call envelope assertions are not counted, only reported when they fail
        self.require(f"{name}: isError is {str(is_error).lower()}", got == is_error, {"isError": result.is_error},
                     count=False)
        sc = result.structured_content
        self.require(f"{name}: structuredContent present (Part III 6)", isinstance(sc, dict), count=False)
        validator = self.validators.get(name)
        if validator is not None:
            errors = sorted(validator.iter_errors(sc), key=lambda e: list(e.path))
            self.require(f"{name}: structuredContent satisfies the outputSchema", not errors,
                         [e.message for e in errors[:3]], count=False)
        ok_text = bool(result.content) and getattr(result.content[0], "type", None) == "text"
        self.require(f"{name}: one text block in content", ok_text, count=False)
        if is_error:
            kind = sc.get("error", {}).get("kind")
            self.require(f"{name}: request error kind in the closed set (Part III 7.2)", kind in KINDS, kind, count=False)
        return sc

    async def carrier(self, name: str, args: dict[str, Any]) -> MCPError:
        """tools/call that must fail with a JSON-RPC error -32602."""
        self.last = {"request": {"method": "tools/call", "name": name, "arguments": args}}
        try:
            result = await self.client.call_tool(name, args, read_timeout_seconds=self.timeout)
        except MCPError as error:
            self.last["response"] = {"error": error.error.model_dump(by_alias=True, mode="json", exclude_none=True)}
            return error
        self.last["response"] = result.model_dump(by_alias=True, mode="json", exclude_none=True)
        self.require(f"{name}: a JSON-RPC error, not a result", False)
        raise AssertionError("unreachable")

    # -- the loop ----------------------------------------------------------------------------

    async def run(self, out_dir: Path | None) -> None:
        c = self.client
        session = c.session

        # connect: initialize (handshake) or server/discover (stateless)
        if self.mode == "handshake":
            self.require(f"initialize negotiated {HANDSHAKE_VERSION}",
                         session.initialize_result is not None and c.protocol_version == HANDSHAKE_VERSION,
                         c.protocol_version)
            connect = session.initialize_result
            where = "initialize"
        else:
            self.require(f"server/discover negotiated {STATELESS_VERSION} (no initialize fallback)",
                         session.discover_result is not None and c.protocol_version == STATELESS_VERSION,
                         {"protocol_version": c.protocol_version,
                          "initialize_result": session.initialize_result is not None})
            connect = session.discover_result
            where = "server/discover"
        capabilities = c.server_capabilities
        declared = (capabilities.extensions or {}).get(EXTENSION)
        self.check(f"{where} declares the extension {EXTENSION} (Part III 1.2)", isinstance(declared, dict),
                   capabilities.model_dump(by_alias=True, exclude_none=True))
        instructions = c.instructions or ""
        self.check(f"{where} instructions name Pilotage and pilotage_manifest (Part III 3.4)",
                   "Pilotage" in instructions and "pilotage_manifest" in instructions, instructions)
        meta = (connect.meta or {}).get(EXTENSION) if connect is not None else None
        if meta is not None:
            self.check(f"{where} _meta accelerator carries manifest or manifest_uri (Part III 3.2)",
                       "manifest" in meta or "manifest_uri" in meta, meta)

        # tools/list
        self.last = {"request": {"method": "tools/list"}}
        tools = (await c.list_tools(cache_mode="bypass")).tools
        self.last["response"] = {"tools": [t.name for t in tools]}
        names = sorted(t.name for t in tools)
        self.require("tools/list has the six tools", names == sorted(
            ["pilotage_catalog", "pilotage_get_guide", "pilotage_manifest", "run_workflow", "trace_run",
             "validate_workflow"]), names)
        missing = [t.name for t in tools if not t.output_schema]
        self.check("every tool declares an outputSchema", not missing, missing)
        for tool in tools:
            if tool.output_schema:
                cls = jsonschema.validators.validator_for(tool.output_schema)
                self.validators[tool.name] = cls(tool.output_schema)
        by_name = {t.name: t for t in tools}

        # discover: pilotage_manifest
        manifest = await self.call("pilotage_manifest", {})
        version = declared.get("version") if isinstance(declared, dict) else None
        languages = manifest.get("languages") or [{}]
        language = languages[0]
        self.require("manifest: pilotage version as declared, Language workflow/v1",
                     isinstance(version, str) and manifest.get("pilotage") == version
                     and language.get("name") == "workflow/v1", {"declared": declared, "manifest": manifest})
        self.check("manifest: guides/catalog bound to pilotage_get_guide/pilotage_catalog (Part III 4)",
                   language.get("guides") == "pilotage_get_guide" and language.get("catalog") == "pilotage_catalog",
                   language)
        loop = language.get("loop") or {}
        self.require("manifest: every loop tool exists in tools/list (Part III 4.3)",
                     loop and all(n in by_name for n in loop.values()), loop)
        if self.mode == "stateless":
            self.check("manifest: no session retention on the stateless revision (Part III 8.1)",
                       language.get("retention") != "session", language.get("retention"))
        if meta is not None and "manifest" in meta:
            self.check(f"the {where} inline manifest equals the pilotage_manifest result (Part III 3.3)",
                       meta["manifest"] == manifest, {"inline": meta["manifest"], "tool": manifest})
        for stage in ("validate", "execute"):
            decl = (by_name[loop[stage]].meta or {}).get(EXTENSION, {})
            self.check(f"{loop[stage]} carries the program declaration (Part III 5)",
                       decl.get("language") == language["name"] and isinstance(decl.get("argument"), str), decl)
        lang = language["name"]
        program_arg = (by_name[loop["validate"]].meta or {}).get(EXTENSION, {}).get("argument", "workflow")

        # learn
        index = await self.call("pilotage_get_guide", {"language": lang})
        guides = index.get("guides", [])
        self.check("guide index without bodies", len(guides) == 3 and all("body" not in g for g in guides), index)
        intro = await self.call("pilotage_get_guide", {"language": lang, "id": "intro"})
        self.check("guide fetch with body", intro["guide"]["body"].startswith("# workflow/v1"), intro)
        topic = await self.call("pilotage_get_guide", {"language": lang, "id": "intro", "topic": "references"})
        body = topic["guide"]["body"]
        self.check("topic fetch returns the topic only",
                   body.startswith("## references") and "## output" not in body, body)
        missing_guide = await self.call("pilotage_get_guide", {"language": lang, "id": "nope"}, is_error=True)
        self.check("unknown guide is a not_found request error", missing_guide["error"]["kind"] == "not_found")
        error = await self.carrier("pilotage_get_guide", {"id": "intro"})
        self.check("get_guide without language is a -32602 carrier error (strict access schema)",
                   error.code == -32602, error.error)

        # lookup
        listing = await self.call("pilotage_catalog", {"language": lang, "verb": "list", "q": "profile"})
        items = listing.get("items", [])
        self.check("catalog list with q", len(items) == 1 and items[0]["id"] == "cap_read_user_profile", listing)
        cv = listing.get("catalog_version")
        entry = await self.call("pilotage_catalog", {"language": lang, "verb": "get", "id": "cap_read_user_profile"})
        self.check("catalog get", entry["entry"]["risk"] == "safe" and entry.get("catalog_version") == cv, entry)
        changed = await self.call("pilotage_catalog",
                                  {"language": lang, "verb": "changed_since", "catalog_version": "cv_1a2b3c4d5e6f"})
        self.check("catalog changed_since cv_1a2b3c4d5e6f", len(changed.get("changes", [])) == 2, changed)
        not_applicable = await self.call("pilotage_catalog", {"language": lang, "verb": "get", "id": "x", "q": "y"},
                                         is_error=True)
        self.check("a member not applicable to the verb: invalid_request with a catalog_version sibling",
                   not_applicable["error"]["kind"] == "invalid_request"
                   and isinstance(not_applicable.get("catalog_version"), str), not_applicable)

        # validate
        valid = await self.call(loop["validate"], {program_arg: PROGRAM})
        self.check("valid program: plan with risk, no diagnostics",
                   valid["valid"] is True and valid["plan"]["max_risk"] == "safe" and valid["diagnostics"] == [],
                   valid)
        invalid = await self.call(loop["validate"], {program_arg: INVALID_PROGRAM})
        diag = (invalid.get("diagnostics") or [{}])[0]
        self.check("invalid program (Part III 9.3): valid false, isError false, unknown_capability diagnostic",
                   invalid["valid"] is False and diag.get("severity") == "error"
                   and diag.get("code") == "unknown_capability" and diag.get("path") == "/steps/0/capability"
                   and diag.get("hint") == "close match: cap_read_user_profile"
                   and isinstance(invalid.get("catalog_version"), str), invalid)

        # execute
        run = await self.call(loop["execute"], {program_arg: PROGRAM, "input": {"userId": "42"},
                                                "trace_level": "full", "expected_catalog_version": cv})
        trace = run.get("trace") or {}
        step = (trace.get("steps") or [{}])[0]
        self.check("execute (Part III 9.4): ok true, output Amira Hassan, full trace",
                   run["outcome"]["ok"] is True and run["outcome"]["status"] == "success"
                   and run["output"] == {"name": "Amira Hassan"} and trace.get("level") == "full"
                   and trace.get("run_id") == run.get("run_id") and step.get("calls") == "cap_read_user_profile"
                   and step.get("input") == {"user_id": "42"}
                   and step.get("output") == {"name": "Amira Hassan", "tier": "gold"}, run)
        failed = await self.call(loop["execute"], {program_arg: {"steps": [
            {"id": "mail", "kind": "call", "capability": "cap_send_email", "with": {"to": "nobody", "subject": "s"}}]}})
        self.check("a failed run is ok false with isError false",
                   failed["outcome"]["ok"] is False and failed["outcome"]["status"] == "failed", failed)
        neither = await self.call(loop["execute"], {"trace_level": "none"}, is_error=True)
        self.check("neither runnable is invalid_request", neither["error"]["kind"] == "invalid_request", neither)
        bad_level = await self.call(loop["execute"], {program_arg: PROGRAM, "trace_level": "verbose"}, is_error=True)
        self.check("unknown trace_level is invalid_request, not a schema fault",
                   bad_level["error"]["kind"] == "invalid_request", bad_level)

        # trace fetch
        fetched = await self.call(loop["trace"], {"run_id": run["run_id"]})
        self.check("trace fetch of the run_id",
                   fetched.get("run_id") == run["run_id"] and fetched["trace"] == run["trace"]
                   and fetched["output"] == {"name": "Amira Hassan"}, fetched)
        summary = await self.call(loop["trace"], {"run_id": run["run_id"], "trace_level": "summary"})
        self.check("trace fetch at summary drops step data",
                   summary["trace"]["level"] == "summary" and "input" not in summary["trace"]["steps"][0], summary)
        unknown = await self.call(loop["trace"], {"run_id": "run_000000000000"}, is_error=True)
        result = await self.raw_call(loop["trace"], {"run_id": "run_000000000000"})
        self.check("unknown run (Part III 9.5): not_found, message, text 'unknown run', isError true",
                   unknown == {"error": {"kind": "not_found", "message": "unknown run: it may have expired"}}
                   and result.is_error is True and len(result.content) == 1
                   and result.content[0].text == "unknown run", self.last)

        # resources (Part III 8.3), when the manifest names them
        if language.get("guides_resource") or language.get("catalog_resource"):
            await self.resources(language, lang, guides)
        else:
            self.check("no resource is named when none is served",
                       "guides_resource" not in language and "catalog_resource" not in language, language)

        # carrier errors
        error = await self.carrier("validate_workflw", {})
        self.check("unknown tool (Part III 9.6): JSON-RPC -32602 'Unknown tool: validate_workflw'",
                   error.code == -32602 and error.message == "Unknown tool: validate_workflw", error.error)
        error = await self.carrier(loop["trace"], {"run_id": 7})
        self.check("a wrong JSON type is a -32602 carrier error", error.code == -32602, error.error)

        if out_dir is not None:
            out_dir.mkdir(parents=True, exist_ok=True)
            dump = lambda m: m.model_dump(by_alias=True, mode="json", exclude_none=True)  # noqa: E731
            (out_dir / "tools.json").write_text(json.dumps({"tools": [dump(t) for t in tools]}, indent=2))
            (out_dir / "manifest.json").write_text(json.dumps(manifest, indent=2))
            (out_dir / "connect.json").write_text(json.dumps(dump(connect), indent=2))

    async def resources(self, language: dict[str, Any], lang: str, guides: list[dict[str, Any]]) -> None:
        c = self.client
        guides_uri = language.get("guides_resource")
        catalog_uri = language.get("catalog_resource")
        self.check("guides_resource is pilotage://guides/workflow%2Fv1",
                   guides_uri == "pilotage://guides/workflow%2Fv1", guides_uri)
        self.last = {"request": {"method": "resources/list"}}
        listed = [str(r.uri) for r in (await c.list_resources(cache_mode="bypass")).resources]
        self.last["response"] = listed
        self.check("the resources are listed", guides_uri in listed and catalog_uri in listed, listed)

        async def read(uri: str) -> Any:
            self.last = {"request": {"method": "resources/read", "uri": uri}}
            result = await c.read_resource(uri, cache_mode="bypass")
            self.last["response"] = result.model_dump(by_alias=True, mode="json", exclude_none=True)
            return json.loads(result.contents[0].text)

        tool = await self.call("pilotage_get_guide", {"language": lang})
        resource = await read(guides_uri)
        self.check("the guide index resource equals the tool response", resource == tool, {"resource": resource})
        for guide in guides:
            gid = guide["id"]
            uri = f"{guides_uri}/{_segment(gid)}"
            tool = await self.call("pilotage_get_guide", {"language": lang, "id": gid})
            resource = await read(uri)
            self.check(f"guide resource {uri} equals the fetch response", resource == tool, {"resource": resource})
        tool = await self.call("pilotage_catalog", {"language": lang, "verb": "list"})
        resource = await read(catalog_uri)
        self.check("the catalog resource equals the list response", resource == tool, {"resource": resource})


def _segment(value: str) -> str:
    from urllib.parse import quote

    return quote(value, safe="")


def _dump(value: Any) -> str:
    try:
        text = json.dumps(value, default=lambda o: o.model_dump(by_alias=True, mode="json", exclude_none=True)
                          if hasattr(o, "model_dump") else str(o))
    except Exception:  # noqa: BLE001 - diagnostics only
        text = repr(value)
    return text if len(text) <= 4000 else text[:4000] + "..."


async def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--mode", choices=["handshake", "stateless"], default="handshake")
    parser.add_argument("--timeout", type=float, default=15.0, help="per-request timeout, seconds")
    parser.add_argument("--total-timeout", type=float, default=120.0, help="whole-run timeout, seconds")
    parser.add_argument("--out", type=Path, help="write tools.json, manifest.json, connect.json here")
    parser.add_argument("transport", choices=["stdio", "http"])
    parser.add_argument("target", help="ENGINE_BINARY (stdio) or the endpoint URL (http)")
    parser.add_argument("engine_args", nargs=argparse.REMAINDER, help="arguments for the engine (stdio)")
    args = parser.parse_args()
    if args.transport == "http" and args.engine_args:
        parser.error("engine arguments apply to stdio only")

    server: Any = (
        StdioServerParameters(command=args.target, args=args.engine_args)
        if args.transport == "stdio"
        else args.target
    )
    client = Client(
        server,
        mode="legacy" if args.mode == "handshake" else "auto",
        extensions=[advertise(EXTENSION)],
        read_timeout_seconds=args.timeout,
    )
    loop: Loop | None = None
    print(f"# {args.transport} {args.mode}: {args.target} {' '.join(args.engine_args)}", flush=True)
    try:
        with anyio.fail_after(args.total_timeout):
            async with client:
                loop = Loop(client, args.mode, args.timeout)
                await loop.run(args.out)
    except KeyboardInterrupt:
        raise
    except BaseException as error:  # noqa: BLE001 - report anything, then fail
        if _only_check_failed(error):
            pass  # already reported by require()
        else:
            _report(error, loop)
            if loop is None:
                loop = Loop(client, args.mode, args.timeout)
            loop.failed += 1
    assert loop is not None
    print(f"{loop.passed} passed, {loop.failed} failed", flush=True)
    return 0 if loop.failed == 0 else 1


def _only_check_failed(error: BaseException) -> bool:
    """A CheckFailed, possibly wrapped in the SDK's task-group ExceptionGroups."""
    if isinstance(error, BaseExceptionGroup):
        return all(_only_check_failed(e) for e in error.exceptions)
    return isinstance(error, CheckFailed)


def _report(error: BaseException, loop: Loop | None) -> None:
    while isinstance(error, BaseExceptionGroup) and len(error.exceptions) == 1:
        error = error.exceptions[0]
    print(f"not ok - {type(error).__name__}: {error}", flush=True)
    if loop is not None and loop.last is not None:
        print(f"  last exchange: {_dump(loop.last)}", flush=True)
    traceback.print_exception(error, file=sys.stderr)


if __name__ == "__main__":
    sys.exit(anyio.run(main))
