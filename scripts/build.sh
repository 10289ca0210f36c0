#!/usr/bin/env bash
# Configures and builds vramplan into build/ (or $1). Extra arguments go to cmake.
#
# usage: [VRAMPLAN_TARGET=NAME] scripts/build.sh [DIR] [CMAKE_ARGS...]
#   VRAMPLAN_TARGET  build only that target (e.g. vramplan, the program alone); default: all
#   VRAMPLAN_SKIP_WEB=1  build without the web UI
# Tests and benchmarks are configured in unless CMAKE_ARGS turn them off
# (-DBUILD_TESTING=OFF -DVRAMPLAN_BUILD_BENCH=OFF). Both are passed on every call, because CMake
# keeps a -D value in its cache: a build dir that scripts/run.sh configured without tests gets
# them back from a plain scripts/build.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
dir="${1:-build}"
shift || true
# The web UI first, so that the program embeds it (vramplan serve). Skipped when npm is missing
# (the server then says how to build the UI), when web/dist is newer than every web source, or
# with VRAMPLAN_SKIP_WEB=1.
if [[ "${VRAMPLAN_SKIP_WEB:-0}" != 1 && -x scripts/build_web.sh ]] && command -v npm >/dev/null 2>&1; then
  if [[ ! -f web/dist/index.html || -n "$(find web \( -path web/node_modules -o -path web/dist \) \
      -prune -o -type f -newer web/dist/index.html -print -quit)" ]]; then
    scripts/build_web.sh || {
      echo "build.sh: the web UI failed to build (VRAMPLAN_SKIP_WEB=1 builds without it)" >&2
      exit 1
    }
  fi
fi
launcher=()
# ccache makes rebuilds in several checkouts (build, build-asan, worktrees) cheap.
command -v ccache >/dev/null 2>&1 && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
# ccache caches files compiled with a precompiled header (cmake/pch.cmake) only when told that
# the header's macros and timestamps may be trusted.
export CCACHE_SLOPPINESS="${CCACHE_SLOPPINESS:-pch_defines,time_macros,include_file_mtime,include_file_ctime}"
# The defaults come before "$@": of two -D for one variable, cmake keeps the later.
cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=Release "${launcher[@]}" \
  -DBUILD_TESTING=ON -DVRAMPLAN_BUILD_BENCH=ON "$@" >/dev/null
target=()
[[ -n "${VRAMPLAN_TARGET:-}" ]] && target=(--target "$VRAMPLAN_TARGET")
cmake --build "$dir" -j"$(nproc)" "${target[@]}"
