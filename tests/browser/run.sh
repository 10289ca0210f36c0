#!/usr/bin/env bash
# Browser tests of the web app: tests/browser/run.sh path/to/vramplan
# Starts the real `vramplan serve` and drives Debian's chromium through playwright-core (a dev
# dependency of web/). Screenshots and exports land in $VRAMPLAN_TEST_ARTIFACTS
# (default build/test-artifacts/).
set -euo pipefail
if [[ $# -ne 1 ]]; then
  echo "usage: $0 path/to/vramplan" >&2
  exit 2
fi
bin="$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"
root="$(cd "$(dirname "$0")/../.." && pwd)"
chromium="${CHROMIUM:-/usr/bin/chromium}"
for tool in node npm; do
  command -v "$tool" >/dev/null 2>&1 || { echo "$0: $tool is not installed (scripts/setup.sh installs it)" >&2; exit 1; }
done
[[ -x "$chromium" ]] || { echo "$0: no chromium at $chromium (apt-get install chromium, or set CHROMIUM)" >&2; exit 1; }
[[ -x "$bin" ]] || { echo "$0: $bin is not an executable vramplan" >&2; exit 1; }

# playwright-core comes from web/'s lock file.
if [[ ! -d "$root/web/node_modules/playwright-core" || "$root/web/package-lock.json" -nt "$root/web/node_modules/.package-lock.json" ]]; then
  (cd "$root/web" && npm ci --no-audit --no-fund)
fi

export VRAMPLAN_BIN="$bin" CHROMIUM="$chromium"
export VRAMPLAN_TEST_ARTIFACTS="${VRAMPLAN_TEST_ARTIFACTS:-$root/build/test-artifacts}"
mkdir -p "$VRAMPLAN_TEST_ARTIFACTS"
node --test --test-concurrency=1 "$root"/tests/browser/*_test.mjs
echo "browser test artifacts: $VRAMPLAN_TEST_ARTIFACTS"
