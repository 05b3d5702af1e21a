#!/bin/sh
# Gives the image's cluster (made at build time) the requested user, password
# and database on first start, then runs PostgreSQL in the foreground as
# PID 1. Settings follow the official image's variables:
#   POSTGRES_PASSWORD          required unless POSTGRES_HOST_AUTH_METHOD=trust
#   POSTGRES_USER              superuser name (default postgres)
#   POSTGRES_DB                database to create (default: POSTGRES_USER)
#   POSTGRES_HOST_AUTH_METHOD  auth for TCP clients (default scram-sha-256)
# Extra arguments are passed to postgres, e.g. `-c max_connections=200`.
set -eu

user=${POSTGRES_USER:-postgres}
db=${POSTGRES_DB:-$user}
auth=${POSTGRES_HOST_AUTH_METHOD:-scram-sha-256}

# SQL text for an identifier or a string literal.
ident() { printf '"%s"' "$(printf '%s' "$1" | sed 's/"/""/g')"; }
literal() { printf "'%s'" "$(printf '%s' "$1" | sed "s/'/''/g")"; }

if [ ! -s "$PGDATA/PG_VERSION" ]; then
    # An empty volume mounted over the image's cluster: make one in it.
    initdb -D "$PGDATA" -U postgres -E UTF8 --no-locale --no-sync \
        --auth-local=trust --auth-host="$auth" > /dev/null
fi

if [ ! -e "$PGDATA/grantgate-configured" ]; then
    if [ -z "${POSTGRES_PASSWORD:-}" ] && [ "$auth" != trust ]; then
        echo "postgres-entrypoint: POSTGRES_PASSWORD is required (or POSTGRES_HOST_AUTH_METHOD=trust)" >&2
        exit 2
    fi
    echo "postgres-entrypoint: configuring the cluster for user $user, database $db" >&2
    # initdb only admits loopback TCP clients; containers talk over a network.
    printf '%s\n' 'local all all trust' "host all all all $auth" > "$PGDATA/pg_hba.conf"
    password=
    if [ -n "${POSTGRES_PASSWORD:-}" ]; then
        password=" PASSWORD $(literal "$POSTGRES_PASSWORD")"
    fi
    if [ "$user" = postgres ]; then
        role="ALTER ROLE postgres$password"
    else
        role="CREATE ROLE $(ident "$user") SUPERUSER LOGIN$password"
    fi
    database=
    if [ "$db" != postgres ]; then
        database="CREATE DATABASE $(ident "$db") OWNER $(ident "$user") STRATEGY file_copy"
    fi
    # Single-user mode needs no server start, so "ready" is logged once. The
    # SQL (password included) goes through stdin, never argv, and a failing
    # statement is not echoed into the log.
    printf '%s\n%s\n' "$role" "$database" |
        postgres --single -F -D "$PGDATA" -c fsync=off -c log_min_error_statement=panic postgres > /dev/null
    touch "$PGDATA/grantgate-configured"
fi

# Throwaway test databases: durability traded for speed. Logs go to stderr.
exec postgres -D "$PGDATA" \
    -c listen_addresses='*' -c port=5432 \
    -c fsync=off -c synchronous_commit=off -c full_page_writes=off \
    -c logging_collector=off -c log_destination=stderr \
    "$@"
