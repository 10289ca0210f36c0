#!/usr/bin/env bash
# --from for the Hugging Face training stack: DeepSpeed configs and launch scripts, HF
# TrainingArguments, accelerate configs, torchtune recipes, axolotl configs (docs/importers.md).
set -u
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
FIXTURES="$VRAMPLAN_SOURCE_DIR/tests/fixtures/imports"

case_name "a deepspeed launch script with its config in a here-document"
run estimate --from "$FIXTURES/deepspeed/run_clm_zero3.sh" --format json
expect_exit 0
expect_json "d['imported']['format'] == 'deepspeed'"
expect_json "d['world_size'] == 8 and d['scenario']['parallel']['zero'] == 3"
expect_json "d['scenario']['conventions']['framework'] == 'deepspeed'"
expect_json "d['scenario']['training']['micro_batch'] == 2 and d['scenario']['training']['global_batch'] == 64"
expect_json "d['scenario']['conventions']['comm_bucket_elements'] == 4096 * 4096"
expect_json "not d['imported']['warnings']"
expect_json "any(k['key'] == 'zero_optimization.stage' and k['setting'] == 'zero = 3' for k in d['imported']['understood'])"
expect_json "any(k['key'] == '--learning_rate' and k['reason'] == 'no effect on memory' for k in d['imported']['ignored'])"

case_name "the table lists what was read"
run estimate --from "$FIXTURES/deepspeed/run_clm_zero3.sh"
expect_exit 0
expect_stdout_contains "read from deepspeed:"
expect_stdout_contains "zero_optimization.stage 3"

case_name "a DeepSpeed config alone: its CPU offload moves the states and parameters to the host"
run estimate --from "$FIXTURES/deepspeed/ds_config_zero3.json" --model Llama-3.1-8B --gpus 8 --format json
expect_exit 0
expect_json "d['scenario']['parallel']['zero'] == 3"
expect_json "d['scenario']['offload']['optimizer'] == 'cpu' and d['scenario']['offload']['params'] == 'cpu'"
expect_json "d['peak']['host_bytes'] > 0"
expect_json "any(r['component'] == 'optimizer states (offloaded)' and r['counts_toward'] == 'host' for r in d['stages'][0]['rows'])"
expect_json "d['fit'][0]['host']['verdict'] == 'fits'"
expect_json "any(k['key'] == 'bf16.enabled' and 'no TrainingArguments' in k['reason'] for k in d['imported']['ignored'])"

case_name "train_batch_size against micro × accumulation × GPUs"
run estimate --from "$FIXTURES/deepspeed/ds_config_zero2.json" --model Llama-3.1-8B --format json
expect_exit 0
expect_json "d['world_size'] == 8"
run estimate --from "$FIXTURES/deepspeed/ds_config_zero2.json" --model Llama-3.1-8B --gpus 16
expect_exit 2
expect_stderr_contains "train_batch_size = 64"

case_name "HF TrainingArguments as YAML (alignment-handbook QLoRA) and as flags (run_clm)"
run estimate --from "$FIXTURES/hf/zephyr_sft_qlora.yaml" --gpus 8 --format json
expect_exit 0
expect_json "d['imported']['format'] == 'hf-trainer'"
expect_json "d['scenario']['finetune']['method'] == 'qlora' and d['scenario']['finetune']['lora_rank'] == 16"
expect_json "d['scenario']['finetune']['lora_targets'] == 'q,k,v,o,gate,up,down'"
expect_json "d['scenario']['finetune']['adapter_dtype'] == 'fp32'"
expect_json "d['scenario']['training']['global_batch'] == 4 * 2 * 8"
run estimate --from "$FIXTURES/hf/run_clm_args.txt" --format json
expect_exit 0
expect_json "d['scenario']['model']['name'] == 'Llama-3.2-1B'"
expect_json "d['scenario']['conventions']['optimizer_foreach_temporaries'] == False"

case_name "accelerate configs and launch scripts"
run estimate --from "$FIXTURES/accelerate/fsdp.yaml" --model Llama-3.1-8B --format json
expect_exit 0
expect_json "d['imported']['format'] == 'accelerate' and d['scenario']['parallel']['fsdp'] == 'full_shard'"
expect_json "d['world_size'] == 2"
run estimate --from "$FIXTURES/accelerate/sft_fsdp_launch.sh" --format json
expect_exit 0
expect_json "d['world_size'] == 8 and d['scenario']['training']['recompute'] == 'full'"
run estimate --from "$FIXTURES/accelerate/deepspeed_zero3.yaml" --model Llama-3.1-8B --format json
expect_exit 0
expect_json "d['scenario']['conventions']['framework'] == 'deepspeed' and d['scenario']['parallel']['zero'] == 3"

case_name "torchtune recipes, as published"
run estimate --from "$FIXTURES/torchtune/8B_lora_single_device.yaml" --seq-len 2048 --format json
expect_exit 0
expect_json "d['imported']['format'] == 'torchtune' and d['world_size'] == 1"
expect_json "d['scenario']['finetune']['method'] == 'lora' and d['scenario']['finetune']['lora_rank'] == 8"
expect_json "d['scenario']['training']['param_dtype'] == 'bf16' and d['scenario']['training']['optimizer_state_dtype'] == 'bf16'"
expect_json "any(k['key'] == 'tokenizer.max_seq_len' for k in d['imported']['ignored'])"
run estimate --from "$FIXTURES/torchtune/8B_qlora_single_device.yaml" --seq-len 2048 --format json
expect_exit 0
expect_json "d['scenario']['finetune']['method'] == 'qlora' and d['scenario']['finetune']['base_weights'] == 'nf4'"
run estimate --from "$FIXTURES/torchtune/8B_full.yaml" --seq-len 2048 --format json
expect_exit 0
expect_json "d['world_size'] == 4 and d['scenario']['parallel']['fsdp'] == 'full_shard'"

case_name "axolotl configs, as published (the model given beside replaces the Hub id)"
run estimate --from "$FIXTURES/axolotl/qlora.yml" --model Llama-3.1-8B --format json
expect_exit 0
expect_json "d['imported']['format'] == 'axolotl'"
expect_json "d['scenario']['finetune']['method'] == 'qlora' and d['scenario']['finetune']['lora_rank'] == 32"
expect_json "d['scenario']['finetune']['lora_targets'] == 'all-linear'"
run estimate --from "$FIXTURES/axolotl/lora-8b.yml" --model Llama-3.1-8B --format json
expect_exit 0
expect_json "any(k['key'] == 'load_in_8bit' and k['reason'].startswith('not modelled') for k in d['imported']['ignored'])"

case_name "plan takes the file's global batch and searches the layout"
run plan --from "$FIXTURES/deepspeed/run_clm_zero3.sh" --top 2 --format json
expect_exit 0
expect_json "d['gpus'] == 8 and d['imported']['format'] == 'deepspeed'"
expect_json "any(k['key'] == 'zero_optimization.stage' and 'plan searches zero' in k['reason'] for k in d['imported']['ignored'])"

run plan --from "$FIXTURES/hf/run_clm_args.txt" --gpus 4 --top 1 --format json
expect_exit 0
expect_json "d['global_batch'] == 64"
expect_json "any(k['key'] == '--gradient_accumulation_steps' and 'global_batch = 64' in k['setting'] for k in d['imported']['understood'])"

case_name "--from-format names the format"
run estimate --from "$FIXTURES/hf/run_clm_args.txt" --from-format hf-trainer --format json
expect_exit 0
expect_json "d['imported']['format'] == 'hf-trainer'"

case_name "errors name the key as the file writes it"
printf -- '--per_device_train_batch_size 4 --output_dir o --optim adamw_magic\n' >"$TEST_TMP/optim.txt"
run estimate --from "$TEST_TMP/optim.txt" --model Llama-3.1-8B
expect_exit 2
expect_stderr_contains "--optim = adamw_magic"
printf '{"zero_optimization": {"stage": 5}}\n' >"$TEST_TMP/stage.json"
run estimate --from "$TEST_TMP/stage.json" --model Llama-3.1-8B
expect_exit 2
expect_stderr_contains "zero_optimization.stage = 5"
printf 'distributed_type: FSDP\nnum_processes: 8\nfsdp_config:\n  fsdp_sharding_strategy: HALF\n' >"$TEST_TMP/acc.yaml"
run estimate --from "$TEST_TMP/acc.yaml" --model Llama-3.1-8B
expect_exit 2
expect_stderr_contains "fsdp_config.fsdp_sharding_strategy = HALF"
printf 'model:\n  _component_: torchtune.models.llama3_2.llama3_2_1b\ndtype: fp16\n' >"$TEST_TMP/tt.yaml"
run estimate --from "$TEST_TMP/tt.yaml"
expect_exit 2
expect_stderr_contains "dtype = fp16"
printf 'base_model: meta-llama/Llama-3.1-8B\nadapter: qlora\nmicro_batch_size: 1\n' >"$TEST_TMP/ax.yml"
run estimate --from "$TEST_TMP/ax.yml"
expect_exit 2
expect_stderr_contains "adapter = qlora"
# A layout error about a setting the file made names the file's key.
printf 'distributed_type: MULTI_GPU\nnum_processes: 3\n' >"$TEST_TMP/three.yaml"
run estimate --from "$TEST_TMP/three.yaml" --model Llama-3.1-8B --tp 2
expect_exit 2
expect_stderr_contains "num_processes = 3"


case_name "a config the launch names is read beside the --from file"
mkdir -p "$TEST_TMP/run/configs"
cp "$FIXTURES/deepspeed/ds_config_zero3.json" "$TEST_TMP/run/configs/ds_zero3.json"
printf 'deepspeed --num_gpus 8 train.py --deepspeed configs/ds_zero3.json --model_name_or_path meta-llama/Llama-3.1-8B --per_device_train_batch_size 1 --bf16\n' >"$TEST_TMP/run/train.sh"
run estimate --from "$TEST_TMP/run/train.sh" --format json
expect_exit 0
expect_json "d['scenario']['parallel']['zero'] == 3"
expect_json "any(k['key'] == '--deepspeed' and 'names' in k['setting'] for k in d['imported']['understood'])"
expect_json "any(k['key'] == 'zero_optimization.stage' for k in d['imported']['understood'])"
# The same script from another directory with the config missing: listed and warned, not an error.
cp "$TEST_TMP/run/train.sh" "$TEST_TMP/alone.sh"
run estimate --from "$TEST_TMP/alone.sh" --format json
expect_exit 0
expect_json "any(k['key'] == '--deepspeed' and 'does not hold' in k['reason'] for k in d['imported']['ignored'])"
expect_json "any('--deepspeed' in w for w in d['warnings'])"

finish
