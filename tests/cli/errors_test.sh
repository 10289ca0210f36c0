#!/usr/bin/env bash
# Bad input through the real binary: every case exits with code 2, prints nothing on stdout and
# ONE line on stderr that names the field (as the flag the user typed, e.g. --tp), the value
# given and what would be accepted. Also: valid runs never print nan, inf or negative bytes.
#
# usage: bash tests/cli/errors_test.sh path/to/vramplan
set -u
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

LLAMA=(--model Llama-3.1-8B)
# A custom Llama-3.1-8B-shaped model from flags alone (no --model).
custom() {
  local -A f=([hidden-size]=4096 [num-layers]=32 [num-heads]=32 [num-kv-heads]=8
              [ffn-size]=14336 [vocab-size]=128256)
  local override
  for override in "$@"; do f[${override%%=*}]=${override#*=}; done
  local key
  for key in "${!f[@]}"; do printf -- '--%s\n%s\n' "$key" "${f[$key]}"; done
}

# bad_input 'FIELD = VALUE[|FIELD = VALUE...]' ARGS...: runs `vramplan estimate ARGS...` and expects
# exit code 2, an empty stdout and one stderr line "vramplan: error: FIELD = VALUE...; accepted:
# ..." for one of the alternatives given.
bad_input() {
  local spec="$1"
  shift
  case_name "${spec%%|*} <- estimate$(printf " %q" "$@")"
  run estimate "$@"
  expect_exit 2
  expect_stdout_empty
  expect_stderr_lines 1
  expect_stderr_contains "vramplan: error: "
  local alternative found="" alternatives
  IFS='|' read -r -a alternatives <<<"$spec"
  for alternative in "${alternatives[@]}"; do
    [[ "$RUN_ERR" == *"$alternative"* ]] && found=1
  done
  if [[ -n "$found" ]]; then
    pass
  else
    fail "names the field and value" "one of: $spec" "$RUN_ERR"
  fi
  expect_stderr_contains "accepted"
}

# A message from the option parser (unknown flags, missing values): exit 2 and the flag named.
parse_error() {
  local text="$1"
  shift
  case_name "parser error naming '$text' <-$(printf " %q" "$@")"
  run "$@"
  expect_exit 2
  expect_stdout_empty
  expect_stderr_contains "vramplan: error: "
  expect_stderr_contains "$text"
}

# ---------------------------------------------------------------------------------------------
# Parallel layout
bad_input '--tp = 3' "${LLAMA[@]}" --tp 3                      # 32 heads
bad_input '--tp = 16' "${LLAMA[@]}" --tp 16                    # 8 KV heads
bad_input '--pp = 5' "${LLAMA[@]}" --pp 5                      # 32 layers
bad_input '--vpp = 3|--pp = 2' "${LLAMA[@]}" --pp 2 --vpp 3
bad_input '--ep = 3' --model Mixtral-8x7B-v0.1 --ep 3 --gpus 6  # 8 experts
bad_input '--ep = 3' --model Mixtral-8x7B-v0.1 --ep 3 --dp 3
bad_input '--ep = 16' --model Mixtral-8x7B-v0.1 --ep 16 --gpus 16
bad_input '--ep = 2' "${LLAMA[@]}" --ep 2 --gpus 2             # dense model
bad_input '--fp8 = e4m3' "${LLAMA[@]}" --fp8 e4m3              # a format, not a recipe
bad_input '--fp8-params = true' "${LLAMA[@]}" --fp8-params       # needs an fp8 recipe
bad_input '--fp8 = tensorwise' "${LLAMA[@]}" --fp8 tensorwise --zero 3 --gpus 8
bad_input '--gpus = 12' "${LLAMA[@]}" --gpus 12 --tp 8
bad_input '--dp = 4|--gpus = 8' "${LLAMA[@]}" --gpus 8 --dp 4
bad_input '--gpus = 0' "${LLAMA[@]}" --gpus 0
bad_input '--gpus = -8' "${LLAMA[@]}" --gpus -8
bad_input '--cp = 3|--seq-len = 4096' "${LLAMA[@]}" --cp 3    # seq_len not divisible by 2·cp
bad_input '--dp = 1048576|--tp = 1048576' "${LLAMA[@]}" --dp 1048576 --tp 1048576
bad_input '--first-stage-layers = 40' "${LLAMA[@]}" --pp 2 --first-stage-layers 40

# Zero, negative and non-numeric sizes
bad_input '--seq-len = 0' "${LLAMA[@]}" --seq-len 0
bad_input '--micro-batch = -1' "${LLAMA[@]}" --micro-batch -1
bad_input '--tp = 0' "${LLAMA[@]}" --tp 0
bad_input '--dp = 0' "${LLAMA[@]}" --dp 0
bad_input '--vpp = 0' "${LLAMA[@]}" --vpp 0
bad_input '--ep = 0' "${LLAMA[@]}" --ep 0
bad_input '--zero = 4' "${LLAMA[@]}" --zero 4
bad_input '--global-batch = 0' "${LLAMA[@]}" --global-batch 0
mapfile -t args < <(custom hidden-size=0)
bad_input '--hidden-size = 0' "${args[@]}"
mapfile -t args < <(custom ffn-size=0)
bad_input '--ffn-size = 0' "${args[@]}"
mapfile -t args < <(custom num-kv-heads=0)
bad_input '--num-kv-heads = 0' "${args[@]}"
mapfile -t args < <(custom num-layers=0)
bad_input '--num-layers = 0' "${args[@]}"
bad_input '--head-dim = 0' "${LLAMA[@]}" --head-dim 0
bad_input '--tp = abc' "${LLAMA[@]}" --tp abc
bad_input '--tp = 1.5' "${LLAMA[@]}" --tp 1.5
bad_input '--seq-len = 1e3' "${LLAMA[@]}" --seq-len 1e3
bad_input '--gpu-memory-gib = 0' "${LLAMA[@]}" --gpu-memory-gib 0
bad_input '--gpu-memory-gib = -5' "${LLAMA[@]}" --gpu-memory-gib -5
bad_input '--gpu-memory-gib = nan' "${LLAMA[@]}" --gpu-memory-gib nan
bad_input '--gpu-memory-gib = inf' "${LLAMA[@]}" --gpu-memory-gib inf
bad_input '--allocator-overhead = nan' "${LLAMA[@]}" --allocator-overhead nan
bad_input '--allocator-overhead = -1' "${LLAMA[@]}" --allocator-overhead -1
bad_input '--cuda-context-gib = -1' "${LLAMA[@]}" --cuda-context-gib -1
bad_input '--sequence-parallel = maybe' "${LLAMA[@]}" --sequence-parallel maybe
bad_input '--top-k = 9' --model Mixtral-8x7B-v0.1 --top-k 9     # more than its 8 experts

# Sizes that would overflow 64-bit byte counts
bad_input '--seq-len = 99999999999999' "${LLAMA[@]}" --seq-len 99999999999999
bad_input '--micro-batch = 1000000000000' "${LLAMA[@]}" --micro-batch 1000000000000
bad_input '--gpus = 99999999999999999999' "${LLAMA[@]}" --gpus 99999999999999999999
mapfile -t args < <(custom vocab-size=1000000000000)
bad_input '--vocab-size = 1000000000000' "${args[@]}"
mapfile -t args < <(custom hidden-size=99999999999)
bad_input '--hidden-size = 99999999999' "${args[@]}"
bad_input '--hidden-size = 99999999999' "${LLAMA[@]}" --hidden-size 99999999999
bad_input '--seq-len = 67108864|--micro-batch = 1048576' --model DeepSeek-V3 --seq-len 67108864 \
  --micro-batch 1048576

# Unknown names
bad_input '--param-dtype = fp12' "${LLAMA[@]}" --param-dtype fp12
bad_input '--optimizer-dtype = int3' "${LLAMA[@]}" --optimizer-dtype int3
bad_input '--optimizer = adamx' "${LLAMA[@]}" --optimizer adamx
bad_input '--gpu = h900' "${LLAMA[@]}" --gpu h900
bad_input '--schedule = zigzag' "${LLAMA[@]}" --schedule zigzag
bad_input '--recompute = some' "${LLAMA[@]}" --recompute some
bad_input '--fsdp = bogus' "${LLAMA[@]}" --fsdp bogus
bad_input '--model = NoSuchModel' --model NoSuchModel
bad_input '--model = ""' --model ""

# Batch, schedule, recompute and sharding combinations
bad_input '--global-batch = 12' "${LLAMA[@]}" --gpus 8 --global-batch 12
bad_input '--global-batch = 6' "${LLAMA[@]}" --micro-batch 4 --global-batch 6
bad_input '--schedule = interleaved|--vpp = 1' "${LLAMA[@]}" --pp 2 --schedule interleaved
bad_input '--recompute-layers = 4' "${LLAMA[@]}" --recompute-layers 4
bad_input '--recompute-layers = 4' "${LLAMA[@]}" --recompute selective --recompute-layers 4
bad_input '--zero = 3|--fsdp = full_shard' "${LLAMA[@]}" --gpus 8 --zero 3 --fsdp full_shard

# config.json files
bad_input "--model = $TEST_TMP/missing/config.json" --model "$TEST_TMP/missing/config.json"
printf '{"hidden_size": 4096, "num_hidden_layers": ' >"$TEST_TMP/broken.json"
bad_input "--model = $TEST_TMP/broken.json|config = $TEST_TMP/broken.json" \
  --model "$TEST_TMP/broken.json"
llama_config="$VRAMPLAN_SOURCE_DIR/data/models/Llama-3.1-8B.json"
head -c "$(($(wc -c <"$llama_config") / 2))" "$llama_config" >"$TEST_TMP/truncated.json"
bad_input "--model = $TEST_TMP/truncated.json|config = $TEST_TMP/truncated.json" \
  --model "$TEST_TMP/truncated.json"
: >"$TEST_TMP/empty.json"
bad_input "--model = $TEST_TMP/empty.json|config = $TEST_TMP/empty.json" \
  --model "$TEST_TMP/empty.json"
python3 - "$llama_config" "$TEST_TMP" <<'EOF'
import json, sys
config = json.load(open(sys.argv[1]))
out = sys.argv[2]
del config["hidden_size"]
json.dump(config, open(out + "/no_hidden.json", "w"))
config["hidden_size"] = "big"
json.dump(config, open(out + "/hidden_text.json", "w"))
config["hidden_size"] = -4096
json.dump(config, open(out + "/hidden_negative.json", "w"))
EOF
bad_input 'hidden_size = ' --model "$TEST_TMP/no_hidden.json"
bad_input 'hidden_size = "big"|hidden_size = big' --model "$TEST_TMP/hidden_text.json"
bad_input 'hidden_size = -4096' --model "$TEST_TMP/hidden_negative.json"

# Scenario files
scenario() { printf '%s' "$2" >"$TEST_TMP/$1"; }
scenario unknown_key.json '{"model": "Llama-3.1-8B", "seq_lenn": 4096}'
bad_input 'seq_lenn = 4096|--seq-lenn = 4096' --scenario "$TEST_TMP/unknown_key.json"
scenario wrong_type.json '{"model": "Llama-3.1-8B", "seq_len": [1]}'
bad_input '--seq-len = [1]|seq_len = [1]' --scenario "$TEST_TMP/wrong_type.json"
scenario bool_tp.json '{"model": "Llama-3.1-8B", "tp": true}'
bad_input '--tp = true|tp = true' --scenario "$TEST_TMP/bool_tp.json"
scenario text_seq.json '{"model": "Llama-3.1-8B", "seq_len": "long"}'
bad_input '--seq-len = long|seq_len = long|--seq-len = "long"' --scenario "$TEST_TMP/text_seq.json"
scenario fraction_seq.json '{"model": "Llama-3.1-8B", "seq_len": 4096.5}'
bad_input '--seq-len = 4096.5|seq_len = 4096.5' --scenario "$TEST_TMP/fraction_seq.json"
scenario number_model.json '{"model": 42}'
bad_input '--model = 42|model = 42' --scenario "$TEST_TMP/number_model.json"
scenario inline_config.json '{"model_config": 5}'
bad_input 'model_config = 5|--model-config = 5' --scenario "$TEST_TMP/inline_config.json"
scenario not_json.json 'model: Llama-3.1-8B'
bad_input "--scenario = $TEST_TMP/not_json.json|scenario = $TEST_TMP/not_json.json" \
  --scenario "$TEST_TMP/not_json.json"
scenario array.json '[1, 2]'
bad_input "--scenario = $TEST_TMP/array.json|scenario = $TEST_TMP/array.json" \
  --scenario "$TEST_TMP/array.json"
bad_input "--scenario = $TEST_TMP/none.json|scenario = $TEST_TMP/none.json" \
  --scenario "$TEST_TMP/none.json"

# The option parser's own errors still exit with 2.
parse_error "--bogus" estimate "${LLAMA[@]}" --bogus 1
parse_error "--tp" estimate "${LLAMA[@]}" --tp
parse_error "xml" estimate "${LLAMA[@]}" --format xml
parse_error "--width" estimate "${LLAMA[@]}" --width 10
parse_error "subcommand" --no-such-flag
case_name "unknown subcommand"
run frobnicate
expect_exit 2
expect_stdout_empty

# ---------------------------------------------------------------------------------------------
# Valid runs never show nan, inf or a negative byte count, in any format.
sane_run() {
  case_name "sane output <- estimate$(printf " %q" "$@")"
  local format
  for format in json table csv markdown; do
    run estimate "$@" --format "$format"
    expect_exit 0
    expect_no_nonfinite
    expect_stdout_not_contains " -0."
    case "$format" in
      json) expect_json_sane ;;
      csv)
        check "csv bytes column is a non-negative integer" python3 -c '
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1], encoding="utf-8")))
sys.exit(0 if rows and all(r["bytes"].isdigit() for r in rows) else 1)' "$RUN_OUT_FILE"
        ;;
      table) expect_stdout_not_contains "-nan" ;;
    esac
  done
}
sane_run "${LLAMA[@]}"
sane_run "${LLAMA[@]}" --pp 4 --gpus 32 --tp 2 --zero 1
sane_run "${LLAMA[@]}" --gpus 8 --fsdp full_shard --recompute full
sane_run --model gpt2 --seq-len 1 --allocator-overhead 0 --cuda-context-gib 0
sane_run "${LLAMA[@]}" --gpu-memory-gib 0.000001
sane_run "${LLAMA[@]}" --param-dtype fp4 --grad-dtype fp4 --optimizer-dtype fp4 \
  --activation-dtype fp4 --no-master-weights --no-fp32-grad-accum
sane_run --model Qwen3-30B-A3B --ep 8 --gpus 8 --optimizer sgd
sane_run --model Qwen3-30B-A3B --ep 8 --gpus 8 --fp8 mxfp8 --fp8-params --cuda-graphs
sane_run --model DeepSeek-V3 --pp 16 --ep 8 --gpus 128 --first-stage-layers 4 \
  --last-stage-layers 1 --recompute selective

case_name "validate modes refuse the flags they do not take"
run validate --serving --check
expect_exit 2
expect_stderr_contains "--check = true"
expect_stderr_contains "--serving does not take it"
run validate --planner --no-rows
expect_exit 2
expect_stderr_contains "--no-rows = true"

finish
