from pathlib import Path

from accuracy.gpu_step_section import gpu_step_section, kernel_split


def test_kernel_split_gives_shares_of_the_kernel_time(tmp_path):
    path = Path(tmp_path) / "steps.csv"
    path.write_text(
        "id,gemm_kernel_s,attention_kernel_s,elementwise_kernel_s,optimizer_kernel_s\n"
        "a,0.5,0.1,0.3,0.1\n"
        "empty,0,0,0,0\n"
    )
    split = kernel_split(path)
    assert abs(split["a"]["gemm"] - 0.5) < 1e-12 and abs(split["a"]["elementwise"] - 0.3) < 1e-12
    assert "empty" not in split


def test_section_lists_every_compared_step_and_is_empty_without_rows():
    assert gpu_step_section({}) == []
    measured = {
        "rows": [
            {
                "id": "b",
                "skipped": False,
                "measured_tok_s_gpu": 100.0,
                "predicted_tok_s_gpu": 110.0,
                "tok_error_pct": 10.0,
                "step_time": {"cpu_bound_s": 0.002},
            },
            {
                "id": "a",
                "skipped": False,
                "measured_tok_s_gpu": 100.0,
                "predicted_tok_s_gpu": 80.0,
                "tok_error_pct": -20.0,
                "step_time": {"cpu_bound_s": 0.0},
            },
            {"id": "gone", "skipped": True, "reason": "x"},
        ],
        "summaries": [
            {
                "group": "all",
                "rows": 2,
                "median_abs_tok_pct": 15.0,
                "p90_abs_tok_pct": 19.0,
                "bias_tok_pct": -5.0,
                "spearman_tok": 1.0,
            }
        ],
    }
    text = "\n".join(
        gpu_step_section(
            measured, split={"a": {"gemm": 0.5, "attention": 0.2, "elementwise": 0.3}}
        )[0]
    )
    assert text.index("| a ") < text.index("| b ")
    assert "gone" not in text
    assert "+10.0%" in text and "-20.0%" in text
    assert "50.0% / 20.0% / 30.0%" in text
