#!/usr/bin/env bash
# Happy paths of `vramplan estimate` through the real binary: the four output formats, the ways
# to name a model, scenario files, custom architectures, pipeline/expert layouts, every preset,
# and invariants of the numbers (more tokens never need less memory, ZeRO-3 shards by dp, ...).
#
# usage: bash tests/cli/estimate_test.sh path/to/vramplan
set -u
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

LLAMA=(--model Llama-3.1-8B)
LLAMA_TOTAL=8030261248  # meta-llama/Llama-3.1-8B on the Hub (untied 128,256 × 4,096 embeddings)

# keep NAME: saves the last stdout as $TEST_TMP/NAME.json for comparisons across runs.
keep() { cp "$RUN_OUT_FILE" "$TEST_TMP/$1.json"; }

# compare_json WHAT PYTHON_EXPRESSION FILE...: the expression over a (and b, c, ...: the files'
# JSON) is true.
compare_json() {
  local what="$1" expr="$2"
  shift 2
  local result
  if result=$(python3 -c '
import json, sys
docs = [json.load(open(p, encoding="utf-8")) for p in sys.argv[2:]]
names = dict(zip("abcdefgh", docs))
try:
    value = eval("(" + sys.argv[1] + "\n)", dict(names))
except Exception as e:
    print(f"{type(e).__name__}: {e}")
    sys.exit(1)
if not value:
    print("false")
    sys.exit(1)
' "$expr" "$@" 2>&1); then
    pass
  else
    fail "$what: $expr" "true" "$result"
  fi
}

# Sum of the named rows' bytes in stage 0, as a Python expression over document `doc`.
rows_sum() {
  local doc="$1"
  shift
  local names
  names=$(printf '"%s",' "$@")
  echo "sum(r['bytes'] for r in ${doc}['stages'][0]['rows'] if r['component'] in ($names))"
}

row_bytes() { echo "[r['bytes'] for r in ${1}['stages'][0]['rows'] if r['component'] == '$2'][0]"; }

# ---------------------------------------------------------------------------------------------
case_name "program basics"
run --version
expect_exit 0
expect_stdout_contains "vramplan"
run --help
expect_exit 0
expect_stdout_contains "estimate"
run estimate --help
expect_exit 0
expect_stdout_contains "--seq-len"
expect_stdout_contains "--scenario"
run models
expect_exit 0
expect_stdout_contains "Llama-3.1-8B"
run gpus
expect_exit 0
expect_stdout_contains "h100-80gb"
run gpus --format json
expect_exit 0
expect_json 'any(g["id"] == "h100-80gb" and g["usable_bytes"] > 0 for g in d)'

# ---------------------------------------------------------------------------------------------
case_name "default table"
run estimate "${LLAMA[@]}"
expect_exit 0
expect_stderr_empty
expect_stdout_contains "Llama-3.1-8B"
expect_stdout_contains "all layers"  # the one stage's header with pp = 1
for component in weights gradients "optimizer states" activations; do
  expect_stdout_contains "$component"
done
expect_stdout_contains "peak"
expect_stdout_matches '(^|[^a-z])(fits|tight|oom)([^a-z]|$)'
expect_stdout_contains "memory by component"  # the bar chart
expect_stdout_contains "█ weights"            # and its legend
expect_stdout_contains "h100-80gb"
expect_no_nonfinite

case_name "table with pp 4 shows every stage"
run estimate "${LLAMA[@]}" --pp 4
expect_exit 0
for stage in "stage 1 of 4 (first)" "stage 2 of 4" "stage 3 of 4" "stage 4 of 4 (last)"; do
  expect_stdout_contains "$stage"
done
expect_stdout_contains "peak"
# the pipeline warning about the assumed global batch goes with the output, not to stderr
expect_stdout_contains "global_batch"

# ---------------------------------------------------------------------------------------------
case_name "json output"
run estimate "${LLAMA[@]}" --format json
expect_exit 0
expect_stderr_empty
keep llama
expect_json "d['parameters']['total'] == $LLAMA_TOTAL"
expect_json "d['parameters']['active'] == $LLAMA_TOTAL"  # dense: every parameter is active
expect_json 'isinstance(d["stages"], list) and len(d["stages"]) == 1'
expect_json 'all(isinstance(s["name"], str) and s["layers"] == 32 for s in d["stages"])'
expect_json 'all(isinstance(r["component"], str) and isinstance(r["bytes"], int)
                 and r["counts_toward"] in ("allocated", "reserved", "device")
                 and r["formula"] and r["source"]
                 for s in d["stages"] for r in s["rows"])'
expect_json 'all(isinstance(s[k], int) for s in d["stages"]
                 for k in ("allocated_bytes", "reserved_bytes", "device_bytes"))'
expect_json 'all(k in d["peak"] for k in ("stage", "allocated_bytes", "reserved_bytes",
                                          "device_bytes"))'
expect_json 'd["peak"]["device_bytes"] >= d["peak"]["reserved_bytes"] >= d["peak"]["allocated_bytes"] > 0'
expect_json 'all(s["device_bytes"] >= s["reserved_bytes"] >= s["allocated_bytes"] > 0
                 for s in d["stages"])'
# each stage's totals are the sums of its rows, nested allocated ⊂ reserved ⊂ device
expect_json 'all(s["allocated_bytes"] == sum(r["bytes"] for r in s["rows"]
                                             if r["counts_toward"] == "allocated")
                 and s["device_bytes"] == sum(r["bytes"] for r in s["rows"])
                 for s in d["stages"])'
expect_json 'd["peak"]["device_bytes"] == max(s["device_bytes"] for s in d["stages"])'
expect_json 'isinstance(d["fit"], list) and len(d["fit"]) > 1 and d["fit"][0]["gpu"] == "h100-80gb"'
expect_json 'all(f["usable_bytes"] > 0 and f["used_fraction"] > 0
                 and f["verdict"] in ("fits", "tight", "oom") for f in d["fit"])'
expect_json 'abs(d["fit"][0]["used_fraction"]
                 - d["peak"]["device_bytes"] / d["fit"][0]["usable_bytes"]) < 1e-9'
expect_json 'isinstance(d["warnings"], list)'
expect_json_sane

case_name "csv output: a header and one line per row"
run estimate "${LLAMA[@]}" --format csv
expect_exit 0
expect_stdout_matches '^stage,component,bytes'
check "csv has one record per JSON row" python3 -c '
import csv, json, sys
records = list(csv.reader(open(sys.argv[1], encoding="utf-8")))
doc = json.load(open(sys.argv[2]))
rows = [r for s in doc["stages"] for r in s["rows"]]
ok = len(records) == 1 + len(rows) and all(len(r) == len(records[0]) for r in records)
ok = ok and [int(r[2]) for r in records[1:]] == [r["bytes"] for r in rows]
sys.exit(0 if ok else 1)' "$RUN_OUT_FILE" "$TEST_TMP/llama.json"
run estimate "${LLAMA[@]}" --format csv --pp 4
expect_exit 0
check "csv with pp 4 names every stage" python3 -c '
import csv, sys
stages = {r["stage"] for r in csv.DictReader(open(sys.argv[1], encoding="utf-8"))}
sys.exit(0 if len(stages) == 4 else 1)' "$RUN_OUT_FILE"

case_name "markdown output"
run estimate "${LLAMA[@]}" --format markdown
expect_exit 0
expect_stdout_matches '^\| *component *\|'
expect_stdout_matches '^\|[-:| ]+\|$'
expect_stdout_contains "| weights |"
expect_no_nonfinite

# ---------------------------------------------------------------------------------------------
# Ways to name a model
same_estimate() {  # same_estimate WHAT FILE_A FILE_B: parameters, stages and peak agree
  compare_json "$1" 'a["parameters"] == b["parameters"] and a["stages"] == b["stages"]
                     and a["peak"] == b["peak"]' "$2" "$3"
}
case_name "a preset by Hub id"
run estimate --model meta-llama/Llama-3.1-8B --format json
expect_exit 0
keep hub_id
same_estimate "Hub id = preset name" "$TEST_TMP/llama.json" "$TEST_TMP/hub_id.json"
case_name "a preset by case-insensitive name"
run estimate --model llama-3.1-8b --format json
expect_exit 0
keep lower
same_estimate "lower-case name = preset name" "$TEST_TMP/llama.json" "$TEST_TMP/lower.json"
run estimate --model META-LLAMA/LLAMA-3.1-8B --format json
expect_exit 0
keep upper_hub
same_estimate "upper-case Hub id = preset name" "$TEST_TMP/llama.json" "$TEST_TMP/upper_hub.json"

case_name "a path to a config.json"
run estimate --model Qwen3-8B --format json
expect_exit 0
keep qwen_preset
run estimate --model "$VRAMPLAN_SOURCE_DIR/data/models/Qwen3-8B.json" --format json
expect_exit 0
keep qwen_file
expect_json 'd["parameters"]["total"] > 8e9'
same_estimate "config.json path = preset" "$TEST_TMP/qwen_preset.json" "$TEST_TMP/qwen_file.json"
(cd "$VRAMPLAN_SOURCE_DIR" && run estimate --model data/models/Qwen3-8B.json --format json &&
  cp "$RUN_OUT_FILE" "$TEST_TMP/qwen_relative.json" && exit "$RUN_RC")
check "a relative config.json path works" test $? == 0
same_estimate "relative path = preset" "$TEST_TMP/qwen_preset.json" "$TEST_TMP/qwen_relative.json"

# ---------------------------------------------------------------------------------------------
case_name "scenario file = the same flags"
cat >"$TEST_TMP/scenario.json" <<'EOF'
{"model": "Llama-3.1-8B", "seq_len": 8192, "micro_batch": 2, "tp": 2, "gpus": 8,
 "recompute": "selective", "sequence_parallel": true, "zero": 1, "gpu_memory_gib": 24.5}
EOF
run estimate --scenario "$TEST_TMP/scenario.json" --format json
expect_exit 0
keep from_file
run estimate "${LLAMA[@]}" --seq-len 8192 --micro-batch 2 --tp 2 --gpus 8 --recompute selective \
  --sequence-parallel --zero 1 --gpu-memory-gib 24.5 --format json
expect_exit 0
keep from_flags
compare_json "scenario file and flags give identical JSON" 'a == b' \
  "$TEST_TMP/from_file.json" "$TEST_TMP/from_flags.json"

case_name "a flag overrides the scenario file"
run estimate --scenario "$TEST_TMP/scenario.json" --seq-len 2048 --format json
expect_exit 0
expect_json 'd["scenario"]["training"]["seq_len"] == 2048'
expect_json 'd["scenario"]["parallel"]["tp"] == 2'  # the rest still from the file
keep overridden
compare_json "shorter sequences from the override need less memory" \
  'a["peak"]["allocated_bytes"] < b["peak"]["allocated_bytes"]' \
  "$TEST_TMP/overridden.json" "$TEST_TMP/from_file.json"
run estimate --scenario "$TEST_TMP/scenario.json" --no-sequence-parallel --format json
expect_exit 0
expect_json 'd["scenario"]["parallel"]["sequence_parallel"] is False'

# ---------------------------------------------------------------------------------------------
CUSTOM=(--hidden-size 4096 --num-layers 32 --num-heads 32 --num-kv-heads 8 --ffn-size 14336
        --vocab-size 128256)
case_name "custom architecture from flags = Llama-3.1-8B"
run estimate "${CUSTOM[@]}" --tied-embeddings false --format json
expect_exit 0
expect_json "d['parameters']['total'] == $LLAMA_TOTAL"
keep custom
compare_json "custom model's stages equal the preset's" \
  'a["stages"] == b["stages"] and a["peak"] == b["peak"]' \
  "$TEST_TMP/custom.json" "$TEST_TMP/llama.json"
run estimate "${CUSTOM[@]}" --format json  # custom models default to untied embeddings
expect_exit 0
expect_json "d['parameters']['total'] == $LLAMA_TOTAL"
run estimate "${CUSTOM[@]}" --tied-embeddings true --format json
expect_exit 0
expect_json "d['parameters']['total'] == $LLAMA_TOTAL - 128256 * 4096"

# ---------------------------------------------------------------------------------------------
case_name "pipeline parallel: pp 4"
run estimate "${LLAMA[@]}" --pp 4 --format json
expect_exit 0
expect_json '2 <= len(d["stages"]) <= 4'
expect_json '"first" in d["stages"][0]["name"] and "last" in d["stages"][-1]["name"]'
expect_json 'sum(s["layers"] * len(s["ranks"]) for s in d["stages"]) == 32'
expect_json 'sorted(r for s in d["stages"] for r in s["ranks"]) == [0, 1, 2, 3]'
expect_json 'any("logits" in r["component"] for r in d["stages"][-1]["rows"])'
expect_json 'not any("logits" in r["component"] for r in d["stages"][0]["rows"])'
expect_json 'd["peak"]["device_bytes"] == max(s["device_bytes"] for s in d["stages"])'
expect_json 'd["stages"][d["peak"]["stage_index"]]["name"] == d["peak"]["stage"]'
expect_json 'len(d["warnings"]) >= 1'  # the assumed global batch is told
expect_json_sane

case_name "MoE with expert parallelism: Qwen3-30B-A3B --ep 8 --gpus 8"
run estimate --model Qwen3-30B-A3B --ep 8 --gpus 8 --format json
expect_exit 0
expect_json 'd["parameters"]["active"] < d["parameters"]["total"]'
expect_json 'd["world_size"] == 8'
expect_json_sane
keep moe_ep8
run estimate --model Qwen3-30B-A3B --ep 1 --gpus 8 --format json
expect_exit 0
keep moe_ep1
compare_json "ep 8 holds fewer weights per GPU than ep 1" \
  "$(row_bytes a weights) < $(row_bytes b weights) / 4" \
  "$TEST_TMP/moe_ep8.json" "$TEST_TMP/moe_ep1.json"

case_name "DeepSeek-V3 with pp 16, ep 8 over 128 GPUs"
run estimate --model DeepSeek-V3 --pp 16 --ep 8 --gpus 128 --first-stage-layers 4 \
  --last-stage-layers 1 --recompute full --format json
expect_exit 0
expect_json 'd["parameters"]["total"] == 671026419200'
expect_json '2 <= len(d["stages"]) <= 16'
expect_json '"first" in d["stages"][0]["name"] and "last" in d["stages"][-1]["name"]'
expect_json 'sum(s["layers"] * len(s["ranks"]) for s in d["stages"]) == 61'
expect_json 'd["world_size"] == 128'
expect_json_sane
run estimate --model DeepSeek-V3 --pp 16 --ep 8 --gpus 128 --first-stage-layers 4 \
  --last-stage-layers 1 --recompute full
expect_exit 0
expect_stdout_contains "stage 16 of 16 (last)"

case_name "--gpu-memory-gib 24 is the first fit row"
run estimate "${LLAMA[@]}" --gpu-memory-gib 24 --format json
expect_exit 0
expect_json 'd["fit"][0]["usable_bytes"] == 24 * 2**30'
expect_json 'd["fit"][0]["verdict"] == "oom"'
expect_json 'any(f["gpu"] == "h100-80gb" for f in d["fit"])'
run estimate "${LLAMA[@]}" --gpu-memory-gib 24
expect_exit 0
expect_stdout_contains "24"
expect_stdout_matches 'custom|24 GiB'
case_name "--gpu picks the first fit row"
run estimate "${LLAMA[@]}" --gpu b200-180gb --format json
expect_exit 0
expect_json 'd["fit"][0]["gpu"] == "b200-180gb"'

# ---------------------------------------------------------------------------------------------
case_name "every preset estimates with the default flags"
run models --format json
expect_exit 0
expect_json 'len(d) >= 30 and all(m["total"] >= m["active"] > 0 for m in d)'
expect_json "any(m['name'] == 'Llama-3.1-8B' and m['total'] == $LLAMA_TOTAL for m in d)"
mapfile -t PRESETS < <(json_value '"\n".join(m["name"] for m in d)')
check "models --format json lists presets" test "${#PRESETS[@]}" -ge 30
for preset in "${PRESETS[@]}"; do
  case_name "preset $preset"
  run estimate --model "$preset" --format json
  expect_exit 0
  expect_json_sane
  expect_json 'd["peak"]["device_bytes"] >= d["peak"]["reserved_bytes"] >= d["peak"]["allocated_bytes"] > 0'
done

# ---------------------------------------------------------------------------------------------
# Invariants
PEAK=""
peak_allocated() {  # peak_allocated ARGS...: sets PEAK to the peak allocated bytes
  run estimate "$@" --format json
  expect_exit 0
  PEAK=$(json_value 'd["peak"]["allocated_bytes"]')
}

case_name "peak allocated grows with --seq-len"
peak_allocated "${LLAMA[@]}" --seq-len 2048
a=$PEAK
peak_allocated "${LLAMA[@]}" --seq-len 4096
b=$PEAK
peak_allocated "${LLAMA[@]}" --seq-len 8192
c=$PEAK
check "seq 2048 < 4096 < 8192: $a < $b < $c" test "${a:-0}" -lt "${b:-0}" -a "${b:-0}" -lt "${c:-0}"

case_name "peak allocated grows with --micro-batch"
peak_allocated "${LLAMA[@]}" --micro-batch 1
a=$PEAK
peak_allocated "${LLAMA[@]}" --micro-batch 2
b=$PEAK
peak_allocated "${LLAMA[@]}" --micro-batch 4
c=$PEAK
check "micro-batch 1 < 2 < 4: $a < $b < $c" test "${a:-0}" -lt "${b:-0}" -a "${b:-0}" -lt "${c:-0}"

case_name "ZeRO-3 over 8 GPUs shards the model states by 8"
run estimate "${LLAMA[@]}" --gpus 8 --zero 0 --format json
expect_exit 0
keep zero0
run estimate "${LLAMA[@]}" --gpus 8 --zero 3 --format json
expect_exit 0
keep zero3
STATES=(weights gradients "master weights" "optimizer states")
compare_json "zero 3 model states ≈ zero 0 / 8 (within 1%)" \
  "abs($(rows_sum a "${STATES[@]}") * 8 / $(rows_sum b "${STATES[@]}") - 1) < 0.01" \
  "$TEST_TMP/zero3.json" "$TEST_TMP/zero0.json"
compare_json "zero 3 has each model-state row" \
  'all(any(r["component"] == n for r in a["stages"][0]["rows"])
       for n in ("weights", "gradients", "optimizer states"))' "$TEST_TMP/zero3.json"

case_name "weights per GPU never grow with more --tp"
previous=""
for tp in 1 2 4 8; do
  run estimate "${LLAMA[@]}" --tp "$tp" --gpus "$tp" --format json
  expect_exit 0
  weights=$(json_value "$(row_bytes d weights)")
  if [[ -n "$previous" ]]; then
    check "weights at tp $tp ($weights) <= previous tp ($previous)" \
      test "${weights:-0}" -gt 0 -a "${weights:-0}" -le "$previous"
  fi
  previous="${weights:-0}"
done

finish
