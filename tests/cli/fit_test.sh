#!/usr/bin/env bash
# `vramplan fit` through the real binary (docs/fit.md): each question's table and JSON (stable
# keys, the answer reproduced by `vramplan estimate --scenario`, the next value over the limit),
# the "nothing fits" answer, and bad input (exit 2 naming the flag).
#
# usage: bash tests/cli/fit_test.sh path/to/vramplan
set -u
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

L8B=(--model Llama-3.1-8B --gpu h100-80gb --dp 8 --zero 3 --recompute full)

# ---------------------------------------------------------------------------------------------
case_name "help"
run fit --help
expect_exit 0
expect_stdout_contains "micro-batch, seq-len, global-batch"
expect_stdout_contains "--up-to"
expect_stdout_contains "--seq-multiple"
expect_stdout_contains "--headroom"

# ---------------------------------------------------------------------------------------------
case_name "micro-batch: table"
run fit micro-batch "${L8B[@]}" --seq-len 8192
expect_exit 0
expect_stdout_matches "^Answer: micro_batch = [0-9]+"
expect_stdout_contains "does not fit"
expect_stdout_contains "per micro-batch"
expect_stdout_contains "limit:"
expect_no_nonfinite
expect_stderr_empty

case_name "micro-batch: JSON, reproduced by estimate"
run fit micro-batch "${L8B[@]}" --seq-len 8192 --format json
expect_exit 0
expect_json_sane
expect_json "set(d) >= {'question', 'model', 'gpu', 'headroom', 'limit_bytes', 'fits', 'value', 'unbounded', 'step', 'up_to', 'bounded_by', 'at', 'next', 'miss_bytes', 'limiting', 'note', 'evaluated', 'seconds', 'scenario'}"
expect_json "d['question'] == 'micro_batch' and d['fits'] and d['bounded_by'] == 'memory'"
expect_json "d['at']['device_bytes'] <= d['limit_bytes'] < d['next']['device_bytes']"
expect_json "d['next']['value'] == d['value'] + 1 and d['miss_bytes'] == d['next']['device_bytes'] - d['limit_bytes']"
expect_json "0 < d['evaluated'] < 20"
cp "$RUN_OUT_FILE" "$TEST_TMP/mb.json"
python3 -c "import json,sys; json.dump(json.load(open(sys.argv[1]))['scenario'], open(sys.argv[2],'w'))" \
  "$TEST_TMP/mb.json" "$TEST_TMP/mb_scenario.json"
want=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['at']['device_bytes'])" "$TEST_TMP/mb.json")
value=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['value'])" "$TEST_TMP/mb.json")
run estimate --scenario "$TEST_TMP/mb_scenario.json" --format json
expect_exit 0
expect_json "d['peak']['device_bytes'] == $want"
case_name "micro-batch: one more does not fit (estimate)"
run estimate --scenario "$TEST_TMP/mb_scenario.json" --micro-batch $((value + 1)) --global-batch $(((value + 1) * 8)) --format json
expect_exit 0
expect_json "d['peak']['device_bytes'] > $(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['limit_bytes'])" "$TEST_TMP/mb.json")"

# ---------------------------------------------------------------------------------------------
case_name "seq-len: the layout's step"
run fit seq-len --model Llama-3.1-8B --tp 2 --sequence-parallel --cp 2 --dp 2 --zero 3 --recompute full --seq-multiple 1024 --format json
expect_exit 0
expect_json "d['step'] == 1024 and d['value'] % 1024 == 0 and d['fits']"
expect_json "d['scenario']['seq_len'] == d['value'] and d['next']['seq_len'] == d['value'] + 1024"
run fit seq-len --model Llama-3.1-8B --tp 4 --sequence-parallel --cp 3 --dp 2 --zero 3 --format json
expect_exit 0
expect_json "d['step'] == 12"

# ---------------------------------------------------------------------------------------------
case_name "global-batch: 1F1B is not bounded by memory"
run fit global-batch --model Llama-3.1-8B --tp 2 --pp 4 --dp 1 --format json
expect_exit 0
expect_json "d['fits'] and d['unbounded'] and d['bounded_by'] == 'schedule' and 'any multiple' in d['note']"
run fit global-batch --model Llama-3.1-8B --tp 2 --pp 4 --dp 1 --up-to 1000 --format json
expect_exit 0
expect_json "d['bounded_by'] == 'cap' and d['value'] <= 1000"
case_name "global-batch: GPipe keeps every microbatch"
run fit global-batch --model Llama-3.1-8B --tp 2 --pp 4 --dp 1 --schedule gpipe --micro-batch 2 --format json
expect_exit 0
expect_json "d['bounded_by'] == 'memory' and d['value'] % 2 == 0 and d['micro_batch'] == 2"

# ---------------------------------------------------------------------------------------------
case_name "gpus: the smallest count, its layout reproduced"
run fit gpus --model Llama-3.1-8B --gpu-memory-gib 8 --seq-len 2048 --global-batch 96 --format json
expect_exit 0
expect_json "d['fits'] and d['value'] > 8 and d['layout'] and d['scenario']['gpus'] == d['value']"
expect_json "[c['gpus'] for c in d['counts']][:4] == [1, 2, 4, 8]"
expect_json "[c['gpus'] for c in d['counts'] if c['fits']][0] == d['value']"
expect_json "all(not c['fits'] for c in d['counts'] if c['gpus'] < d['value'])"
cp "$RUN_OUT_FILE" "$TEST_TMP/gpus.json"
python3 -c "import json,sys; json.dump(json.load(open(sys.argv[1]))['scenario'], open(sys.argv[2],'w'))" \
  "$TEST_TMP/gpus.json" "$TEST_TMP/gpus_scenario.json"
want=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['at']['device_bytes'])" "$TEST_TMP/gpus.json")
run estimate --scenario "$TEST_TMP/gpus_scenario.json" --format json
expect_exit 0
expect_json "d['peak']['device_bytes'] == $want"
run fit gpus --model Llama-3.1-8B --gpu-memory-gib 8 --seq-len 2048 --global-batch 96
expect_exit 0
expect_stdout_matches "^Answer: gpus = [0-9]+ \(tp"
expect_stdout_contains "GPUs  fits"

# ---------------------------------------------------------------------------------------------
case_name "nothing fits: exit 0, fits false, what the smallest needs"
run fit micro-batch --model Llama-3.1-70B --gpu h100-80gb --format json
expect_exit 0
expect_json "d['fits'] is False and d['value'] is None and d['bounded_by'] == 'nothing' and d['scenario'] is None"
expect_json "d['limiting'].startswith('nothing fits: micro-batch 1 needs') and d['miss_bytes'] > 0"
run fit micro-batch --model Llama-3.1-70B --gpu h100-80gb
expect_exit 0
expect_stdout_contains "Nothing fits."

# ---------------------------------------------------------------------------------------------
case_name "bad input: exit 2 naming the flag"
run fit --model Llama-3.1-8B
expect_exit 2
expect_stderr_contains "question"
run fit batch --model Llama-3.1-8B
expect_exit 2
expect_stderr_contains "question"
run fit micro-batch --model Llama-3.1-8B --micro-batch 2
expect_exit 2
expect_stderr_contains "--micro-batch = 2"
run fit micro-batch --model Llama-3.1-8B --up-to 0
expect_exit 2
expect_stderr_contains "--up-to = 0"
run fit micro-batch --model Llama-3.1-8B --headroom 1.5
expect_exit 2
expect_stderr_contains "--headroom = 1.5"
run fit seq-len --model Llama-3.1-8B --max-tp 4
expect_exit 2
expect_stderr_contains "--max-tp = 4"
run fit seq-len --model Llama-3.1-8B --seq-multiple 0
expect_exit 2
expect_stderr_contains "--seq-multiple = 0"
run fit gpus --model Llama-3.1-8B
expect_exit 2
expect_stderr_contains "--global-batch"
run fit gpus --model Llama-3.1-8B --global-batch 64 --gpus 8
expect_exit 2
expect_stderr_contains "--gpus = 8"
run fit micro-batch --model Llama-3.1-8B --tp 3
expect_exit 2
expect_stderr_contains "--tp = 3"

finish
