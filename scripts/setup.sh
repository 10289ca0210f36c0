#!/usr/bin/env bash
# Installs what vramplan needs on Debian 12, skipping what is already there. Safe to run again.
# Needs root (or sudo) only when something is missing.
#
# usage: scripts/setup.sh [run|test]
#   run   building and running the program and its web UI (what scripts/run.sh needs)
#   test  run, plus the test, benchmark, format and accuracy-report tools (scripts/test.sh);
#         the default, so that a bare scripts/setup.sh still installs everything
set -euo pipefail

profile="${1:-test}"
run_packages=(build-essential cmake ninja-build pkg-config nlohmann-json3-dev libcli11-dev libfmt-dev
              libcpp-httplib-dev libcurl4-openssl-dev libyaml-cpp-dev libtomlplusplus-dev ccache)
# GoogleTest and Benchmark for the C++ tests, chromium for the browser tests, wrk and curl for the
# load and API tests, openssl for the Hub fixture's certificate, python3 with matplotlib for the
# accuracy report, pytest and black for the Python scripts' tests and format check; pybind11 and
# python3-dev for the Python package's module (python/, docs/python.md), python3-venv for the
# fresh environment its wheel is installed into (tests/python/wheel_test.sh), nbclient, nbformat
# and ipykernel to run its example notebook; Debian 12's clang 14 with its runtime libraries
# (libFuzzer, ASan, UBSan) for the fuzz targets (scripts/fuzz.sh).
test_packages=(libgtest-dev libgmock-dev libbenchmark-dev clang-format chromium wrk curl openssl
               python3 python3-matplotlib python3-pytest black pybind11-dev python3-dev python3-venv
               python3-nbclient python3-nbformat python3-ipykernel clang-14 libclang-rt-14-dev)
case "$profile" in
  run) packages=("${run_packages[@]}") ;;
  test) packages=("${run_packages[@]}" "${test_packages[@]}") ;;
  *)
    echo "setup.sh: unknown profile '$profile'; accepted: run (build and run), test (run + tests)" >&2
    exit 2
    ;;
esac
# The web front end is built with Node.js and npm; Debian's nodejs is used only when none is
# installed (the front end needs Node 18 or newer).
command -v node >/dev/null 2>&1 || packages+=(nodejs npm)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  sudo_cmd=""
  [ "$(id -u)" -ne 0 ] && sudo_cmd="sudo"
  $sudo_cmd apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
