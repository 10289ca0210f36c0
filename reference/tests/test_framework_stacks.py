"""torchtune's and torchtitan's own stacks in the harness: settings, builders, short runs."""

import torch

from vramref.scenario import Scenario
from vramref.settings import to_settings
from vramref.torchtune_run import BUILDERS, build, lora_module_names


def test_torchtune_rows_name_the_model_code_and_torchtunes_modules():
    sc = Scenario(
        "Llama-3.1-8B",
        2,
        optimizer="adamw-fused",
        model_code="torchtune",
        method="lora",
        lora_targets="all-linear",
        lora_rank=64,
    )
    s, _, in_target = to_settings(sc, "llama")
    assert in_target and s["model_code"] == "torchtune"
    # adapters in the recipe's bf16, not PEFT's fp32; torchtune's own module names
    assert (s["adapter_dtype"], s["grad_dtype"], s["optimizer_dtype"]) == ("bf16", "bf16", "bf16")
    assert s["lora_targets"] == "q_proj,k_proj,v_proj,output_proj,w1,w2,w3"
    assert "torchtune" in sc.id() and sc.id() != Scenario("Llama-3.1-8B", 2).id()


def test_lora_names_follow_the_builders_arguments():
    assert lora_module_names("q,v") == ["q_proj", "v_proj"]
    assert lora_module_names("attention")[-1] == "output_proj"


def test_builders_make_the_rows_model_cut_to_its_layers():
    for preset, method in (("Llama-3.2-1B", "full"), ("Mistral-7B-v0.1", "qlora")):
        sc = Scenario(preset, 2, model_code="torchtune", method=method, lora_targets="q,v")
        model = build(sc)
        assert len(model.layers) == 2 and model.num_output_chunks == 8
        weights = [p for n, p in model.named_parameters() if "layers.0.mlp.w1" in n]
        if method == "qlora":  # every decoder linear NF4, adapted or not (FrozenNF4Linear)
            assert type(weights[0]).__name__ == "NF4Tensor"
        else:
            assert weights[0].dtype == torch.bfloat16
    assert set(BUILDERS) == {"Llama-3.2-1B", "Llama-3.1-8B", "Mistral-7B-v0.1", "Qwen2.5-7B"}


def test_a_short_torchtune_step_runs_and_peaks_at_the_loss():
    from vramref.train import run

    report, facts = run(Scenario("Llama-3.2-1B", 1, seq_len=256, model_code="torchtune"))
    assert facts["model_class"] == "TransformerDecoder"
    assert report.peak_bytes > 0 and report.peak_phase in ("forward", "backward")


def test_torchtitan_rows_run_its_model_and_fsdp():
    from vramref.torchtitan_run import FLAVORS
    from vramref.train import run

    sc = Scenario("Llama-3.2-1B", 1, seq_len=256, precision="fsdp-mixed", model_code="torchtitan")
    s, notes, in_target = to_settings(sc, "llama")
    assert s["framework"] == "torchtitan" and s["fsdp"] == "full_shard" and "model_code" not in s
    assert in_target and any("torchtitan 0.3.0" in n for n in notes)
    report, facts = run(sc)
    assert facts["model_class"] == "Llama3Model" and report.peak_bytes > 0
    assert set(FLAVORS) == {"Llama-3.2-1B", "Llama-3.1-8B"}


def test_rms_norm_runs_as_cudas_fused_kernel_when_the_dtypes_match():
    from torch._subclasses.fake_tensor import FakeTensorMode

    from vramref.gpu_kernels import emulate_cuda_rms_norm

    with FakeTensorMode(), emulate_cuda_rms_norm():
        x = torch.empty(2, 8, 16, dtype=torch.bfloat16, requires_grad=True)
        same = torch.nn.functional.rms_norm(x, (16,), torch.empty(16, dtype=torch.bfloat16), 1e-5)
        mixed = torch.nn.functional.rms_norm(x.float(), (16,), torch.empty(16, dtype=torch.bfloat16), 1e-5)
    assert type(same.grad_fn).__name__ == "_FusedRmsNormBackward"  # input, rstd, weight saved
    assert type(mixed.grad_fn).__name__ != "_FusedRmsNormBackward"  # the composite, as on CUDA
