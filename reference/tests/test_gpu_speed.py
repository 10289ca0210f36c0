import json

from vramref.gpu_speed import _busy_seconds, gemm_shapes, kernel_kind, trace_summary
from vramref.gpu_speed_dataset import rows_of


def test_kernels_are_sorted_by_what_they_compute():
    assert kernel_kind("nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_NNT") == "gemm"
    assert kernel_kind("sm90_xmma_gemm_bf16bf16_bf16f32") == "gemm"
    assert kernel_kind("cudnn_generated_fort_native_sdpa_sm90_flash_fprop_wgmma_f16") == "attention"
    assert kernel_kind("void pytorch_flash::flash_fwd_kernel<Flash_fwd_kernel_traits>") == "attention"
    assert kernel_kind("fmha_cutlassF_bf16_aligned_64x64_rf_sm80") == "attention"  # not a GEMM
    assert (
        kernel_kind("void at::native::(anonymous namespace)::multi_tensor_apply_kernel<FusedAdamMathFunctor>")
        == "optimizer"
    )
    assert kernel_kind("void at::native::vectorized_elementwise_kernel<8, silu_kernel>") == "elementwise"


def test_busy_time_counts_overlapping_kernels_once():
    assert _busy_seconds([]) == 0
    # µs intervals: [0, 10] and [5, 20] overlap (20 µs), [30, 40] apart (10 µs)
    assert abs(_busy_seconds([(30, 40), (0, 10), (5, 20)]) - 30e-6) < 1e-12


def test_trace_summary_reads_kernel_events_only(tmp_path):
    trace = {
        "traceEvents": [
            {"cat": "kernel", "name": "nvjet_gemm", "ts": 0, "dur": 100},
            {"cat": "kernel", "name": "elementwise_kernel", "ts": 100, "dur": 50},
            {"cat": "cpu_op", "name": "aten::mm", "ts": 0, "dur": 500},
        ]
    }
    path = tmp_path / "t.json"
    path.write_text(json.dumps(trace))
    s = trace_summary(path)
    assert s["kernels"] == 2
    assert abs(s["kernel_seconds_by_kind"]["gemm"] - 100e-6) < 1e-12
    assert abs(s["gpu_busy_seconds"] - 150e-6) < 1e-12


def test_gemm_sweep_uses_the_linear_layers_shapes():
    shapes = gemm_shapes()
    # Llama 3.1 8B's gate+up projection at TP 2: K = h, N = 2·f/2
    assert ("Llama-3.1-8B", "gate_up", 2, 4096, 4096, 14336) in shapes
    assert all(k > 0 and n > 0 for _, _, _, _, k, n in shapes)


def test_dataset_rows_name_the_catalog_gpu_and_skip_errors(tmp_path):
    run = tmp_path / "run.jsonl"
    step = {
        "kind": "step",
        "model": "Llama-3.2-1B",
        "num_layers": 16,
        "seq_len": 4096,
        "micro_batch": 1,
        "precision": "bf16",
        "recompute": "none",
        "optimizer": "adamw-fused",
        "tokens_per_s": 44022.0,
        "step_s": 0.093,
        "forward_s": 0.031,
        "backward_s": 0.056,
        "optimizer_s": 0.008,
        "trace": {"kernel_seconds_by_kind": {"gemm": 0.039}, "gpu_busy_seconds": 0.0867, "kernels": 1979},
    }
    lines = [
        {"kind": "environment", "gpu": "NVIDIA H200", "torch": "2.11.0", "transformers": "5.17.0"},
        step,
        {"kind": "step", "model": "x", "error": "OutOfMemoryError"},
    ]
    run.write_text("\n".join(json.dumps(x) for x in lines))
    rows = list(rows_of(run))
    assert len(rows) == 1
    assert rows[0]["id"] == "h200-141gb/Llama-3.2-1B/L16/s4096/b1/bf16/none"
    assert rows[0]["gemm_kernel_s"] == "0.039000" and rows[0]["attention_kernel_s"] == "0.000000"
