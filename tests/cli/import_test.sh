#!/usr/bin/env bash
# --from: a run read from the user's own framework config or command line (docs/importers.md).
set -u
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
FIXTURES="$VRAMPLAN_SOURCE_DIR/tests/fixtures/imports"

case_name "a Megatron launch script"
run estimate --from "$FIXTURES/megatron/llama3_8b_pretrain.sh" --format json
expect_exit 0
expect_json "d['imported']['format'] == 'megatron'"
expect_json "d['scenario']['parallel']['tp'] == 2 and d['scenario']['parallel']['pp'] == 2"
expect_json "d['world_size'] == 16"
expect_json "d['parameters']['total'] == 8030261248"
expect_json "any(k['key'] == '--lr' and k['reason'] == 'no effect on memory' for k in d['imported']['ignored'])"
expect_json "any(k['key'] == '--tensor-model-parallel-size' and k['setting'] == 'tp = 2' for k in d['imported']['understood'])"

case_name "the table lists what was read"
run estimate --from "$FIXTURES/megatron/llama3_8b_pretrain.sh"
expect_exit 0
expect_stdout_contains "read from megatron:"
expect_stdout_contains "--tensor-model-parallel-size 2"
expect_stdout_contains "no effect on memory"

case_name "standard input, and flags beside the file win"
run_with_input "$FIXTURES/megatron/llama3_8b_pretrain.sh" estimate --from - --tp 4 --pp 1 --format json
expect_exit 0
expect_json "d['scenario']['parallel']['tp'] == 4 and d['scenario']['parallel']['dp'] == 4"

case_name "a functional-test YAML"
run estimate --from "$FIXTURES/megatron/moe_functional_test.yaml" --format json
expect_exit 0
expect_json "d['imported']['format'] == 'megatron-yaml' and d['scenario']['parallel']['vpp'] == 4"

case_name "plan searches the layout the file fixed"
run plan --from "$FIXTURES/megatron/llama3_8b_pretrain.sh" --top 2 --format json
expect_exit 0
expect_json "d['gpus'] == 16 and d['imported']['format'] == 'megatron'"
expect_json "any(k['key'] == '--tensor-model-parallel-size' and 'plan searches tp' in k['reason'] for k in d['imported']['ignored'])"

case_name "errors name the file's argument"
printf -- '--num-layers 30 --hidden-size 512 --num-attention-heads 8 --seq-length 1024 --vocab-size 1000 --tokenizer-type NullTokenizer --pipeline-model-parallel-size 4\n' >"$TEST_TMP/args.txt"
run estimate --from "$TEST_TMP/args.txt" --gpus 4
expect_exit 2
expect_stderr_contains "--pipeline-model-parallel-size = 4"
printf -- '--num-layers 4 --tensor-model-parallel-size two\n' >"$TEST_TMP/bad.txt"
run estimate --from "$TEST_TMP/bad.txt"
expect_exit 2
expect_stderr_contains "--tensor-model-parallel-size = two"

case_name "unreadable, unknown and mismatched input"
run estimate --from "$TEST_TMP/none.sh"
expect_exit 2
expect_stderr_contains "--from = $TEST_TMP/none.sh"
printf 'hello world\n' >"$TEST_TMP/hello.txt"
run estimate --from "$TEST_TMP/hello.txt"
expect_exit 2
expect_stderr_contains "--from ="
expect_stderr_contains "not recognised"
run estimate --from "$FIXTURES/megatron/llama3_8b_pretrain.sh" --from-format nope
expect_exit 2
expect_stderr_contains "--from-format = nope"

case_name "an explicit pipeline layout, also with virtual stages and first/last stage layers"
printf -- '--num-layers 61 --hidden-size 1024 --num-attention-heads 8 --seq-length 2048 --vocab-size 32000 --tokenizer-type NullTokenizer --pipeline-model-parallel-size 8 --pipeline-model-parallel-layout "Et|(tt|)*30L" --micro-batch-size 1 --global-batch-size 64\n' >"$TEST_TMP/layout.txt"
run estimate --from "$TEST_TMP/layout.txt" --gpus 8 --format json
expect_exit 0
expect_json "d['scenario']['parallel']['vpp'] == 4 and len(d['scenario']['parallel']['chunk_layers']) == 32"
expect_json "any(k['key'] == '--pipeline-model-parallel-layout' and 'pipeline_layout' in k['setting'] for k in d['imported']['understood'])"
printf -- '--num-layers 30 --hidden-size 1024 --num-attention-heads 8 --seq-length 2048 --vocab-size 32000 --tokenizer-type NullTokenizer --pipeline-model-parallel-size 4 --num-virtual-stages-per-pipeline-rank 2 --decoder-first-pipeline-num-layers 4 --decoder-last-pipeline-num-layers 2\n' >"$TEST_TMP/ends.txt"
run estimate --from "$TEST_TMP/ends.txt" --gpus 4 --format json
expect_exit 0
expect_json "d['scenario']['parallel']['vpp'] == 2 and d['scenario']['parallel']['first_stage_layers'] == 4"
printf -- '--num-layers 60 --hidden-size 1024 --num-attention-heads 8 --seq-length 2048 --vocab-size 32000 --tokenizer-type NullTokenizer --pipeline-model-parallel-size 8 --pipeline-model-parallel-layout "Et|(tt|)*30L"\n' >"$TEST_TMP/layout_bad.txt"
run estimate --from "$TEST_TMP/layout_bad.txt" --gpus 8
expect_exit 2
expect_stderr_contains "--pipeline-model-parallel-layout"
expect_stderr_contains "61 decoder layers"
run estimate --model Llama-3.1-8B --gpus 4 --pp 4 --pipeline-layout 'Et*8|t*8|t*8|t*8L' --vpp 2
expect_exit 2
expect_stderr_contains "--vpp = 2"

case_name "a Megatron-Bridge recipe, by its dotted keys"
run estimate --from "$FIXTURES/megatron/bridge_deepseek_v3_style.yaml" --gpus 128 --format json
expect_exit 0
expect_json "d['imported']['format'] == 'megatron-recipe'"
expect_json "d['scenario']['parallel']['pp'] == 8 and d['scenario']['parallel']['vpp'] == 4 and d['scenario']['parallel']['ep'] == 8"
expect_json "d['scenario']['model']['mtp_layers'] == 1 and d['scenario']['model']['moe']['num_experts'] == 64"
expect_json "any(k['key'] == 'model.tensor_model_parallel_size' and k['setting'] == 'tp = 2' for k in d['imported']['understood'])"
expect_json "any(k['key'] == 'checkpoint.save_interval' for k in d['imported']['ignored'])"
expect_json "any(k['key'] == 'mixed_precision' for k in d['imported']['understood'])"

# Bridge's CommOverlapConfig and the performance recipes' CUDA-graph fields reach the step time:
# combined 1F1B (ep_comm_overlap), TP overlap and per-layer CUDA graphs.
case_name "recipe overrides: comm_overlap and CUDA graphs"
run estimate --from - --format json <<<"python scripts/training/run_recipe.py --recipe qwen3_30b_a3b model.num_layers=48 model.hidden_size=2048 model.ffn_hidden_size=6144 model.moe_ffn_hidden_size=768 model.num_moe_experts=128 model.moe_router_topk=8 model.num_attention_heads=32 model.num_query_groups=4 model.kv_channels=128 model.gated_linear_unit=true model.normalization=RMSNorm model.vocab_size=151936 model.seq_length=4096 model.expert_model_parallel_size=8 model.cuda_graph_impl=transformer_engine comm_overlap.overlap_moe_expert_parallel_comm=true comm_overlap.tp_comm_overlap=true train.micro_batch_size=1 train.global_batch_size=64 trainer.devices=8"
expect_exit 0
expect_json "d['imported']['format'] == 'megatron-overrides'"
expect_json "d['scenario']['conventions']['ep_comm_overlap'] is True and d['scenario']['conventions']['tp_comm_overlap'] is True"
expect_json "d['scenario']['overheads']['per_layer_cuda_graphs'] is True"
expect_json "any(k['key'] == 'comm_overlap.overlap_moe_expert_parallel_comm' for k in d['imported']['understood'])"

# The performance recipes' token dispatcher (flex with its backend) reaches the step time.
case_name "recipe overrides: the token dispatcher"
run estimate --from - --format json <<<"model.num_layers=48 model.hidden_size=2048 model.ffn_hidden_size=6144 model.moe_ffn_hidden_size=768 model.num_moe_experts=128 model.moe_router_topk=8 model.num_attention_heads=32 model.num_query_groups=4 model.kv_channels=128 model.gated_linear_unit=true model.normalization=RMSNorm model.vocab_size=151936 model.seq_length=4096 model.expert_model_parallel_size=16 model.moe_token_dispatcher_type=flex model.moe_flex_dispatcher_backend=hybridep train.micro_batch_size=1 train.global_batch_size=64 trainer.devices=16"
expect_exit 0
expect_json "d['scenario']['conventions']['moe_dispatcher'] == 'hybridep'"

case_name "recipe overrides on a command line"
run estimate --from - --format json <<<"python scripts/training/run_recipe.py --recipe llama3_8b model.num_layers=32 model.hidden_size=4096 model.ffn_hidden_size=14336 model.num_attention_heads=32 model.num_query_groups=8 model.gated_linear_unit=true model.normalization=RMSNorm model.vocab_size=128256 model.seq_length=8192 model.tensor_model_parallel_size=2 ++train.micro_batch_size=1 train.global_batch_size=128 trainer.devices=8"
expect_exit 0
expect_json "d['imported']['format'] == 'megatron-overrides' and d['world_size'] == 8"
expect_json "d['scenario']['parallel']['tp'] == 2 and d['scenario']['training']['seq_len'] == 8192"
expect_json "any(k['key'] == '--recipe' for k in d['imported']['ignored'])"
run estimate --from - <<<"model.num_layers=32 model.hidden_size=4096 model.num_attention_heads=32 model.tensor_model_parallel_size=three"
expect_exit 2
expect_stderr_contains "model.tensor_model_parallel_size = three"

finish
