#!/usr/bin/env bash
# The formatters: clang-format over the C++ sources, black over the Python scripts (scripts/,
# settings in scripts/pyproject.toml) and the Python package (python/, settings in pyproject.toml). Rewrites the files, or with --check fails on any difference.
set -euo pipefail
cd "$(dirname "$0")/.."
files=$(git ls-files '*.cc' '*.h' 2>/dev/null || find src include bench -name '*.cc' -o -name '*.h')
if [ "${1:-}" = "--check" ]; then
  clang-format --dry-run --Werror $files
  black --quiet --check scripts
  black --quiet --check python
else
  clang-format -i $files
  black --quiet scripts
  black --quiet python
fi
