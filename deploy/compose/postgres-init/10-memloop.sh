#!/bin/bash
# Runs once, on an empty data directory (the official image's /docker-entrypoint-initdb.d).
# memloop_owner (POSTGRES_USER) owns both databases and runs the migrations; each service then
# connects as its own unprivileged role, which forced row-level security binds. The roles are
# created here, with their passwords, so the migrations find them and only grant.
set -euo pipefail
psql -v ON_ERROR_STOP=1 --username "$POSTGRES_USER" --dbname "$POSTGRES_DB" \
  -v serving_pw="$(cat /run/secrets/pg_serving_app_password)" \
  -v memory_pw="$(cat /run/secrets/pg_memory_app_password)" \
  -v relay_pw="$(cat /run/secrets/pg_relay_app_password)" <<'SQL'
CREATE DATABASE memloop_memory OWNER memloop_owner;
CREATE ROLE memloop_serving_app LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOBYPASSRLS PASSWORD :'serving_pw';
CREATE ROLE memloop_memory_app LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOBYPASSRLS PASSWORD :'memory_pw';
CREATE ROLE memloop_relay_app LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOBYPASSRLS PASSWORD :'relay_pw';
SQL
