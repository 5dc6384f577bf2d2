#!/usr/bin/env bash
# Takes the server tests/postgres/start.sh started in DIR down, or brings it up again, keeping
# its data directory, port and socket (the options it was started with, which pg_ctl keeps in
# DIR/data/postmaster.opts): for the tests of a store that outlives its database.
#
#   tests/postgres/restart.sh DIR down   # stops it (fast shutdown: sessions are ended)
#   tests/postgres/restart.sh DIR up     # starts it again as it was
set -euo pipefail
dir="${1:?usage: tests/postgres/restart.sh DIR down|up}"
what="${2:-up}"
bin="$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)"
as_user() {
  if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}
case "$what" in
  down) as_user "$bin/pg_ctl" -D "$dir/data" -m fast -w -t 30 stop >&2 ;;
  # `restart` of a stopped server starts it with the options of its last start.
  up) as_user "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 restart >&2 \
        || { tail -n 20 "$dir/server.log" >&2; exit 1; } ;;
  *) echo "tests/postgres/restart.sh: expected down or up, not $what" >&2; exit 2 ;;
esac
