# Helpers for the command-line tests (tests/cli/*_test.sh), sourced after `set -u`.
#
# A test script is run as `bash tests/cli/foo_test.sh path/to/vramplan` (ctest does this, with
# VRAMPLAN_SOURCE_DIR set to the source tree). It calls `run ARGS...` to execute the binary, then
# expect_* to check the captured exit code, stdout and stderr, and ends with `finish`, which prints
# exactly one line "N passed, M failed" and exits non-zero when any check failed.
#
#   case_name "tp must divide the heads"   # label shown with each failure (optional)
#   run estimate --model Llama-3.1-8B --tp 3
#   expect_exit 2
#   expect_stderr_contains "--tp = 3"
#   finish

VRAMPLAN="${1:-}"
if [[ -z "$VRAMPLAN" || ! -x "$VRAMPLAN" ]]; then
  echo "usage: bash $0 path/to/vramplan (got '${VRAMPLAN}')" >&2
  exit 2
fi
VRAMPLAN="$(cd "$(dirname "$VRAMPLAN")" && pwd)/$(basename "$VRAMPLAN")"  # tests may cd
VRAMPLAN_SOURCE_DIR="${VRAMPLAN_SOURCE_DIR:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}"
export NO_COLOR=1  # the table is compared as text

PASSED=0
FAILED=0
CASE=""
RUN_CMD=""  # the last command, quoted so it can be pasted into a shell
RUN_RC=0
RUN_OUT=""
RUN_ERR=""
TEST_TMP="$(mktemp -d "${TMPDIR:-/tmp}/vramplan-cli-test.XXXXXX")"
trap 'rm -rf "$TEST_TMP"' EXIT
RUN_OUT_FILE="$TEST_TMP/stdout"
RUN_ERR_FILE="$TEST_TMP/stderr"

# Seconds one run may take before it counts as hung (exit code 124).
RUN_TIMEOUT="${RUN_TIMEOUT:-60}"

case_name() { CASE="$*"; }

# run ARGS...: runs vramplan with ARGS, capturing stdout, stderr and the exit code.
run() {
  RUN_CMD="vramplan$(printf ' %q' "$@")"
  timeout "$RUN_TIMEOUT" "$VRAMPLAN" "$@" >"$RUN_OUT_FILE" 2>"$RUN_ERR_FILE"
  RUN_RC=$?
  RUN_OUT="$(cat "$RUN_OUT_FILE")"
  RUN_ERR="$(cat "$RUN_ERR_FILE")"
}

# run_with_input FILE ARGS...: like run, with FILE on standard input.
run_with_input() {
  local input="$1"
  shift
  RUN_CMD="vramplan$(printf ' %q' "$@") < $input"
  timeout "$RUN_TIMEOUT" "$VRAMPLAN" "$@" <"$input" >"$RUN_OUT_FILE" 2>"$RUN_ERR_FILE"
  RUN_RC=$?
  RUN_OUT="$(cat "$RUN_OUT_FILE")"
  RUN_ERR="$(cat "$RUN_ERR_FILE")"
}

# Shortens captured output for failure reports.
_excerpt() {
  local text="$1"
  if ((${#text} > 1500)); then
    printf '%s\n... (%d characters in all)' "${text:0:1500}" "${#text}"
  else
    printf '%s' "$text"
  fi
}

pass() { PASSED=$((PASSED + 1)); }

# fail WHAT EXPECTED ACTUAL: records a failed check and prints the command with both sides.
fail() {
  FAILED=$((FAILED + 1))
  {
    echo "FAIL${CASE:+ [$CASE]}: $1"
    echo "  command:  $RUN_CMD"
    echo "  expected: $2"
    echo "  actual:   $(_excerpt "$3" | sed '2,$s/^/            /')"
    echo "  exit code $RUN_RC; stderr: $(_excerpt "$RUN_ERR" | sed '2,$s/^/            /')"
  } >&2
}

# check DESCRIPTION COMMAND...: passes when COMMAND succeeds (for ad-hoc conditions).
check() {
  local what="$1"
  shift
  if "$@"; then pass; else fail "$what" "condition holds" "it does not"; fi
}

expect_exit() {
  if [[ "$RUN_RC" == "$1" ]]; then pass; else fail "exit code" "$1" "$RUN_RC"; fi
}

expect_stdout_contains() {
  if [[ "$RUN_OUT" == *"$1"* ]]; then
    pass
  else
    fail "stdout contains" "$1" "$RUN_OUT"
  fi
}

expect_stdout_not_contains() {
  if [[ "$RUN_OUT" != *"$1"* ]]; then
    pass
  else
    fail "stdout does not contain" "$1" "$RUN_OUT"
  fi
}

expect_stderr_contains() {
  if [[ "$RUN_ERR" == *"$1"* ]]; then
    pass
  else
    fail "stderr contains" "$1" "$RUN_ERR"
  fi
}

expect_stdout_empty() {
  if [[ -z "$RUN_OUT" ]]; then pass; else fail "stdout is empty" "(nothing)" "$RUN_OUT"; fi
}

expect_stderr_empty() {
  if [[ -z "$RUN_ERR" ]]; then pass; else fail "stderr is empty" "(nothing)" "$RUN_ERR"; fi
}

# expect_stderr_lines N: stderr holds exactly N lines (one error message = one line).
expect_stderr_lines() {
  local lines
  lines=$(printf '%s' "$RUN_ERR" | grep -c '')
  if [[ "$lines" == "$1" ]]; then
    pass
  else
    fail "stderr has $1 line(s)" "$1 line(s)" "$lines line(s): $RUN_ERR"
  fi
}

# expect_stdout_matches REGEX / expect_stderr_matches REGEX: extended regular expressions.
expect_stdout_matches() {
  if printf '%s' "$RUN_OUT" | grep -Eq -- "$1"; then
    pass
  else
    fail "stdout matches /$1/" "a match" "$RUN_OUT"
  fi
}

expect_stderr_matches() {
  if printf '%s' "$RUN_ERR" | grep -Eq -- "$1"; then
    pass
  else
    fail "stderr matches /$1/" "a match" "$RUN_ERR"
  fi
}

# Neither stream shows a non-finite number ("nan", "-nan", "inf", "infinity", any case).
expect_no_nonfinite() {
  local hits
  hits=$(printf '%s\n%s' "$RUN_OUT" "$RUN_ERR" | grep -Eiwo -- '-?(nan|inf|infinity)' | head -5)
  if [[ -z "$hits" ]]; then
    pass
  else
    fail "no nan/inf in the output" "no nan, inf or infinity" "found: $hits"
  fi
}

# Python snippet that loads the captured stdout as JSON into `d` (with NaN/Infinity allowed, so
# that they can be reported rather than crash the parser).
_PY_LOAD='import json, math, sys
try:
    with open(sys.argv[1], encoding="utf-8") as f:
        d = json.load(f)
except ValueError as e:
    print(f"stdout is not JSON ({e})")
    sys.exit(1)
'

# expect_json PYTHON_EXPRESSION: the last stdout parses as JSON and the expression over `d` is
# true. On failure the expression is shown with the exception it raised, or "false".
expect_json() {
  local result
  if result=$(python3 -c "$_PY_LOAD
expr = sys.argv[2]
try:
    ok = eval('(' + expr + '\n)', {'d': d, 'math': math, 'json': json})
except Exception as e:  # a missing key is a failure too
    print(f'{type(e).__name__}: {e}')
    sys.exit(1)
if not ok:
    print('false')
    sys.exit(1)
" "$RUN_OUT_FILE" "$1" 2>&1); then
    pass
  else
    fail "JSON: $1" "true" "$result"
  fi
}

# json_value PYTHON_EXPRESSION: prints the expression's value over the last stdout's JSON (empty
# and status 1 when it cannot be evaluated).
json_value() {
  python3 -c "$_PY_LOAD
print(eval('(' + sys.argv[2] + '\n)', {'d': d, 'math': math}))" "$RUN_OUT_FILE" "$1" 2>/dev/null
}

# Every number in the JSON output is finite and no "*bytes" value is negative.
expect_json_sane() {
  local result
  if result=$(python3 -c "$_PY_LOAD
bad = []
def walk(x, path):
    if isinstance(x, dict):
        for k, v in x.items():
            walk(v, path + '.' + k)
    elif isinstance(x, list):
        for i, v in enumerate(x):
            walk(v, f'{path}[{i}]')
    elif isinstance(x, (int, float)) and not isinstance(x, bool):
        if not math.isfinite(x) or (path.endswith('bytes') and x < 0):
            bad.append(f'{path} = {x}')
walk(d, '')
print('; '.join(bad[:5]))
sys.exit(1 if bad else 0)
" "$RUN_OUT_FILE" 2>&1); then
    pass
  else
    fail "JSON numbers finite and byte counts non-negative" "none bad" "$result"
  fi
}

# finish: the summary line, and the exit status of the whole script.
finish() {
  echo "$PASSED passed, $FAILED failed"
  ((FAILED == 0)) && exit 0
  exit 1
}
