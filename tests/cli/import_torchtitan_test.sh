#!/usr/bin/env bash
# --from with torchtitan's job config TOMLs and launch commands (docs/importers.md, torchtitan).
set -u
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
FIXTURES="$VRAMPLAN_SOURCE_DIR/tests/fixtures/imports/torchtitan"

case_name "a published job config, its world size from the launch line in a comment"
run estimate --from "$FIXTURES/llama3_8b.toml" --format json
expect_exit 0
expect_json "d['imported']['format'] == 'torchtitan'"
expect_json "d['world_size'] == 8 and d['scenario']['parallel']['fsdp'] == 'full_shard'"
expect_json "d['scenario']['training']['recompute'] == 'selective-op'"
expect_json "d['scenario']['training']['micro_batch'] == 2"
expect_json "abs(d['peak']['reserved_bytes'] / 2**30 - 80.47) < 0.01"
expect_json "any(k['key'] == 'activation_checkpoint.selective_ac_option' and k['setting'] == 'recompute = selective-op' for k in d['imported']['understood'])"
expect_json "any(k['key'] == 'optimizer.lr' and k['reason'] == 'no effect on memory' for k in d['imported']['ignored'])"
expect_json "not d['imported']['warnings']"

case_name "the same run as the flags written by hand"
run estimate --model Llama-3.1-8B --framework torchtitan --gpus 8 --micro-batch 2 --seq-len 8192 \
  --recompute selective-op --format json
expect_exit 0
by_hand="$(json_value "d['peak']['reserved_bytes']")"
run estimate --from "$FIXTURES/llama3_8b.toml" --format json
expect_json "d['peak']['reserved_bytes'] == $by_hand"

case_name "the table lists what was read"
run estimate --from "$FIXTURES/llama3_8b.toml"
expect_exit 0
expect_stdout_contains "read from torchtitan:"
expect_stdout_contains "model.flavor 8B"
expect_stdout_contains "no effect on memory"

case_name "the spelling of 2024: degrees under [training] and [experimental], [float8]"
run estimate --from "$FIXTURES/llama3_405b_2024.toml" --format json
expect_exit 0
expect_json "d['world_size'] == 512"
expect_json "d['scenario']['parallel']['pp'] == 8 and d['scenario']['parallel']['vpp'] == 2"
expect_json "d['scenario']['training']['micro_batch'] == 4 and d['scenario']['training']['global_batch'] == 256"
expect_json "any('enable_fsdp_float8_all_gather' in w for w in d['imported']['warnings'])"
expect_json "any(k['key'] == 'float8.enable_float8_linear' for k in d['imported']['understood'])"

case_name "no world size in the file: --gpus gives it, flags beside the file win"
run estimate --from "$FIXTURES/llama3_405b.toml" --gpus 256 --format json
expect_exit 0
expect_json "d['world_size'] == 256 and d['scenario']['parallel']['tp'] == 8"
expect_json "d['scenario']['training']['recompute'] == 'full'"
expect_json "any('async TP' in w for w in d['imported']['warnings'])"
run estimate --from "$FIXTURES/llama3_405b.toml" --gpus 256 --tp 4 --format json
expect_exit 0
expect_json "d['scenario']['parallel']['tp'] == 4"

case_name "a flavor without a preset brings its own architecture"
run estimate --from "$FIXTURES/llama4_17bx16e.toml" --format json
expect_exit 0
expect_json "d['world_size'] == 32 and d['scenario']['parallel']['etp'] == 8"
expect_json "d['parameters']['total'] == 107769861120"

case_name "standard input and --from-format"
run_with_input "$FIXTURES/llama3_8b.toml" estimate --from - --from-format torchtitan --format json
expect_exit 0
expect_json "d['imported']['format'] == 'torchtitan'"

case_name "a launch command that carries the whole job"
printf '%s\n' 'torchrun --nproc_per_node=8 -m torchtitan.train --model.name llama3 \' \
  '  --model.flavor 8B --training.local_batch_size 2 --training.seq_len 8192 \' \
  '  --activation_checkpoint.mode selective --activation_checkpoint.selective_ac_option op' \
  >"$TEST_TMP/launch.sh"
run estimate --from "$TEST_TMP/launch.sh" --format json
expect_exit 0
expect_json "d['imported']['format'] == 'torchtitan-command'"
expect_json "d['peak']['reserved_bytes'] == $by_hand"

case_name "plan searches the layout the file fixed"
run plan --from "$FIXTURES/llama3_8b.toml" --top 2 --format json
expect_exit 0
expect_json "d['imported']['format'] == 'torchtitan' and d['gpus'] == 8"
expect_json "any('plan searches' in k['reason'] for k in d['imported']['ignored'])"

case_name "errors name the key as the file writes it"
printf '[model]\nname = "llama3"\nflavor = "7B"\n' >"$TEST_TMP/flavor.toml"
run estimate --from "$TEST_TMP/flavor.toml"
expect_exit 2
expect_stderr_contains "model.flavor = 7B"
expect_stderr_contains "8B"
printf '[model]\nflavor = "8B"\n[activation_checkpoint]\nmode = "selective"\nselective_ac_option = "ops"\n' \
  >"$TEST_TMP/ac.toml"
run estimate --from "$TEST_TMP/ac.toml" --gpus 8
expect_exit 2
expect_stderr_contains "activation_checkpoint.selective_ac_option = ops"
printf '[model]\nflavor = "8B"\n[training]\nbatch_size = 2\nlocal_batch_size = 4\n' >"$TEST_TMP/both.toml"
run estimate --from "$TEST_TMP/both.toml" --gpus 8
expect_exit 2
expect_stderr_contains "training.batch_size = 2"
printf '# torchrun --nproc_per_node 8 -m torchtitan.train\n[model]\nflavor = "8B"\n[parallelism]\ndata_parallel_shard_degree = 4\n' \
  >"$TEST_TMP/world.toml"
run estimate --from "$TEST_TMP/world.toml"
expect_exit 2
expect_stderr_contains "parallelism.data_parallel_shard_degree = 4"
printf '[model]\nflavor = "8B"\n[parallelism]\npipeline_parallel_degree = 2\npipeline_parallel_schedule = "Zigzag"\n' \
  >"$TEST_TMP/schedule.toml"
run estimate --from "$TEST_TMP/schedule.toml" --gpus 8
expect_exit 2
expect_stderr_contains "parallelism.pipeline_parallel_schedule = Zigzag"
expect_stderr_contains "Interleaved1F1B"

case_name "a setting vramplan refuses is named by the file's key and value"
run estimate --from "$FIXTURES/deepseek_v3_16b.toml" --gpus 8
expect_exit 2
expect_stderr_contains "activation_checkpoint.selective_ac_option = op"

case_name "a command naming a config file is refused: vramplan reads no file a command names"
printf 'torchrun --nproc_per_node 8 -m torchtitan.train --job.config_file ./llama3_8b.toml\n' \
  >"$TEST_TMP/config_file.sh"
run estimate --from "$TEST_TMP/config_file.sh"
expect_exit 2
expect_stderr_contains "--job.config_file = ./llama3_8b.toml"

finish
