#!/usr/bin/env bash
# Installs, builds and runs every test: a format check (clang-format, black), the Python scripts'
# tests, unit and CLI tests, the same tests under ASan+UBSan, a short run of every fuzz target,
# and a short run of the benchmark
# programs and the load test (they print numbers; no timing is asserted).
set -euo pipefail
cd "$(dirname "$0")/.."
# Each stage's heading says when it started, so a CI log shows where the time goes.
stage() { echo "== [$(date -u +%H:%M:%S), ${SECONDS} s in] $*"; }
stage "set-up (scripts/setup.sh test)"
scripts/setup.sh test

stage "format check"
scripts/format.sh --check

stage "Python tests of the scripts (pytest)"
python="$(scripts/find_python.sh pytest)" || {
  echo "test.sh: no python3 with pytest found (scripts/setup.sh test installs python3-pytest)" >&2
  exit 1
}
"$python" -m pytest -q -p no:cacheprovider scripts

stage "build (Release)"
# The Python package's module (python/, docs/python.md) is built in the same build dir, over the
# same static libraries (compiled once, as position-independent code), for a python3 that can also
# run its tests and example notebook (ctest python.pytest, python.notebook); ctest python.wheel
# builds the wheel over those libraries and installs it into a fresh virtual environment.
nb_python="$(scripts/find_python.sh pytest nbclient nbformat ipykernel)" || {
  echo "test.sh: no python3 with pytest, nbclient, nbformat and ipykernel (scripts/setup.sh test)" >&2
  exit 1
}
nb_python="$(command -v "$nb_python")"
# ON explicitly: scripts/run.sh configures the same build dir without tests and benchmarks.
scripts/build.sh build -DBUILD_TESTING=ON -DVRAMPLAN_BUILD_BENCH=ON -DVRAMPLAN_BUILD_PYTHON=ON \
  -DPython_EXECUTABLE="$nb_python"
stage "tests (Release)"
ctest --test-dir build --output-on-failure -j"$(nproc)"

stage "build under AddressSanitizer + UndefinedBehaviorSanitizer (clang, with the fuzz program)"
# One sanitizer build serves the tests and the fuzz program: clang 14 with libFuzzer's coverage
# hooks (VRAMPLAN_FUZZ), which compiles the sanitized code in about 0.6 of GCC's time and saves
# the third build of the core a separate build-fuzz took (docs/reliability.md).
scripts/build.sh build-asan -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_COMPILER=clang++-14 \
  -DVRAMPLAN_SANITIZE=ON -DVRAMPLAN_FUZZ=ON -DBUILD_TESTING=ON -DVRAMPLAN_BUILD_BENCH=OFF
stage "tests under AddressSanitizer + UndefinedBehaviorSanitizer"
# Every test that runs our C++ code (unit, CLI, API); not the browser test (the same server
# paths as the API tests, at several times the time under the sanitizers), the web app's own unit
# tests or the layout check (no C++ runs in either; the Release stage ran all three).
ASAN_OPTIONS=detect_leaks=1 ctest --test-dir build-asan --output-on-failure -j"$(nproc)" \
  -E '^(browser\.ui|web\.unit|structure\.layout)$'

stage "fuzz every parser briefly (regression inputs first; the long campaign is by hand)"
# In build-asan: its libraries already carry the fuzzer's coverage hooks, so only the fuzz
# program is compiled and linked here.
VRAMPLAN_FUZZ_DIR=build-asan scripts/fuzz.sh "${VRAMPLAN_FUZZ_SECONDS:-5}"

stage "benchmark (numbers only)"
build/estimate_bench --benchmark_min_time=0.05
build/planner_bench --benchmark_min_time=0.05
build/step_time_bench --benchmark_min_time=0.05
PYTHONPATH=build/python "$nb_python" bench/python_estimate_bench.py --seconds 0.1

stage "load test of vramplan serve (numbers only)"
bench/load_test.sh build/vramplan 2
stage "done"
