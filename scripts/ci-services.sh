#!/usr/bin/env bash
# Installs what the browser tests need on a fresh machine (Debian's Chromium; Playwright
# never downloads a browser). Idempotent: skips what is already there.
set -euo pipefail
need=()
command -v chromium >/dev/null 2>&1 || need+=(chromium)
if [ ${#need[@]} -gt 0 ]; then
  if [ "$(id -u)" = 0 ]; then
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null
  else
    echo "missing ${need[*]}: install with apt-get" >&2
    exit 1
  fi
fi
