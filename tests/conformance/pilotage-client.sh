#!/usr/bin/env bash
# The client under test for `conformance client --command`: the suite appends the URL of its
# scenario server as the last argument and sets MCP_CONFORMANCE_SCENARIO and
# MCP_CONFORMANCE_PROTOCOL_VERSION. This turns that into a `pilotage` command line.
#
#   PILOTAGE_BIN   the pilotage binary (default: `pilotage` on PATH)
#   PILOTAGE_CLIENT_TIMEOUT   --timeout for pilotage, seconds (default 10)
#
# The protocol version decides the lifecycle: 2026-07-28 is the stateless revision
# (`--stateless`: server/discover and per-request _meta); the dated revisions before it use
# the initialize handshake. Every scenario runs `pilotage discover` (initialize, tools/list,
# pilotage_manifest when listed); `pilotage call` needs a Pilotage server, which no scenario
# server of the suite is, so it would stop after discovery just the same.
set -u
if [ "$#" -lt 1 ]; then
  echo "usage: $0 [ARGS...] URL (the conformance suite appends URL)" >&2
  exit 2
fi
url="${!#}"
bin="${PILOTAGE_BIN:-pilotage}"
args=(discover --format json --timeout "${PILOTAGE_CLIENT_TIMEOUT:-10}" --url "$url")
if [ "${MCP_CONFORMANCE_PROTOCOL_VERSION:-}" = "2026-07-28" ]; then
  args+=(--stateless)
fi
"$bin" "${args[@]}"
status=$?
# 1 is discover's verdict "not a Pilotage server" (Part III 1.3): the client connected,
# discovered and decided, which is all a scenario server lets it do. Only 2 (cannot connect,
# usage) and anything else is a client failure.
if [ "$status" -eq 1 ]; then
  echo "pilotage-client.sh: discover exited 1 (not a Pilotage server); reported as 0" >&2
  exit 0
fi
exit "$status"
