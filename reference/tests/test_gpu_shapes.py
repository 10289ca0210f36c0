import json

from vramref.gpu_shapes import GROUPED_MAX_ROWS, main


def test_smoke_run_writes_every_kind_with_timings(tmp_path):
    out = tmp_path / "shapes.jsonl"
    assert main(["--output", str(out), "--device", "cpu", "--smoke"]) == 0
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    kinds = {r["kind"] for r in rows}
    assert kinds == {"environment", "gemm_shape", "grouped_gemm", "attention_shape", "memory", "optimizer"}
    for r in rows[1:]:
        assert "error" not in r, r
        assert r["timing"] == "cpu"
        assert r.get("forward_s", r.get("seconds", 0)) > 0
    attention = [r for r in rows if r["kind"] == "attention_shape"]
    assert all(r["forward_backward_s"] > 0 and r["forward_tflops"] > 0 for r in attention)


def test_grouped_rows_stay_under_the_row_limit(tmp_path):
    out = tmp_path / "shapes.jsonl"
    main(["--output", str(out), "--device", "cpu", "--smoke", "--parts", "grouped"])
    for r in map(json.loads, out.read_text().splitlines()[1:]):
        assert r["experts"] * r["tokens_per_expert"] <= GROUPED_MAX_ROWS


def test_summary_prices_attention_with_the_tile_bound(tmp_path):
    from vramref.gpu_shapes_summary import attention_time, dim_scale, main

    assert dim_scale(128) == 1
    assert dim_scale(64) == 0.77 and dim_scale(32) == 0.77 and dim_scale(512) == 0.81
    assert abs(dim_scale(160) - (1.0 + 0.69) / 2) < 1e-12
    row = dict(seq=4096, head_dim=128, heads=2, batch=1)
    flat = attention_time(row, 1e14, False, 132, shaped=False)
    # 2 heads x 32 tiles / 2 = 32 tiles in units of the longest: 132 / 32 times the flat time
    assert abs(attention_time(row, 1e14, False, 132, shaped=True) / flat - 132 / 32) < 1e-12
    runs = tmp_path / "run.jsonl"
    lines = [
        dict(kind="environment", gpu="NVIDIA H100 80GB HBM3", torch="x", sm_count=132),
        dict(kind="gemm_shape", m=1024, k=1024, n=1024, forward_s=1e-5, tflops=214.7),
        dict(kind="memory", op="add", elements=1 << 26, bytes=6 << 26, seconds=1e-4, gbps=3000),
        dict(kind="broken", error="OOM"),
    ]
    runs.write_text("\n".join(json.dumps(x) for x in lines) + "\n")
    assert main([str(runs)]) == 0
