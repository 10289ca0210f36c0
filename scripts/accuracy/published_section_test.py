from accuracy.published_section import (
    calibration_text,
    compared_rows,
    finding,
    published_section,
    release_floor_text,
    skip_reasons,
)


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


def test_calibration_text_reports_the_held_out_part_of_a_fit():
    def group(name, median):
        return {
            "group": name,
            "rows": 5,
            "skipped": 0,
            "median_abs_tok_pct": median,
            "p90_abs_tok_pct": 2 * median,
            "bias_tok_pct": -median,
            "spearman_tok": 0.9,
        }

    fit = {
        "calibration": {"rows": 5},
        "summaries": [group("the rest", 8.0), group("held out", 27.0)],
    }
    text = calibration_text(fit)
    assert "8.0%" in text and "27.0%" in text and "not the defaults" in text
    assert calibration_text(None) == ""


def test_release_floor_text_states_the_spread():
    published = {
        "release_floor": {"groups": 4, "rows": 9, "median_abs_pct": 1.6, "p90_abs_pct": 13.4},
        "held_out_release_floor": {
            "groups": 2,
            "rows": 5,
            "median_abs_pct": 1.1,
            "p90_abs_pct": 34.0,
        },
    }
    text = release_floor_text(published)
    assert "9 rows" in text and "p90 13.4%" in text
    assert "1.1% and 34.0% (5 rows)" in text
    assert release_floor_text({}) == ""


def test_finding_says_which_held_out_target_is_met():
    def group(name, median, p90):
        return {
            "group": name,
            "rows": 4,
            "skipped": 0,
            "median_abs_tok_pct": median,
            "p90_abs_tok_pct": p90,
            "bias_tok_pct": 1.0,
            "spearman_tok": 0.9,
        }

    def text(median, p90):
        return finding({"summaries": [group("all", 8, 40), group("held out", median, p90)]})

    assert "the median met, the p90 not yet." in text(9.5, 29.7)
    assert "both met." in text(9.5, 19.0)
    assert "neither met yet." in text(12.0, 30.0)
    assert "the p90 met, the median not yet." in text(12.0, 15.0)
