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

finish
