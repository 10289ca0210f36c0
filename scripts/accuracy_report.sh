#!/usr/bin/env bash
# Regenerates docs/accuracy.md and docs/accuracy/*.svg from `vramplan validate`.
# Builds build/vramplan first when it is missing. Needs python3 with matplotlib
# (scripts/setup.sh test installs it).
set -euo pipefail
cd "$(dirname "$0")/.."

if [[ ! -x build/vramplan ]]; then
  VRAMPLAN_TARGET=vramplan scripts/build.sh build
fi

python="$(scripts/find_python.sh matplotlib)" || {
  echo "accuracy_report.sh: no python3 with matplotlib found (apt-get install python3-matplotlib)" >&2
  exit 1
}

report="$(mktemp "${TMPDIR:-/tmp}/vramplan-validate.XXXXXX.json")"
serving="$(mktemp "${TMPDIR:-/tmp}/vramplan-serving.XXXXXX.json")"
throughput="$(mktemp "${TMPDIR:-/tmp}/vramplan-throughput.XXXXXX.json")"
calibration="$(mktemp "${TMPDIR:-/tmp}/vramplan-calibration.XXXXXX.json")"
planner="$(mktemp "${TMPDIR:-/tmp}/vramplan-planner.XXXXXX.json")"
trap 'rm -f "$report" "$serving" "$throughput" "$calibration" "$planner"' EXIT
build/vramplan validate --format json >"$report"
build/vramplan validate --serving --format json >"$serving"
build/vramplan validate --throughput --format json >"$throughput"
build/vramplan validate --calibrate-published --format json >"$calibration"
build/vramplan validate --planner --format json >"$planner"
"$python" scripts/accuracy_report.py "$report" --serving "$serving" --throughput "$throughput" \
  --published-calibration "$calibration" --planner "$planner" \
  --peers data/measurements/peer_estimates.json --docs docs
# The uncertainty bands estimates carry (compiled in: rebuild to pick up a change).
build/vramplan validate --bands >data/uncertainty.json.tmp
if cmp -s data/uncertainty.json.tmp data/uncertainty.json; then
  rm data/uncertainty.json.tmp
else
  mv data/uncertainty.json.tmp data/uncertainty.json
  echo "data/uncertainty.json changed: rebuild so that estimates carry the new bands"
fi

echo "wrote docs/accuracy.md, docs/accuracy/*.svg and data/uncertainty.json"
