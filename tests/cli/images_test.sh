#!/usr/bin/env bash
# --images N --image-size WxH (docs/models.md, "Images"): the vision encoder's activations and
# the image tokens in training, mllama's cross-attention KV and the profile run in serving, and
# the errors naming the flag.
set -u
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

case_name "training: the vision encoder's activations for two 1024x768 images (Qwen2.5-VL)"
run estimate --model Qwen2.5-VL-7B-Instruct --images 2 --image-size 1024x768 --format json
expect_exit 0
# 3,996 patches per image, 60,712 B per token and layer, 32 layers (unit test by hand).
expect_json "[r['bytes'] for r in d['stages'][0]['rows'] if r['component'] == 'vision encoder activations'] == [60712 * 32 * 2 * 3996]"
expect_json "any('1001 tokens each, 2002 of the 4096-token sequence' in w for w in d['warnings'])"
expect_json "d['scenario']['images'] == {'count': 2, 'width': 1024, 'height': 768}"
expect_json_sane

case_name "training: the tower's weights are trained with the language model"
run estimate --model Qwen2.5-VL-7B-Instruct --format json
expect_exit 0
expect_json "[r['formula'] for r in d['stages'][0]['rows'] if r['component'] == 'weights'][0].endswith('× 8,292,166,656 params')"
expect_json "'images' not in d['scenario']"

case_name "training: LoRA freezes the tower, which keeps no activations"
run estimate --model Qwen2.5-VL-7B-Instruct --images 2 --finetune lora --format json
expect_exit 0
expect_json "not any(r['component'] == 'vision encoder activations' for r in d['stages'][0]['rows'])"
expect_json "any('frozen under lora' in w for w in d['warnings'])"

case_name "training: mllama keeps the image tokens' cross-attention K/V"
run estimate --model Llama-3.2-11B-Vision-Instruct --images 1 --format json
expect_exit 0
expect_json "[r['bytes'] for r in d['stages'][0]['rows'] if r['component'] == 'cross-attention K/V of the image tokens'] == [4 * 1601 * (8 * 1024 * 10 + 8192)]"

case_name "training: images beyond the sequence are refused with the count that fits"
run estimate --model Qwen2.5-VL-7B-Instruct --images 5 --image-size 1024x768
expect_exit 2
expect_stderr_contains "--images = 5"
expect_stderr_contains "at most 4 images"

case_name "serving: mllama caches the image tokens' K/V per sequence"
run infer --model Llama-3.2-11B-Vision-Instruct --images 2 --image-size 1024x768 --context 8192 --batch 4 --format json
expect_exit 0
expect_json "[r['bytes'] for r in d['rows'] if r['component'] == 'cross-attention KV (image tokens)'] == [4 * 2 * 6404 * 8 * 4096]"
expect_json "d['kv_bytes_per_sequence'] > 2 * 6404 * 8 * 4096"
expect_json "any(r['component'] == 'vision encoder (profile run)' for r in d['rows'])"
expect_json "d['scenario']['images']['count'] == 2"
expect_json_sane

case_name "serving: the image tokens count within the context"
run infer --model Qwen2.5-VL-7B-Instruct --images 3 --image-size 1024x768 --context 2048
expect_exit 2
expect_stderr_contains "at most 2 images of 1024×768 px in a 2048-token context"

case_name "errors name the flag"
run estimate --model Llama-3.1-8B --images 1
expect_exit 2
expect_stderr_contains "--images = 1"
expect_stderr_contains "no vision tower"
run estimate --model gemma-3-27b --images 1 --image-size 10x
expect_exit 2
expect_stderr_contains "--image-size = 10x"
run infer --model gemma-3-27b --image-size 100x100
expect_exit 2
expect_stderr_contains "with images N"
run infer --model Qwen2.5-VL-7B-Instruct --images 1 --image-size 4000x10
expect_exit 2
expect_stderr_contains "200:1"

finish
