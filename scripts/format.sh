#!/usr/bin/env bash
# clang-format over the C++ sources: rewrites them, or with --check fails on any difference.
set -euo pipefail
cd "$(dirname "$0")/.."
files=$(git ls-files '*.cc' '*.h' 2>/dev/null || find src include bench -name '*.cc' -o -name '*.h')
if [ "${1:-}" = "--check" ]; then
  clang-format --dry-run --Werror $files
else
  clang-format -i $files
fi
