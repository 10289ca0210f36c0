#!/usr/bin/env bash
# Fine-tuning through `vramplan estimate`: LoRA and QLoRA rows, frozen layers and embeddings, and
# the bad inputs of the fine-tuning flags (exit 2, the flag, the value and what is accepted).
#
# usage: bash tests/cli/finetune_test.sh path/to/vramplan
set -u
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

LLAMA=(estimate --model Llama-2-7b --seq-len 2048 --format json)
rows() { echo "{r['component']: r['bytes'] for r in d['stages'][0]['rows']}"; }

case_name "help lists the fine-tuning flags"
run estimate --help
for flag in --finetune --lora-rank --lora-targets --adapter-dtype --freeze-embeddings \
  --freeze-first-layers; do
  expect_stdout_contains "$flag"
done

case_name "LoRA"
run "${LLAMA[@]}" --finetune lora --lora-rank 8 --lora-targets q,v
expect_exit 0
expect_json_sane
# PEFT: r = 8 on q_proj, v_proj of Llama-2-7B = 4,194,304 adapter parameters, bf16.
expect_json "$(rows)['adapter weights'] == 2 * 4194304"
expect_json "$(rows)['frozen base weights (bf16)'] == 2 * 6738415616"
expect_json "'gradients' not in $(rows) and 'optimizer states' not in $(rows)"
expect_json "'adapter activations' in $(rows)"

case_name "QLoRA"
run "${LLAMA[@]}" --finetune qlora --lora-rank 64 --lora-targets all-linear
expect_exit 0
expect_json_sane
expect_json "$(rows)['adapter weights'] == 2 * 159907840"
expect_json "abs($(rows)['frozen base weights (nf4)'] / (6738415616 - 2*32000*4096 - 65*4096) - 4.127/8) < 0.001"
# one linear dequantised at a time (11,008 × 4,096 × 2 B), inside a layer: the freed logits hide
# it, and its segments stay reserved
expect_json "$(rows).get('dequantized weight buffer', 0) + $(rows).get('dequantized weight buffer (reserved beside the logits)', 0) == 2 * 11008 * 4096"
run estimate --model Llama-2-7b --seq-len 2048 --finetune qlora
expect_exit 0
expect_stdout_contains "adam8bit"

case_name "frozen embedding and first layers"
run "${LLAMA[@]}"
cp "$RUN_OUT_FILE" "$TEST_TMP/full.json"
run "${LLAMA[@]}" --freeze-embeddings --freeze-first-layers 16
expect_exit 0
expect_json "'frozen weights' in $(rows)"
cp "$RUN_OUT_FILE" "$TEST_TMP/frozen.json"
python3 - "$TEST_TMP/full.json" "$TEST_TMP/frozen.json" <<'EOF' && pass || fail "frozen layers halve activations" "half" "not half"
import json, sys
full, frozen = (json.load(open(p)) for p in sys.argv[1:])
act = lambda d: [r["bytes"] for r in d["stages"][0]["rows"] if r["component"] == "activations"][0]
sys.exit(0 if act(frozen) * 2 == act(full) else 1)
EOF

case_name "bad fine-tuning input"
bad() {
  local spec="$1"
  shift
  case_name "$spec"
  run estimate "$@"
  expect_exit 2
  expect_stdout_empty
  expect_stderr_lines 1
  expect_stderr_contains "vramplan: error: $spec"
  expect_stderr_contains "accepted"
}
bad '--finetune = dora' --model Llama-2-7b --finetune dora
bad '--lora-rank = 8' --model Llama-2-7b --lora-rank 8
bad '--lora-rank = 0' --model Llama-2-7b --finetune lora --lora-rank 0
bad '--lora-rank = -4' --model Llama-2-7b --finetune lora --lora-rank -4
bad '--lora-targets = q,lm_head' --model Llama-2-7b --finetune lora --lora-targets q,lm_head
bad '--lora-targets = gate' --model gpt2 --finetune lora --lora-targets gate
bad '--adapter-dtype = fp12' --model Llama-2-7b --finetune lora --adapter-dtype fp12
bad '--freeze-first-layers = 33' --model Llama-2-7b --freeze-first-layers 33
bad '--freeze-first-layers = -1' --model Llama-2-7b --freeze-first-layers -1
bad '--freeze-embeddings = maybe' --model Llama-2-7b --freeze-embeddings maybe

finish
