from accuracy.published_section import compared_rows, published_section, skip_reasons


def row(row_id, skipped=False, reason="", error=0.0):
    r = {"id": row_id, "skipped": skipped, "reason": reason, "gpu": "h100-80gb", "gpus": 8}
    if not skipped:
        r.update(
            precision="bf16",
            measured_tok_s_gpu=100.0,
            predicted_tok_s_gpu=100.0 + error,
            tok_error_pct=error,
        )
    return r


def test_skip_reasons_count_each_reason_most_first():
    published = {"rows": [row("a", True, "x"), row("b", True, "y"), row("c", True, "y"), row("d")]}
    assert skip_reasons(published) == [("y", 2), ("x", 1)]
    assert [r["id"] for r in compared_rows(published)] == ["d"]


def test_section_lists_the_largest_errors_first_and_is_empty_without_rows():
    assert published_section({}) == []
    published = {
        "rows": [row("small", error=1.0), row("large", error=-50.0)],
        "summaries": [
            {
                "group": "all",
                "rows": 2,
                "skipped": 0,
                "median_abs_tok_pct": 25.5,
                "p90_abs_tok_pct": 50.0,
                "bias_tok_pct": -24.5,
                "spearman_tok": 1.0,
            }
        ],
    }
    text = "\n".join("\n".join(part) for part in published_section(published))
    assert "| all | 2 | 0 | 25.5% | 50.0% | -24.5% | 1.000 |" in text
    assert text.index("| large |") < text.index("| small |")
