#!/usr/bin/env bash
# A throwaway PostgreSQL server for the storage tests (DESIGN D6, D10), from Debian's packages.
#
#   deploy/test-postgres.sh start DIR   # prints the SQLAlchemy URL for DOCSHELF_TEST_DATABASE_URL
#   deploy/test-postgres.sh stop DIR    # stops the server and removes DIR
#
# DIR is an empty folder for the cluster; the server listens on a free loopback port
# only, with a random password. As root it runs as the `postgres` user (initdb refuses
# root). If PostgreSQL is missing and we are root, it is installed with apt. On any
# failure `start` prints "PostgreSQL unavailable: <reason>" to stderr and exits 1.
set -uo pipefail

action=${1:-}
dir=${2:-}
if [ -z "$action" ] || [ -z "$dir" ]; then
  echo "usage: $0 start|stop DIR" >&2
  exit 64
fi

as_owner() {
  if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

unavailable() {
  echo "PostgreSQL unavailable: $1; PostgreSQL tests will be skipped" >&2
  exit 1
}

find_bin() {
  local found
  found=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)
  [ -n "$found" ] && [ -x "$found/initdb" ] && echo "$found"
}

if [ "$action" = stop ]; then
  bin=$(find_bin) || true
  if [ -n "${bin:-}" ] && [ -f "$dir/cluster/postmaster.pid" ]; then
    as_owner "$bin/pg_ctl" -D "$dir/cluster" -m immediate -w stop >/dev/null 2>&1 || true
  fi
  rm -rf "$dir"
  exit 0
fi
[ "$action" = start ] || { echo "usage: $0 start|stop DIR" >&2; exit 64; }

bin=$(find_bin)
if [ -z "$bin" ]; then
  [ "$(id -u)" = 0 ] || unavailable "no /usr/lib/postgresql/*/bin/initdb and not root to apt-get install postgresql"
  { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends postgresql; } \
    >"${TMPDIR:-/tmp}/docshelf-apt-postgresql.log" 2>&1 \
    || unavailable "apt-get install postgresql failed (see ${TMPDIR:-/tmp}/docshelf-apt-postgresql.log)"
  bin=$(find_bin) || unavailable "postgresql installed but no initdb found"
fi
if [ "$(id -u)" = 0 ]; then
  id postgres >/dev/null 2>&1 || unavailable "running as root and there is no 'postgres' user to run the server"
fi

mkdir -p "$dir" || unavailable "cannot create $dir"
[ "$(id -u)" = 0 ] && chown postgres: "$dir"
password=$(python3 -c 'import secrets; print(secrets.token_hex(16))') || unavailable "python3 is needed"
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
printf '%s\n' "$password" >"$dir/pwfile" && chmod 600 "$dir/pwfile"
[ "$(id -u)" = 0 ] && chown postgres: "$dir/pwfile"

as_owner "$bin/initdb" -D "$dir/cluster" -U postgres --pwfile="$dir/pwfile" --auth=scram-sha-256 \
  -E UTF8 --locale=C.UTF-8 >"$dir/initdb.log" 2>&1 \
  || unavailable "initdb failed: $(tail -n 3 "$dir/initdb.log" | tr '\n' ' ')"
# Small settings for a test server: loopback only, socket in DIR, durability off (it is thrown away).
as_owner "$bin/pg_ctl" -D "$dir/cluster" -l "$dir/server.log" -w -t 60 \
  -o "-c listen_addresses=127.0.0.1 -p $port -k $dir -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=100" \
  start >/dev/null 2>&1 \
  || unavailable "the server did not start: $(tail -n 3 "$dir/server.log" 2>/dev/null | tr '\n' ' ')"
rm -f "$dir/pwfile"

echo "postgresql+psycopg://postgres:${password}@127.0.0.1:${port}/postgres"
