#!/bin/sh
# Creates a cluster in $PGDATA on first start, then runs PostgreSQL in the
# foreground as PID 1. Settings follow the official image's variables:
#   POSTGRES_PASSWORD          required unless POSTGRES_HOST_AUTH_METHOD=trust
#   POSTGRES_USER              superuser name (default postgres)
#   POSTGRES_DB                database to create (default: POSTGRES_USER)
#   POSTGRES_HOST_AUTH_METHOD  auth for TCP clients (default scram-sha-256)
# Extra arguments are passed to postgres, e.g. `-c max_connections=200`.
set -eu

user=${POSTGRES_USER:-postgres}
db=${POSTGRES_DB:-$user}
auth=${POSTGRES_HOST_AUTH_METHOD:-scram-sha-256}

if [ ! -s "$PGDATA/PG_VERSION" ]; then
    if [ -z "${POSTGRES_PASSWORD:-}" ] && [ "$auth" != trust ]; then
        echo "postgres-entrypoint: POSTGRES_PASSWORD is required (or POSTGRES_HOST_AUTH_METHOD=trust)" >&2
        exit 2
    fi
    echo "postgres-entrypoint: creating cluster in $PGDATA for user $user, database $db" >&2
    # The password goes through a file so that it never appears in argv.
    pwfile=$(mktemp)
    printf '%s\n' "${POSTGRES_PASSWORD:-}" > "$pwfile"
    initdb -D "$PGDATA" -U "$user" --pwfile="$pwfile" -E UTF8 --no-locale --no-sync \
        --auth-local=trust --auth-host="$auth" > /dev/null
    rm -f "$pwfile"
    # initdb only admits loopback TCP clients; containers talk over a network.
    printf '%s\n' 'local all all trust' "host all all all $auth" > "$PGDATA/pg_hba.conf"
    if [ "$db" != postgres ]; then
        # Single-user mode needs no server start, so "ready" is logged once.
        echo "CREATE DATABASE \"$db\";" | postgres --single -F -D "$PGDATA" -j postgres > /dev/null
    fi
fi

# Throwaway test databases: durability traded for speed. Logs go to stderr.
exec postgres -D "$PGDATA" \
    -c listen_addresses='*' -c port=5432 \
    -c fsync=off -c synchronous_commit=off -c full_page_writes=off \
    -c logging_collector=off -c log_destination=stderr \
    "$@"
