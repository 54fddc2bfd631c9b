#!/bin/sh
# Writes the compose stack's secrets under deploy/compose/secrets/ (git-ignored). Idempotent: an
# existing file is kept, so re-running never rotates a password the database already holds.
# The token issuer's key pair goes to issuer/ (the private key never reaches a container that
# serves); the service token is signed with it by the image's own `memloop token`: build first.
set -eu
cd "$(dirname "$0")"
umask 077
mkdir -p secrets issuer
# Readable inside the containers (uid 10001) through the bind mount; the folder stays 0700.
new() { [ -s "secrets/$1" ] || python3 -c 'import secrets; print(secrets.token_urlsafe(32))' > "secrets/$1"; }
for name in pg_owner_password pg_serving_app_password pg_memory_app_password pg_relay_app_password; do
  new "$name"
done
owner_pw=$(cat secrets/pg_owner_password)
[ -s secrets/serving_database_url ] ||
  printf 'postgresql+psycopg://memloop_owner:%s@postgres:5432/memloop_serving\n' "$owner_pw" > secrets/serving_database_url
[ -s secrets/memory_database_url ] ||
  printf 'postgresql+psycopg://memloop_owner:%s@postgres:5432/memloop_memory\n' "$owner_pw" > secrets/memory_database_url
chmod 0644 secrets/*
as_me="--user $(id -u):$(id -g)"
[ -s issuer/auth_issuer_key.pem ] ||
  docker run --rm $as_me -v "$PWD/issuer:/issuer" memloop:local memloop issuer-key --out-dir /issuer
chmod 0644 issuer/auth_public_keys.pem
if [ ! -s secrets/service_token ]; then
  docker run --rm $as_me -e MEMLOOP_AUTH_ISSUER_KEY_FILE=/issuer/auth_issuer_key.pem \
    -v "$PWD/issuer:/issuer:ro" memloop:local \
    memloop token --tenant '*' --roles service --subject memloop-loop --ttl-seconds 31536000 > secrets/service_token
fi
chmod 0644 secrets/*
echo "secrets written to $(pwd)/secrets"
