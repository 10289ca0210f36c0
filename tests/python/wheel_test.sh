#!/usr/bin/env bash
# The wheel as a user installs it: `pip wheel .` built over an already-built build dir
# (VRAMPLAN_PREBUILT: the core and Hub libraries that dir compiled are linked, and only the
# extension module is compiled, by scikit-build-core and PyPI's pybind11 as pinned in
# python/build-requirements.txt), installed into a fresh virtual environment with nothing else
# in it, and the issue's one-liner checked against the CLI's JSON (docs/python.md).
#
# usage: tests/python/wheel_test.sh [BUILD_DIR]   (default build; built with
#        -DVRAMPLAN_BUILD_PYTHON=ON, as scripts/test.sh does, which runs this)
set -euo pipefail
cd "$(dirname "$0")/../.."
build="$(cd "${1:-build}" && pwd)"
[[ -f "$build/vramplan_libraries.cmake" && -x "$build/vramplan" ]] || {
  echo "wheel_test: $build is not a build dir made with -DVRAMPLAN_BUILD_PYTHON=ON" >&2
  exit 1
}
python="$(scripts/find_python.sh venv ensurepip)" || {
  echo "wheel_test: no python3 with venv (scripts/setup.sh test installs python3-venv)" >&2
  exit 1
}
work="$build/wheel"
rm -rf "$work/tools" "$work/user" "$work/dist"
mkdir -p "$work"

# The build's own environment: the pinned build requirements, from PyPI.
start=$SECONDS
"$python" -m venv "$work/tools"
"$work/tools/bin/pip" install -q --disable-pip-version-check -r python/build-requirements.txt
tools_s=$((SECONDS - start))
start=$SECONDS
"$work/tools/bin/pip" wheel -q --disable-pip-version-check --no-build-isolation --no-deps \
  -w "$work/dist" -C cmake.define.VRAMPLAN_PREBUILT="$build" -C build-dir="$work/cmake" .
wheel=("$work"/dist/vramplan-*.whl)
echo "wheel_test: built $(basename "${wheel[0]}") in $((SECONDS - start)) s (build requirements: ${tools_s} s)"
start=$SECONDS

# A user's fresh environment: the wheel alone, nothing fetched (no runtime dependency).
"$python" -m venv "$work/user"
"$work/user/bin/pip" install -q --disable-pip-version-check --no-index "${wheel[0]}"
got="$(cd /tmp && "$work/user/bin/python" -c \
  "import vramplan; print(vramplan.estimate(model='Llama-3.1-8B').peak.allocated_bytes)")"
want="$("$build/vramplan" estimate --model Llama-3.1-8B --format json |
  "$python" -c "import json, sys; print(json.load(sys.stdin)['peak']['allocated_bytes'])")"
# The module came from the wheel, not from a source tree or the build dir.
where="$(cd /tmp && "$work/user/bin/python" -c "import vramplan; print(vramplan.__file__)")"
case "$where" in
  "$work/user/"*) ;;
  *) echo "wheel_test: vramplan was imported from $where, not the fresh environment" >&2; exit 1 ;;
esac
if [[ "$got" != "$want" ]]; then
  echo "wheel_test: the wheel says $got bytes, the CLI $want" >&2
  exit 1
fi
echo "wheel_test: vramplan.estimate(model='Llama-3.1-8B').peak.allocated_bytes = $got, as the CLI" \
  "(fresh environment, install and check: $((SECONDS - start)) s)"
