#!/usr/bin/env bash
# Starts a throwaway Postgres server for the run-store tests, from the machine's Debian
# packages (installing them with apt-get when missing): its own data directory under a
# temporary folder, listening on 127.0.0.1 only (and a Unix socket in that folder), run as the
# non-root user `postgres` (initdb and pg_ctl refuse root). Prints the connection string on
# stdout; stop it with tests/postgres/stop.sh DIR (the folder is the last line on stderr).
#
#   url="$(tests/postgres/start.sh)"   # postgres://postgres@127.0.0.1:PORT/postgres
set -euo pipefail

bin="$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1 || true)"
if [ -z "$bin" ] || [ ! -x "$bin/initdb" ]; then
  echo "tests/postgres/start.sh: installing Postgres from Debian's packages" >&2
  apt-get update -qq >&2 && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >&2
  bin="$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -n 1)"
fi
user=postgres
id "$user" >/dev/null 2>&1 || useradd --system --no-create-home "$user"
dir="$(mktemp -d /tmp/pilotage-postgres.XXXXXX)"
chown "$user" "$dir"
as_user() {
  if [ "$(id -u)" = 0 ]; then runuser -u "$user" -- "$@"; else "$@"; fi
}
port="$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()')"
as_user "$bin/initdb" -D "$dir/data" -A trust -U postgres --no-sync >"$dir/initdb.log" 2>&1 \
  || { cat "$dir/initdb.log" >&2; exit 1; }
as_user "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 \
  -o "-c listen_addresses=127.0.0.1 -p $port -k $dir -c fsync=off" start >&2 \
  || { cat "$dir/server.log" >&2; exit 1; }
echo "tests/postgres/start.sh: Postgres on 127.0.0.1:$port, data in $dir" >&2
echo "$dir" >&2
echo "postgres://postgres@127.0.0.1:$port/postgres"
