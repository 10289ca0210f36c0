#!/usr/bin/env bash
# `vramplan plan` through the real binary: the table and the JSON (stable keys, ordering, each
# candidate's scenario reproduced by `vramplan estimate --scenario`), fixed dimensions, the
# explanation when nothing fits, and bad input (exit 2, the flag named).
#
# usage: bash tests/cli/plan_test.sh path/to/vramplan
set -u
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

PLAN8B=(plan --model Llama-3.1-8B --gpus 16 --seq-len 4096 --global-batch 128)

# ---------------------------------------------------------------------------------------------
case_name "help"
run plan --help
expect_exit 0
expect_stdout_contains "--gpus-per-node"
expect_stdout_contains "--headroom"
expect_stdout_contains "--top"

# ---------------------------------------------------------------------------------------------
case_name "table: top layouts, limit, why"
run "${PLAN8B[@]}" --top 3
expect_exit 0
expect_stdout_contains "Llama-3.1-8B"
expect_stdout_contains "limit:"
expect_stdout_matches "searched [0-9,]+ layouts"
expect_stdout_matches "^ +1  tp[0-9]"
expect_stdout_matches "^ +3  tp[0-9]"
expect_stdout_not_contains "  4  tp"
expect_stdout_contains "Why: "
expect_stdout_contains "Pure data parallel"
expect_no_nonfinite
expect_stderr_empty

# ---------------------------------------------------------------------------------------------
case_name "JSON: stable keys, sorted by throughput, within the limit"
run "${PLAN8B[@]}" --top 5 --format json
expect_exit 0
expect_json_sane
expect_json "d['evaluated'] > 1000 and d['evaluated'] == d['stats']['evaluated']"
expect_json "len(d['candidates']) == 5"
expect_json "all(k in c for c in d['candidates'] for k in ('layout', 'parallel', 'peak', 'tokens_per_s_per_gpu', 'mfu', 'step_time_s', 'scenario'))"
expect_json "all(k in c['peak'] for c in d['candidates'] for k in ('stage', 'allocated_bytes', 'reserved_bytes', 'device_bytes'))"
expect_json "all(a['tokens_per_s_per_gpu'] >= b['tokens_per_s_per_gpu'] for a, b in zip(d['candidates'], d['candidates'][1:]))"
expect_json "all(c['peak']['device_bytes'] <= d['limit_bytes'] for c in d['candidates'])"
expect_json "all(0 < c['mfu'] < 1 and c['step_time_s'] > 0 for c in d['candidates'])"
expect_json "d['why'].startswith(d['candidates'][0]['layout'])"
expect_json "d['closest_miss'] is None and d['suggestions'] == []"
expect_json "{f['name'] for f in d['families']} >= {'pure data parallel (DP, ZeRO, FSDP)', 'context parallel', 'full recomputation'}"
cp "$RUN_OUT_FILE" "$TEST_TMP/plan.json"

# Each candidate's scenario, fed back to `vramplan estimate`, gives the same peak.
for i in 0 1 4; do
  case_name "candidate $i reproduced by estimate --scenario"
  python3 -c "import json,sys; d=json.load(open(sys.argv[1])); json.dump(d['candidates'][$i]['scenario'], open(sys.argv[2],'w'))" \
    "$TEST_TMP/plan.json" "$TEST_TMP/candidate.json"
  want=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['candidates'][$i]['peak']['device_bytes'])" "$TEST_TMP/plan.json")
  run estimate --scenario "$TEST_TMP/candidate.json" --format json
  expect_exit 0
  expect_json "d['peak']['device_bytes'] == $want"
done

# ---------------------------------------------------------------------------------------------
case_name "JSON: the space of fitting layouts with --space (docs/planner.md)"
run "${PLAN8B[@]}" --top 3 --space 200 --format json
expect_exit 0
expect_json "d['space']['fitting'] == d['stats']['fitting'] - d['stats']['untimed']"
expect_json "d['space']['shown'] == len(d['space']['points']) <= 200 + len(d['space']['pareto']) + 3"
expect_json "all(d['space']['points'][i]['pareto'] for i in d['space']['pareto'])"
expect_json "[p['rank'] for p in d['space']['points'] if p['rank']] == [1, 2, 3]"
expect_json "all(p['device_bytes'] <= d['limit_bytes'] for p in d['space']['points'])"
cp "$RUN_OUT_FILE" "$TEST_TMP/space.json"
case_name "a point of the space reproduced by estimate --scenario"
python3 -c "import json,sys; s=json.load(open(sys.argv[1]))['space']; p=[q for q in s['points'] if not q['rank']][-1]; json.dump({**s['base_scenario'], **p['scenario']}, open(sys.argv[2],'w')); print(p['device_bytes'], file=open(sys.argv[3],'w'))" \
  "$TEST_TMP/space.json" "$TEST_TMP/point.json" "$TEST_TMP/point_bytes"
run estimate --scenario "$TEST_TMP/point.json" --format json
expect_exit 0
expect_json "d['peak']['device_bytes'] == $(cat "$TEST_TMP/point_bytes")"
run "${PLAN8B[@]}" --space -1
expect_exit 2
expect_stderr_contains "space"

# ---------------------------------------------------------------------------------------------
case_name "fixed dimensions are held"
run "${PLAN8B[@]}" --tp 2 --zero 1 --micro-batch 2 --format json --top 10
expect_exit 0
expect_json "len(d['candidates']) > 0"
expect_json "all(c['parallel']['tp'] == 2 and c['parallel']['zero'] == 1 and c['micro_batch'] == 2 for c in d['candidates'])"

case_name "more headroom, less memory allowed"
run "${PLAN8B[@]}" --headroom 0.5 --format json --top 50
expect_exit 0
expect_json "d['limit_bytes'] <= d['gpu']['usable_bytes'] * 0.5"
expect_json "all(c['peak']['device_bytes'] <= d['limit_bytes'] for c in d['candidates'])"

case_name "one thread gives the same answer"
run "${PLAN8B[@]}" --threads 1 --format json --top 5
expect_exit 0
cp "$RUN_OUT_FILE" "$TEST_TMP/one-thread.json"
check "same candidates on 1 thread as on all" python3 -c "
import json, sys
a = json.load(open(sys.argv[1])); b = json.load(open(sys.argv[2]))
sys.exit(0 if [c['layout'] for c in a['candidates']] == [c['layout'] for c in b['candidates']] else 1)
" "$TEST_TMP/plan.json" "$TEST_TMP/one-thread.json"

case_name "MoE: expert parallel family and layouts"
run plan --model Qwen3-30B-A3B --gpus 32 --seq-len 4096 --global-batch 256 --format json --top 3
expect_exit 0
expect_json "any(f['name'] == 'expert parallel' for f in d['families'])"
expect_json "len(d['candidates']) == 3"

# ---------------------------------------------------------------------------------------------
case_name "nothing fits: exit 0, the closest miss and suggestions"
# Without the offload pass: with it, ZeRO-Infinity (NVMe) fits the 405B on 8 GPUs.
run plan --model Llama-3.1-405B --gpus 8 --seq-len 8192 --global-batch 64 --offload-search never
expect_exit 0
expect_stdout_contains "No layout fits."
expect_stdout_matches "The closest, tp[0-9].*needs [0-9.]+ GiB per GPU: [0-9.]+ GiB over the limit"
expect_stdout_contains "more GPUs (--gpus)"
run plan --model Llama-3.1-405B --gpus 8 --seq-len 8192 --global-batch 64 --offload-search never \
  --format json
expect_exit 0
expect_json "d['candidates'] == [] and d['closest_miss']['over_bytes'] > 0"
expect_json "len(d['suggestions']) >= 2"

# ---------------------------------------------------------------------------------------------
case_name "bad input: exit 2 naming the flag"
run plan --model Llama-3.1-8B --global-batch 128
expect_exit 2
expect_stderr_contains "--gpus"
run plan --model Llama-3.1-8B --gpus 16
expect_exit 2
expect_stderr_contains "--global-batch"
run "${PLAN8B[@]}" --headroom 1.5
expect_exit 2
expect_stderr_contains "--headroom = 1.5"
run "${PLAN8B[@]}" --top 0
expect_exit 2
expect_stderr_contains "--top = 0"
run "${PLAN8B[@]}" --gpus-per-node 0
expect_exit 2
expect_stderr_contains "--gpus-per-node = 0"
run "${PLAN8B[@]}" --tp 3
expect_exit 2
expect_stderr_contains "--tp = 3"
run "${PLAN8B[@]}" --tp 4 --max-tp 2
expect_exit 2
expect_stderr_contains "--tp = 4"
expect_stderr_contains "max_tp = 2"
run plan --model Llama-3.1-8B --gpus abc --global-batch 128
expect_exit 2
expect_stderr_contains "--gpus = abc"
run plan --model No-Such-Model --gpus 8 --global-batch 8
expect_exit 2
expect_stderr_contains "--model = No-Such-Model"
run "${PLAN8B[@]}" --gpu no-such-gpu
expect_exit 2
expect_stderr_contains "--gpu = no-such-gpu"
expect_stderr_lines 1

finish
