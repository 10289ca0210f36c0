#!/usr/bin/env bash
# "from" on POST /api/infer: a vLLM or SGLang command line read by the same importer as
# `vramplan infer --from`; and "emit" on /api/infer, /api/estimate and /api/plan, answering
# {"config", "format"} with exactly what `--emit` prints (docs/web-api.md); "from_files" giving the
# files a launch names (docs/importers.md).
#
# usage: bash tests/api/api_import_serving_test.sh path/to/vramplan
set -u
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
FIXTURES="$VRAMPLAN_SOURCE_DIR/tests/fixtures/imports"

serve_on_free_port

# body_with_from FILE [EXTRA_JSON]: a JSON body {"from": <the file's text>, ...EXTRA}.
body_with_from() {
  python3 -c 'import json, sys
body = json.loads(sys.argv[2]) if len(sys.argv) > 2 else {}
body["from"] = open(sys.argv[1], encoding="utf-8").read()
print(json.dumps(body))' "$@" >"$TEST_TMP/from.json"
}

case_name "from: a vLLM command, exactly what infer --from prints"
body_with_from "$FIXTURES/vllm/qwen3_235b_ep.sh"
request POST /api/infer "$TEST_TMP/from.json"
expect_status 200
expect_json "d['imported']['format'] == 'vllm' and d['scenario']['ep'] == 8"
expect_json "any(k['key'] == '--tensor-parallel-size' and k['setting'] == 'tp = 8' for k in d['imported']['understood'])"
cp "$RUN_OUT_FILE" "$TEST_TMP/from_api.json"
"$VRAMPLAN" infer --from "$FIXTURES/vllm/qwen3_235b_ep.sh" --format json >"$TEST_TMP/from_cli.json"
same_json "/api/infer from = vramplan infer --from" "$TEST_TMP/from_api.json" "$TEST_TMP/from_cli.json"

case_name "from: an SGLang command, with settings beside it"
body_with_from "$FIXTURES/sglang/qwen3_moe.sh" '{"gpu": "h200-141gb", "from_format": "sglang"}'
request POST /api/infer "$TEST_TMP/from.json"
expect_status 200
expect_json "d['imported']['format'] == 'sglang' and d['fit'][0]['gpu'] == 'h200-141gb'"

case_name "from: errors name the flag as written, with 400"
post /api/infer '{"from": "vllm serve Qwen/Qwen3-8B --tensor-parallel-size two"}'
expect_error 400 "--tensor-parallel-size"
post /api/infer '{"from": "vllm serve Qwen/Qwen3-8B -tp 3"}'
expect_error 400 "-tp"
post /api/infer '{"from": "python3 -m sglang.launch_server --model-path Qwen/Qwen3-8B --kv-cache-dtype fp8"}'
expect_error 400 "--kv-cache-dtype"
body_with_from "$FIXTURES/megatron/llama3_8b_pretrain.sh"
request POST /api/infer "$TEST_TMP/from.json"
expect_error 400 "from"

case_name "emit on /api/infer: the command --emit prints, read back to the same capacity"
post /api/infer '{"model": "Qwen3-30B-A3B", "tp": 2, "ep": 2, "gpu_memory_utilization": 0.9, "emit": "vllm"}'
expect_status 200
expect_json "d['format'] == 'vllm' and set(d) == {'config', 'format'}"
expect_json "d['config'].count('vllm serve Qwen/Qwen3-30B-A3B') == 1"
python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["config"], end="")' "$RUN_OUT_FILE" \
  >"$TEST_TMP/emitted.sh"
"$VRAMPLAN" infer --model Qwen3-30B-A3B --tp 2 --ep 2 --gpu-memory-utilization 0.9 --emit vllm \
  >"$TEST_TMP/emitted_cli.sh"
check "the config is byte for byte the CLI's --emit" cmp -s "$TEST_TMP/emitted.sh" "$TEST_TMP/emitted_cli.sh"
body_with_from "$TEST_TMP/emitted.sh"
request POST /api/infer "$TEST_TMP/from.json"
expect_status 200
read_back=$(json_value "d['max_kv_tokens']")
"$VRAMPLAN" infer --model Qwen3-30B-A3B --tp 2 --ep 2 --gpu-memory-utilization 0.9 --format json \
  >"$TEST_TMP/direct.json"
direct=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["max_kv_tokens"])' "$TEST_TMP/direct.json")
check "the same KV tokens read back ($direct, $read_back)" test "$direct" = "$read_back"
post /api/infer '{"model": "Qwen3-8B", "mem_fraction_static": 0.85, "emit": "sglang"}'
expect_status 200
expect_json "d['format'] == 'sglang' and '--mem-fraction-static 0.85' in d['config']"

case_name "emit on /api/estimate and /api/plan"
post /api/estimate '{"model": "Llama-3.1-8B", "framework": "megatron", "tp": 2, "gpus": 8, "emit": "megatron"}'
expect_status 200
expect_json "d['format'] == 'megatron' and 'pretrain_gpt.py' in d['config']"
post /api/plan '{"model": "Llama-3.1-8B", "gpus": 8, "global_batch": 64, "top": 3, "emit": "megatron"}'
expect_status 200
expect_json "d['format'] == 'megatron' and 'pretrain_gpt.py' in d['config']"

case_name "emit errors name emit"
post /api/infer '{"model": "Qwen3-8B", "emit": "nonsense"}'
expect_error 400 "emit"
post /api/infer '{"model": "Qwen3-8B", "emit": 3}'
expect_error 400 "emit"
post /api/infer '{"model": "Qwen3-8B", "emit": "megatron"}'
expect_error 400 "emit"
post /api/infer '{"model": "Qwen3-30B-A3B", "tp": 4, "ep": 2, "emit": "vllm"}'
expect_error 400 "emit"
post /api/estimate '{"model": "Llama-3.1-8B", "emit": "sglang"}'
expect_error 400 "emit"


case_name "from_files: the job TOML a torchtitan command names, given with it"
python3 -c 'import json, sys
print(json.dumps({"from": "torchrun --nproc_per_node 8 -m torchtitan.train --job.config_file ./train_configs/llama3_8b.toml --training.local_batch_size 1",
                  "from_files": {"llama3_8b.toml": open(sys.argv[1], encoding="utf-8").read()}}))' \
  "$FIXTURES/torchtitan/llama3_8b.toml" >"$TEST_TMP/files.json"
request POST /api/estimate "$TEST_TMP/files.json"
expect_status 200
expect_json "d['imported']['format'] == 'torchtitan-command' and d['scenario']['training']['micro_batch'] == 1"
expect_json "any(k['key'] == '--job.config_file' for k in d['imported']['understood'])"
printf '{"from": "torchrun --nproc_per_node 8 -m torchtitan.train --job.config_file x.toml"}' >"$TEST_TMP/nofile.json"
request POST /api/estimate "$TEST_TMP/nofile.json"
expect_status 400
expect_json "d['error']['field'] == '--job.config_file' and 'from_files' in d['error']['accepted']"
printf '{"from": "deepspeed train.py --deepspeed ds.json", "from_files": ["ds.json"]}' >"$TEST_TMP/badfiles.json"
request POST /api/estimate "$TEST_TMP/badfiles.json"
expect_status 400
expect_json "d['error']['field'] == 'from_files'"

finish
