#!/usr/bin/env bash
# Installs the programs the test suite starts for itself, from Debian's packages:
# Chromium for the browser tests (Playwright never downloads a browser), PostgreSQL and
# Redis for the production-settings tests (each test starts its own server on loopback,
# none is left running). Idempotent: installs only what is missing.
set -euo pipefail
need=()
command -v chromium >/dev/null 2>&1 || need+=(chromium)
command -v redis-server >/dev/null 2>&1 || need+=(redis-server)
ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || need+=(postgresql)
if [ ${#need[@]} -gt 0 ]; then
  if [ "$(id -u)" = 0 ]; then
    echo "installing ${need[*]} (apt-get)" >&2
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
  else
    echo "missing ${need[*]}: install them with apt-get (as root), then run make test again" >&2
    exit 1
  fi
fi
