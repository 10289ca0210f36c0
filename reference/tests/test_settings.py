from vramref.scenario import Scenario
from vramref.settings import to_settings


def test_pure_bf16_single_gpu_says_what_ran():
    s, notes, in_target = to_settings(Scenario("Llama-3.1-8B", 2, optimizer="adamw-foreach"), "llama")
    assert in_target
    assert "framework" not in s  # plain PyTorch loop: explicit keys only
    assert (s["param_dtype"], s["grad_dtype"], s["optimizer_dtype"]) == ("bf16", "bf16", "bf16")
    assert s["master_weights"] is False and s["lazy_gradients"] is True
    assert s["optimizer_foreach_temporaries"] is True


def test_the_model_code_is_named_not_described_in_vramplan_numbers():
    for preset, family in (("Llama-3.1-8B", "llama"), ("gpt2", "gpt2")):
        s, _, _ = to_settings(Scenario(preset, 2, precision="fp32"), family)
        assert s["model_code"] == "transformers"
        assert "loss_bytes_per_logit" not in s and "gated_mlp_tensors" not in s


def test_layouts_map_to_vramplan_keys():
    fsdp, _, _ = to_settings(Scenario("Qwen3-8B", 2, layout="fsdp", world=4, dp=4, precision="fsdp-mixed"), "qwen3")
    assert (fsdp["framework"], fsdp["fsdp"], fsdp["fsdp_mixed_precision"]) == ("torchtitan", "full_shard", True)
    assert fsdp["global_batch"] == 4
    # layouts.apply_fsdp wraps layers and the root: the root keeps embedding, norm and head
    assert fsdp["fsdp_root_unit"] is True
    hsdp, _, _ = to_settings(Scenario("Qwen3-8B", 2, layout="hsdp", world=4, dp=4), "qwen3")
    assert (hsdp["fsdp"], hsdp["fsdp_shard_group"], hsdp["fsdp_root_unit"]) == ("hybrid_shard", 2, True)
    pp, _, _ = to_settings(
        Scenario("Qwen3-8B", 6, layout="pp", world=2, pp=2, vpp=2, schedule="interleaved", microbatches=4), "qwen3"
    )
    assert (pp["pp"], pp["vpp"], pp["schedule"], pp["global_batch"]) == (2, 2, "interleaved", 4)


def test_rows_vramplan_cannot_express_are_out_of_target():
    _, notes, in_target = to_settings(Scenario("Llama-3.1-8B", 2, layout="ddp", world=2, dp=2), "llama")
    assert not in_target and any("replicate" in n for n in notes)
    _, _, in_target = to_settings(Scenario("gpt2", 2, method="qlora", lora_targets="all-linear"), "gpt2")
    assert not in_target


def test_every_nth_layer_recompute_counts_layers():
    s, _, _ = to_settings(Scenario("Llama-3.1-8B", 4, recompute="full", recompute_every=2), "llama")
    assert (s["recompute"], s["recompute_layers"]) == ("full", 2)


def test_tp_rows_say_their_logits_are_gathered():
    # the plan's LM head gathers its output: vramplan's loss_parallel = false says so
    s, _, in_target = to_settings(Scenario("Llama-3.1-8B", 2, layout="tp", world=2, tp=2), "llama")
    assert in_target and s["tp"] == 2 and s["loss_parallel"] is False


def test_depth_transformers_builds_differently_is_out_of_target():
    # DeepSeek-V3: 3 dense layers first and one MTP module in the preset; the HF class has no MTP
    _, notes, in_target = to_settings(Scenario("DeepSeek-V3", 2), "deepseek_v3")
    assert not in_target
    assert any("first_k_dense_replace" in n for n in notes) and any("multi-token" in n for n in notes)
    _, _, in_target = to_settings(Scenario("DeepSeek-V2-Lite", 2), "deepseek_v2")
    assert in_target


def test_compare_rows_tolerates_only_a_few_bytes():
    import copy

    from compare_rows import rows_equal

    row = {"id": "x", "peak_allocated_bytes": 1000, "at_peak": {"parameters": 10}, "note": "n"}
    near = copy.deepcopy(row)
    near["peak_allocated_bytes"] += 4
    assert rows_equal(row, near)
    far = copy.deepcopy(row)
    far["at_peak"]["parameters"] += 1024
    assert not rows_equal(row, far)
    other = copy.deepcopy(row)
    other["note"] = "m"
    assert not rows_equal(row, other)


def test_dropout_is_on_where_the_config_sets_it():
    assert to_settings(Scenario("gpt2", 2), "gpt2")[0]["dropout"] is True  # p = 0.1, train mode
    assert "dropout" not in to_settings(Scenario("Llama-3.1-8B", 2), "llama")[0]


def test_context_parallel_rows_say_cp_and_run_ring_attention():
    from vramref.train import run

    sc = Scenario("Llama-3.2-1B", 1, seq_len=256, layout="cp", world=2, cp=2)
    s, _, in_target = to_settings(sc, "llama")
    assert in_target and (s["cp"], s["gpus"], s["fsdp"]) == (2, 2, "none") and "cp2" in sc.id()
    report, facts = run(sc)
    assert facts["sdpa_calls"]["flash"] > 0 and report.peak_bytes > 0
