#!/usr/bin/env bash
# `vramplan validate` (memory) through the real binary: the accuracy gate CI holds, the
# --dataset filter and the PyTorch reference's rows, summaries and parameter counts.
set -u
source "$(dirname "$0")/lib.sh"

case_name "validate --check: every target met, or open and no worse than its committed figure"
run validate --no-rows --check
expect_exit 0
expect_stdout_contains "PyTorch reference peak allocated, median |error| %"
expect_stdout_matches "^(ok|OPEN) +Megatron peak allocated"
expect_stdout_contains "Parameter counts against the real model classes"

case_name "validate --dataset pytorch-reference"
run validate --dataset pytorch-reference --format json
expect_exit 0
expect_json "len(d['rows']) == 585 * 7 and {r['dataset'] for r in d['rows']} == {'pytorch-reference'}"
expect_json "[s['quantity'] for s in d['summaries']][:3] == ['peak allocated', 'forward/backward allocated', 'optimizer step allocated']"
expect_json "all(t['name'].startswith('PyTorch reference') for t in d['targets']) and len(d['targets']) == 6"
expect_json "all(r['facets']['method'] in ('full', 'lora', 'qlora', 'frozen') for r in d['rows'])"
expect_json "all(r['skipped'] == r['reason'].startswith('out of target') for r in d['rows'])"
expect_json "len({c['preset'] for c in d['parameter_counts']}) == 48"

case_name "validate --dataset megatron leaves the others out"
run validate --dataset megatron --no-rows
expect_exit 0
expect_stdout_contains "megatron "
expect_stdout_not_contains "pytorch-reference"
expect_stdout_not_contains "Ultra-Scale"

case_name "validate --dataset refuses an unknown dataset and the other modes"
run validate --dataset nope
expect_exit 2
run validate --serving --dataset megatron
expect_exit 2
expect_stderr_contains "--dataset"

finish
