#!/usr/bin/env bash
# Stops the server tests/postgres/start.sh started in DIR and removes DIR.
set -uo pipefail
dir="${1:?usage: tests/postgres/stop.sh DIR}"
bin="$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)"
if [ -d "$dir/data" ]; then
  if [ "$(id -u)" = 0 ]; then
    runuser -u postgres -- "$bin/pg_ctl" -D "$dir/data" -m fast -w -t 30 stop >/dev/null 2>&1
  else
    "$bin/pg_ctl" -D "$dir/data" -m fast -w -t 30 stop >/dev/null 2>&1
  fi
fi
rm -rf "$dir"
