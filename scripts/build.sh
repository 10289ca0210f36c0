#!/usr/bin/env bash
# Configures and builds vramplan into build/ (or $1). Extra arguments go to cmake.
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
cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo "${launcher[@]}" "$@" >/dev/null
cmake --build "$dir" -j"$(nproc)"
