#!/usr/bin/env bash
# Builds the web app into web/dist/ (index.html + assets/), which `vramplan serve` embeds.
# Installs the npm packages from the lock file first when node_modules is missing or older than
# the lock file.
set -euo pipefail
cd "$(dirname "$0")/../web"

for tool in node npm; do
  if ! command -v "$tool" >/dev/null 2>&1; then
    echo "build_web.sh: $tool is not installed; install Node.js 20+ and npm (scripts/setup.sh does)" >&2
    exit 1
  fi
done

stamp=node_modules/.package-lock.json  # npm rewrites it on every install
if [[ ! -f "$stamp" || package-lock.json -nt "$stamp" ]]; then
  echo "== npm ci (web)"
  npm ci --no-audit --no-fund
fi

echo "== npm run build (web)"
npm run build
