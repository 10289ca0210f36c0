#!/usr/bin/env bash
# `vramplan quick` through the real binary (docs/quick.md): the table, JSON and CSV forms, the
# shipped examples beside the full estimate of the matching architecture, parameter counts as
# users write them, and bad input (exit code 2, one stderr line naming the flag).
#
# usage: bash tests/cli/quick_test.sh path/to/vramplan
set -u
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

MEDIUM=(--params 700M --layers 32 --hidden 4096 --batch 8 --seq-len 2048 --grad-dtype fp32)

case_name "table"
run quick "${MEDIUM[@]}"
expect_exit 0
expect_stdout_contains "vramplan quick · training · 700,000,000 parameters, 32 layers × 4096"
for row in weights "master weights" gradients "optimizer states" activations "KV cache" overhead total "full estimate"; do
  expect_stdout_contains "  $row "
done
expect_stdout_contains "P·bits/8 = 700,000,000·16/8 (bf16)"
expect_stdout_contains "Adam m and v: 2·4·P = 2·4·700,000,000"
expect_stdout_contains "sources"
expect_no_nonfinite
expect_stderr_empty

case_name "json: rows add up, each row has its formula and source"
run quick "${MEDIUM[@]}" --activation-multiplier 10 --format json
expect_exit 0
expect_json_sane
expect_json "[r['component'] for r in d['rows']] == ['weights', 'master weights', 'gradients', 'optimizer states', 'activations', 'KV cache', 'overhead']"
expect_json "d['total_bytes'] == sum(r['bytes'] for r in d['rows'])"
expect_json "all(r['formula'] and r['source'] for r in d['rows'])"
expect_json "d['rows'][0]['bytes'] == 2 * 700000000 and d['rows'][2]['bytes'] == 4 * 700000000"
expect_json "d['rows'][4]['bytes'] == 8 * 2048 * 4096 * 32 * 10 * 2"
expect_json "d['activation_multiplier'] == {'value': 10, 'source': 'given'}"
expect_json "d['example'] is None and d['calculator_gib'] is None"
expect_json "d['full_estimate']['parameters'] == 6738415616 and d['full_estimate']['command'] == 'estimate'"
total=$(json_value "d['total_bytes']")

case_name "parameter counts: 0.7B = 700M = 700000000 = 7e8"
for p in 0.7B 700000000 7e8 700m; do
  run quick --params "$p" --layers 32 --hidden 4096 --batch 8 --seq-len 2048 --grad-dtype fp32 --activation-multiplier 10 --format json
  expect_exit 0
  expect_json "d['inputs']['params'] == 700000000 and d['total_bytes'] == $total"
done
run quick --params 1.3B --layers 40 --hidden 5120 --format json
expect_json "d['inputs']['params'] == 1300000000"
run quick --params 1300M --layers 40 --hidden 5120 --format json
expect_json "d['inputs']['params'] == 1300000000"

case_name "csv"
run quick "${MEDIUM[@]}" --format csv
expect_exit 0
expect_stdout_contains "component,bytes,gib,counts_toward,formula,source"
expect_stdout_matches "^weights,1400000000,1\.3039,allocated,"
expect_stdout_matches "total,[0-9]+,"
check "7 rows and the total" test "$(printf '%s\n' "$RUN_OUT" | wc -l)" -eq 9

case_name "examples are listed and runnable by name"
run quick --list-examples
expect_exit 0
for name in medium-training serving large-finetune; do expect_stdout_contains "$name"; done
run quick --list-examples --format json
expect_json "[e['calculator_gib'] for e in d] == [44.5, 8.37, 66.7]"
for name in medium-training serving large-finetune; do
  run quick --example "$name" --format json
  expect_exit 0
  expect_json_sane
  expect_json "d['example'] == '$name' and d['calculator_gib'] > 0 and d['full_estimate']['total_bytes'] > 0"
done
run quick --example serving --format json
expect_json "d['inputs']['mode'] == 'inference' and d['inputs']['kv_cache'] and d['inputs']['weight_dtype'] == 'int8'"
expect_json "d['rows'][5]['bytes'] == 4 * 1024 * 4096 * 32 * 2 * 2 and d['rows'][2]['bytes'] == 0"
expect_json "d['full_estimate']['command'] == 'infer'"
run quick --example serving --width 200
expect_stdout_contains "calculator"
expect_stdout_contains "8.37"
expect_stdout_contains "vramplan infer"

case_name "a flag beside the example wins"
run quick --example medium-training --batch 1 --format json
expect_json "d['inputs']['batch'] == 1 and d['inputs']['layers'] == 32"

case_name "no master weights; another optimizer"
run quick "${MEDIUM[@]}" --activation-multiplier 10 --no-master-weights --optimizer sgd-momentum --optimizer-dtype bf16 --format json
expect_json "d['rows'][1]['bytes'] == 0 and d['rows'][3]['bytes'] == 2 * 700000000"
expect_json "d['inputs']['master_weights'] is False and d['inputs']['optimizer'] == 'sgd-momentum'"

case_name "inference leaves out what it does not keep"
run quick --example serving --width 200
expect_stdout_contains "batch 4, seq_len 1024, weights int8, activations bf16, checkpoint factor 1, KV cache 1024 tokens in bf16"
expect_stdout_not_contains "grads"

case_name "checkpointing and the KV cache"
run quick "${MEDIUM[@]}" --activation-multiplier 10 --checkpoint-factor 0.5 --format json
expect_json "d['rows'][4]['bytes'] == 8 * 2048 * 4096 * 32 * 10 * 2 // 2"
run quick "${MEDIUM[@]}" --kv-cache --cache-tokens 4096 --kv-dtype fp8 --format json
expect_json "d['rows'][5]['bytes'] == 8 * 4096 * 4096 * 32 * 2"

case_name "bad input names the flag, the value and what is accepted"
bad() {
  local needle="$1"
  shift
  run quick "$@"
  expect_exit 2
  expect_stderr_lines 1
  expect_stderr_contains "$needle"
  expect_stdout_empty
}
bad "--params = lots" --params lots --layers 32 --hidden 4096
bad "accepted: a positive parameter count: 700M, 1.3B" --params=-5 --layers 32 --hidden 4096
bad "--params = (not given)" --layers 32 --hidden 4096
bad "--checkpoint-factor = 0" "${MEDIUM[@]}" --checkpoint-factor 0
bad "--activation-multiplier = -1" "${MEDIUM[@]}" --activation-multiplier -1
bad "--weight-dtype = int3" "${MEDIUM[@]}" --weight-dtype int3
bad "--mode = serving" "${MEDIUM[@]}" --mode serving
bad "--hidden = 1000" --params 700M --layers 32 --hidden 1000
bad "--example = huge" --example huge
bad "--layers = x" --params 1B --layers x --hidden 4096

case_name "a hidden size without a matching architecture works with a given multiplier"
run quick --params 700M --layers 32 --hidden 1000 --activation-multiplier 16 --format json
expect_exit 0
expect_json "d['full_estimate'] is None and any('no full estimate' in n for n in d['notes'])"

finish
