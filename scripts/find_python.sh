#!/usr/bin/env bash
# Prints the first python3 that can import every MODULE given: $PYTHON, then the one on PATH,
# then Debian's (a pyenv or venv python3 on PATH often lacks the Debian packages that
# scripts/setup.sh installs, such as python3-matplotlib and python3-pytest).
#
# usage: scripts/find_python.sh MODULE...   (exit 1 when no python3 has them all)
set -euo pipefail
imports="$(printf 'import %s;' "$@")"
for candidate in ${PYTHON:+"$PYTHON"} python3 /usr/bin/python3; do
  if command -v "$candidate" >/dev/null 2>&1 && "$candidate" -c "$imports" 2>/dev/null; then
    echo "$candidate"
    exit 0
  fi
done
exit 1
