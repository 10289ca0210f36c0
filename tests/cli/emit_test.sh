#!/usr/bin/env bash
# --emit: the run written back as a framework's config or command line (docs/importers.md), and
# --from reading it back to the same estimate, byte for byte.
set -u
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

# round_trip FORMAT ARGS...: estimate ARGS, then estimate --from (estimate ARGS --emit FORMAT);
# the peaks (allocated and reserved) must be equal.
round_trip() {
  local format="$1"
  shift
  case_name "round trip $format: $*"
  run estimate "$@" --format json
  expect_exit 0
  local direct
  direct="$(json_value "[d['peak']['allocated_bytes'], d['peak']['reserved_bytes'], d['world_size']]")"
  run estimate "$@" --emit "$format"
  expect_exit 0
  expect_stderr_empty
  local written="$TEST_TMP/emitted.$format"
  printf '%s\n' "$RUN_OUT" >"$written"
  run estimate --from "$written" --format json
  expect_exit 0
  expect_json "d['imported']['format'].startswith('$format')"
  expect_json "not d['imported']['warnings']"
  local read_back
  read_back="$(json_value "[d['peak']['allocated_bytes'], d['peak']['reserved_bytes'], d['world_size']]")"
  if [[ -n "$direct" && "$direct" == "$read_back" ]]; then
    pass
  else
    fail "same peak and world size as the run it was written from" "$direct" "$read_back"
  fi
}

# Megatron-LM: dense and MoE, every layout dimension, recomputation, precision, sharding.
round_trip megatron --model Llama-3.1-8B --framework megatron --tp 2 --pp 2 --gpus 8 \
  --seq-len 4096 --micro-batch 1 --global-batch 64
round_trip megatron --model Llama-3.1-70B --framework megatron --tp 4 --pp 4 --vpp 2 --gpus 64 \
  --seq-len 8192 --global-batch 512 --distributed-optimizer --recompute full
round_trip megatron --model Mixtral-8x7B-v0.1 --framework megatron --tp 2 --pp 4 --ep 8 --gpus 64 \
  --recompute selective --distributed-optimizer
round_trip megatron --model Qwen2.5-7B --framework megatron --tp 2 --cp 2 --gpus 8 \
  --seq-len 16384 --fp8 delayed
round_trip megatron --model DeepSeek-V2-Lite --framework megatron --ep 8 --gpus 8 \
  --distributed-optimizer
round_trip megatron --model DeepSeek-V3 --framework megatron --tp 2 --pp 8 \
  --first-stage-layers 5 --last-stage-layers 8 --ep 64 --gpus 1024 --distributed-optimizer \
  --recompute full
round_trip megatron --model Qwen3-30B-A3B --framework megatron --tp 2 --pp 2 --ep 4 --gpus 16 \
  --distributed-optimizer --recompute full --recompute-layers 2
round_trip megatron --model Llama-3.1-8B --framework megatron --gpus 8 --zero 1
round_trip megatron --model Llama-3.1-8B --framework megatron --gpus 8 --fsdp full_shard

# TP communication overlap is written as --tp-comm-overlap and read back, with the warning that
# the userbuffers' own memory is not counted.
case_name "emit megatron --tp-comm-overlap"
run estimate --model Llama-3.1-8B --framework megatron --tp 2 --gpus 8 --tp-comm-overlap --emit megatron
expect_exit 0
expect_stdout_contains "--tp-comm-overlap"
printf '%s\n' "$RUN_OUT" >"$TEST_TMP/overlap.megatron"
run estimate --from "$TEST_TMP/overlap.megatron" --format json
expect_exit 0
expect_json "d['scenario']['conventions']['tp_comm_overlap'] is True"
expect_json "any('userbuffers' in w for w in d['imported']['warnings'])"
# The expert all-to-all overlap (combined 1F1B) is written as --overlap-moe-expert-parallel-comm
# and read back, with the warning that its second microbatch in flight is not counted.
case_name "emit megatron --ep-comm-overlap"
run estimate --model Qwen3-30B-A3B --framework megatron --ep 8 --gpus 8 --ep-comm-overlap \
  --emit megatron
expect_exit 0
expect_stdout_contains "--overlap-moe-expert-parallel-comm"
printf '%s\n' "$RUN_OUT" >"$TEST_TMP/ep_overlap.megatron"
run estimate --from "$TEST_TMP/ep_overlap.megatron" --format json
expect_exit 0
expect_json "d['scenario']['conventions']['ep_comm_overlap'] is True"
expect_json "any('overlap-moe-expert-parallel-comm' in w for w in d['imported']['warnings'])"
# The token dispatcher is written as Megatron's flex dispatcher with its backend and read back;
# DeepSeek-V3's group-limited routing travels with the model.
case_name "emit megatron --moe-dispatcher hybridep"
run estimate --model DeepSeek-V3 --framework megatron --tp 2 --pp 8 --first-stage-layers 5 \
  --last-stage-layers 8 --ep 64 --gpus 1024 \
  --moe-dispatcher hybridep --emit megatron
expect_exit 0
expect_stdout_contains "--moe-token-dispatcher-type flex"
expect_stdout_contains "--moe-flex-dispatcher-backend hybridep"
expect_stdout_contains "--moe-router-num-groups 8"
expect_stdout_contains "--moe-router-group-topk 4"
printf '%s\n' "$RUN_OUT" >"$TEST_TMP/dispatcher.megatron"
run estimate --from "$TEST_TMP/dispatcher.megatron" --format json
expect_exit 0
expect_json "d['scenario']['conventions']['moe_dispatcher'] == 'hybridep'"
expect_json "not d['imported']['warnings']"
round_trip megatron --model Llama-3.1-8B --framework megatron --pp 4 --vpp 2 --gpus 8 \
  --first-stage-layers 6 --last-stage-layers 6
round_trip megatron --model Qwen2.5-7B --framework megatron --pp 3 --gpus 6 --pipeline-split balanced
round_trip megatron --model Llama-3.1-8B --framework megatron --pp 4 --gpus 8 \
  --pipeline-layout 'Et*7|t*9|t*9|t*7L'
round_trip megatron --model gpt2 --framework megatron --gpus 1 --seq-len 1024 --micro-batch 8

# DeepSpeed (the HF Trainer under it): ZeRO 0-3, recompute, LoRA and QLoRA, fp16 and fp32,
# the optimizers the Trainer or DeepSpeed build.
round_trip deepspeed --model Llama-3.1-8B --framework deepspeed --zero 1 --gpus 8
round_trip deepspeed --model Llama-3.1-8B --framework deepspeed --zero 2 --gpus 16 \
  --micro-batch 2 --global-batch 128 --recompute full
round_trip deepspeed --model Llama-3.1-8B --framework deepspeed --zero 3 --gpus 8 \
  --seq-len 8192 --recompute full --zero3-live-params 0 --comm-bucket-elements 16777216
round_trip deepspeed --model Qwen2.5-7B --framework deepspeed --zero 0 --gpus 1 \
  --param-dtype fp32 --grad-dtype fp32 --activation-dtype fp32 --no-master-weights \
  --no-fp32-grad-accum --seq-len 1024
round_trip deepspeed --model Llama-3.2-1B --framework deepspeed --zero 2 --gpus 4 \
  --param-dtype fp16 --grad-dtype fp16 --activation-dtype fp16 --optimizer adam8bit
round_trip deepspeed --model Llama-3.1-8B --framework deepspeed --zero 2 --gpus 8 \
  --finetune lora --lora-rank 64 --lora-targets all-linear --recompute full
round_trip deepspeed --model Mistral-7B-v0.1 --framework deepspeed --zero 3 --gpus 4 \
  --finetune qlora --optimizer adam8bit --optimizer-foreach-temporaries
round_trip deepspeed --model Llama-3.1-8B --framework deepspeed --zero 3 --gpus 8 \
  --optimizer-foreach-temporaries --no-flash-attention --seq-len 2048

# accelerate: DDP, every FSDP mode, DeepSpeed, weights loaded in bf16, LoRA and QLoRA.
round_trip accelerate --model Llama-3.2-1B --framework hf-trainer --gpus 4 --micro-batch 4
round_trip accelerate --model Llama-3.1-8B --framework hf-trainer --gpus 8 --fsdp full_shard \
  --fsdp-mixed-precision --reduce-dtype bf16 --recompute full
round_trip accelerate --model Llama-3.1-8B --framework hf-trainer --gpus 8 --fsdp shard_grad_op \
  --fsdp-mixed-precision --reduce-dtype bf16 --recompute full
round_trip accelerate --model Llama-3.1-70B --framework hf-trainer --gpus 32 \
  --fsdp hybrid_shard --fsdp-shard-group 8 --fsdp-mixed-precision --reduce-dtype bf16 \
  --recompute full --seq-len 2048
round_trip accelerate --model Qwen2.5-7B --framework hf-trainer --gpus 2 --fsdp no_shard \
  --fsdp-mixed-precision --reduce-dtype bf16 --fsdp-prefetch 0 --recompute full --seq-len 1024
round_trip accelerate --model Llama-3.1-8B --framework deepspeed --zero 3 --gpus 8 --recompute full
# Offload (docs/offload.md): each format writes its offload keys and reads them back.
round_trip deepspeed --model Llama-3.1-8B --framework deepspeed --zero 3 --gpus 8 \
  --offload-optimizer cpu --offload-params cpu
round_trip deepspeed --model Llama-3.1-8B --framework deepspeed --zero 2 --gpus 8 \
  --offload-optimizer cpu
round_trip deepspeed --model Llama-3.1-70B --framework deepspeed --zero 3 --gpus 8 \
  --offload-optimizer nvme --offload-params nvme
round_trip deepspeed --model Llama-3.1-8B --framework deepspeed --zero 3 --gpus 8 \
  --offload-optimizer cpu --optimizer-offload-fraction 0.25
round_trip accelerate --model Llama-3.1-8B --framework deepspeed --zero 3 --gpus 8 \
  --offload-optimizer cpu --offload-params nvme
round_trip accelerate --model Llama-3.1-8B --framework hf-trainer --gpus 8 --fsdp full_shard \
  --fsdp-mixed-precision --reduce-dtype bf16 --offload-params cpu --offload-optimizer cpu
round_trip megatron --model Llama-3.1-8B --framework megatron --gpus 8 --distributed-optimizer \
  --offload-optimizer cpu --optimizer-offload-fraction 0.5
round_trip accelerate --model Llama-3.1-8B --framework hf-trainer --gpus 1 --finetune lora \
  --adapter-dtype fp32 --lora-targets attention --recompute full
round_trip accelerate --model Llama-3.1-8B --framework hf-trainer --gpus 2 --finetune qlora \
  --adapter-dtype fp32 --param-dtype bf16 --grad-dtype bf16 --optimizer-dtype fp32 \
  --no-master-weights --no-fp32-grad-accum --optimizer adam8bit --recompute full

# torchtune: single-device and distributed, full, LoRA and QLoRA, its three losses.
TT=(--param-dtype bf16 --grad-dtype bf16 --optimizer-dtype bf16 --no-master-weights
  --no-fp32-grad-accum --model-code torchtune --lazy-gradients --allocator-overhead 0.2)
round_trip torchtune --model Llama-3.1-8B --finetune lora --lora-rank 8 \
  --lora-targets q,v,o,gate,up,down --adapter-dtype bf16 --gpus 1 --recompute full \
  --micro-batch 2 --global-batch 16 --loss-bytes-per-logit 4 "${TT[@]}"
round_trip torchtune --model Llama-3.1-8B --finetune qlora --lora-targets all-linear \
  --adapter-dtype bf16 --optimizer adamw --gpus 1 --recompute full "${TT[@]}"
round_trip torchtune --model Llama-3.1-8B --gpus 4 --fsdp full_shard --recompute full \
  --micro-batch 2 --seq-len 2048 "${TT[@]}"
round_trip torchtune --model Llama-3.1-8B --gpus 4 --fsdp full_shard --recompute full \
  --micro-batch 2 --seq-len 2048 --offload-activations --offload-params cpu \
  --offload-optimizer cpu "${TT[@]}"
round_trip torchtune --model Qwen3-8B --gpus 8 --fsdp shard_grad_op --seq-len 2048 \
  --loss-bytes-per-logit 10 --loss-chunks 0 --optimizer adam8bit "${TT[@]}"
round_trip torchtune --model Llama-3.2-1B --gpus 1 --param-dtype fp32 --grad-dtype fp32 \
  --activation-dtype fp32 --optimizer-dtype fp32 --no-master-weights --no-fp32-grad-accum --model-code torchtune \
  --lazy-gradients --allocator-overhead 0.2 --optimizer-foreach-temporaries

case_name "stdout holds the script alone"
run estimate --model Llama-3.1-8B --framework megatron --gpus 8 --emit megatron
expect_exit 0
expect_stdout_matches '^#!/bin/bash'
expect_stdout_contains "pretrain_gpt.py"
expect_stdout_not_contains "training memory per GPU"

case_name "what Megatron-LM cannot express is an error naming --emit"
run estimate --model gemma-2-2b --emit megatron
expect_exit 2
expect_stderr_contains "--emit = megatron"
expect_stderr_contains "sliding-window"
run estimate --model Llama-3.1-8B --gpus 8 --zero 3 --emit megatron
expect_exit 2
expect_stderr_contains "fsdp full_shard"

case_name "what the HF stack cannot express is an error naming --emit"
run estimate --model Llama-3.1-8B --gpus 8 --emit deepspeed
expect_exit 2
expect_stderr_contains "--emit = deepspeed"
expect_stderr_contains "--framework deepspeed"
run estimate --model Llama-3.1-8B --framework deepspeed --tp 2 --gpus 8 --emit deepspeed
expect_exit 2
expect_stderr_contains "tp = 2"
run estimate --model Llama-3.1-8B --framework deepspeed --gpus 8 --recompute selective --emit deepspeed
expect_exit 2
expect_stderr_contains "recompute none or full"
run estimate --model Llama-3.1-8B --framework deepspeed --gpus 8 --zero 0 --fsdp full_shard --emit deepspeed
expect_exit 2
expect_stderr_contains "ZeRO, not FSDP"
run estimate --model Llama-3.1-8B --framework deepspeed --gpus 8 --finetune lora --adapter-dtype fp32 --emit deepspeed
expect_exit 2
expect_stderr_contains "adapter_dtype bf16"
run estimate --model Llama-3.1-8B --framework deepspeed --gpus 8 --loss-bytes-per-logit 6 --emit deepspeed
expect_exit 2
expect_stderr_contains "loss_bytes_per_logit = 6"
run estimate --model Llama-3.1-8B --framework deepspeed --gpus 8 --num-layers 16 --emit deepspeed
expect_exit 2
expect_stderr_contains "shape the settings changed"
run estimate --hidden-size 1024 --num-layers 4 --num-heads 8 --ffn-size 4096 --vocab-size 32000 \
  --framework deepspeed --emit deepspeed
expect_exit 2
expect_stderr_contains "Hub id"
run estimate --model Llama-3.1-8B --framework hf-trainer --gpus 8 --fsdp full_shard --emit accelerate
expect_exit 2
expect_stderr_contains "fsdp_mixed_precision"
run estimate --model Llama-3.1-8B --framework megatron --gpus 8 --emit accelerate
expect_exit 2
expect_stderr_contains "--framework hf-trainer or --framework deepspeed"
run estimate --model Llama-3.1-8B --gpus 8 --emit torchtune
expect_exit 2
expect_stderr_contains "--emit = torchtune"
run estimate --model gpt2 --param-dtype bf16 --grad-dtype bf16 --optimizer-dtype bf16 \
  --no-master-weights --no-fp32-grad-accum --model-code torchtune --lazy-gradients \
  --allocator-overhead 0.2 --emit torchtune
expect_exit 2
expect_stderr_contains "no builder"
run estimate --model Qwen2.5-7B --finetune qlora --adapter-dtype bf16 --optimizer adamw \
  --param-dtype bf16 --grad-dtype bf16 --optimizer-dtype bf16 --no-master-weights \
  --no-fp32-grad-accum --model-code torchtune --lazy-gradients --allocator-overhead 0.2 \
  --emit torchtune
expect_exit 2
expect_stderr_contains "qlora_qwen2_5_7b_base"

case_name "an unknown format, and a serving format for training"
run estimate --model Llama-3.1-8B --emit nonsense
expect_exit 2
expect_stderr_contains "--emit = nonsense"
expect_stderr_contains "accepted: a training format: megatron, torchtitan, deepspeed, accelerate, torchtune"
run infer --model Llama-3.1-8B --emit megatron
expect_exit 2
expect_stderr_contains "a serving format"

case_name "plan --emit writes the best layout the format can express"
run plan --model Llama-3.1-8B --framework megatron --gpus 8 --global-batch 64 --emit megatron
expect_exit 0
expect_stdout_contains "pretrain_gpt.py"
expect_stdout_contains "--global-batch-size 64"
written="$TEST_TMP/plan.sh"
printf '%s\n' "$RUN_OUT" >"$written"
run estimate --from "$written" --format json
expect_exit 0
expect_json "d['fit'][0]['verdict'] in ('fits', 'tight')"

# torchtitan: FSDP, HSDP, TP, PP (1F1B, interleaved, four stages per rank), CP, MoE with EP,
# recompute full / op-level / every N-th layer, pure bf16, a float8 job read from its TOML.
TT=(--framework torchtitan)
round_trip torchtitan --model Llama-3.1-8B "${TT[@]}" --gpus 8 --micro-batch 2 --seq-len 8192 \
  --recompute selective-op
round_trip torchtitan --model Llama-3.1-8B "${TT[@]}" --gpus 8 --recompute full \
  --offload-params cpu --offload-optimizer cpu
round_trip torchtitan --model Llama-3.1-70B "${TT[@]}" --gpus 64 --tp 2 --fsdp hybrid_shard \
  --fsdp-shard-group 16 --recompute full
round_trip torchtitan --model Llama-3.1-70B "${TT[@]}" --tp 8 --gpus 256 --micro-batch 4 \
  --recompute full
round_trip torchtitan --model Llama-3.1-8B "${TT[@]}" --pp 4 --gpus 16 --global-batch 64
round_trip torchtitan --model Llama-3.1-405B "${TT[@]}" --tp 8 --pp 8 --vpp 2 --gpus 512 \
  --micro-batch 4 --global-batch 256 --recompute full
round_trip torchtitan --model Llama-3.1-405B "${TT[@]}" --tp 8 --pp 8 --vpp 4 --gpus 512 \
  --global-batch 256 --recompute full
round_trip torchtitan --model Llama-3.1-8B "${TT[@]}" --cp 4 --gpus 8 --seq-len 65536 \
  --recompute full
round_trip torchtitan --model Llama-3.1-8B "${TT[@]}" --gpus 8 --recompute full --recompute-layers 16
round_trip torchtitan --model Llama-3.1-8B "${TT[@]}" --gpus 16 --pp 2 --global-batch 64 \
  --recompute full --recompute-layers 8
round_trip torchtitan --model Qwen3-30B-A3B "${TT[@]}" --ep 8 --gpus 8 --recompute full
round_trip torchtitan --model DeepSeek-V2-Lite "${TT[@]}" --ep 8 --gpus 8 --recompute full
# torchtitan's EP backend: DeepEP is written and read back; it has no all-gather dispatcher.
case_name "emit torchtitan --moe-dispatcher"
run estimate --model Qwen3-30B-A3B "${TT[@]}" --ep 8 --gpus 8 --moe-dispatcher deepep \
  --emit torchtitan
expect_exit 0
expect_stdout_contains 'expert_parallel_comm_backend = "deepep"'
printf '%s\n' "$RUN_OUT" >"$TEST_TMP/deepep.toml"
run estimate --from "$TEST_TMP/deepep.toml" --format json
expect_exit 0
expect_json "d['scenario']['conventions']['moe_dispatcher'] == 'deepep'"
run estimate --model Qwen3-30B-A3B "${TT[@]}" --ep 8 --gpus 8 --moe-dispatcher allgather \
  --emit torchtitan
expect_exit 2
expect_stderr_contains "no all-gather dispatcher"
round_trip torchtitan --model Qwen3-8B "${TT[@]}" --gpus 8 --param-dtype bf16 --grad-dtype bf16 \
  --optimizer-dtype bf16 --master-weights false
round_trip torchtitan --model Llama-3.1-8B "${TT[@]}" --gpus 8 --fsdp shard_grad_op
round_trip torchtitan --from "$VRAMPLAN_SOURCE_DIR/tests/fixtures/imports/torchtitan/llama3_405b_2024.toml"
round_trip torchtitan --from "$VRAMPLAN_SOURCE_DIR/tests/fixtures/imports/torchtitan/llama4_17bx16e.toml"

case_name "what torchtitan cannot express is an error naming --emit"
run estimate --model Llama-3.1-8B --gpus 8 --emit torchtitan
expect_exit 2
expect_stderr_contains "--emit = torchtitan"
expect_stderr_contains "--framework torchtitan"
run estimate --model Llama-3.1-8B --framework torchtitan --fsdp none --zero 1 --gpus 8 --emit torchtitan
expect_exit 2
expect_stderr_contains "ZeRO-1"
run estimate --model Llama-3.1-8B --framework torchtitan --fsdp none --distributed-optimizer \
  --gpus 8 --emit torchtitan
expect_exit 2
expect_stderr_contains "distributed optimizer"
run estimate --model Llama-3.1-8B --framework megatron --gpus 8 --emit torchtitan
expect_exit 2
expect_stderr_contains "megatron's conventions"
run estimate --model gemma-2-2b --framework torchtitan --gpus 8 --emit torchtitan
expect_exit 2
expect_stderr_contains "flavors"
run estimate --model Llama-3.1-8B --framework torchtitan --gpus 8 --recompute full \
  --recompute-layers 12 --emit torchtitan
expect_exit 2
expect_stderr_contains "every N-th layer"
run estimate --model Llama-3.1-8B --framework torchtitan --gpus 8 --allocator-overhead 0.3 \
  --emit torchtitan
expect_exit 2
expect_stderr_contains "allocator_overhead"

case_name "plan --emit torchtitan writes the best layout torchtitan runs"
run plan --model Llama-3.1-8B --framework torchtitan --gpus 8 --global-batch 16 --emit torchtitan
expect_exit 0
expect_stdout_contains 'flavor = "8B"'
printf '%s\n' "$RUN_OUT" >"$TEST_TMP/plan.toml"
run estimate --from "$TEST_TMP/plan.toml" --format json
expect_exit 0
expect_json "d['imported']['format'] == 'torchtitan' and d['world_size'] == 8"

finish
