from accuracy.page import markdown


def measured_row(dataset, group, quantity, measured, predicted, row_id):
    return {
        "dataset": dataset,
        "group": group,
        "quantity": quantity,
        "id": row_id,
        "skipped": False,
        "reason": "",
        "measured_gib": measured,
        "predicted_gib": predicted,
        "error_pct": (predicted - measured) / measured * 100,
    }


def small_report():
    rows = [
        measured_row("megatron", "gpt", "peak allocated", 40.0, 44.0, "gpt-a"),
        measured_row("megatron", "gpt", "peak allocated", 20.0, 19.0, "gpt-b"),
        {
            "dataset": "megatron",
            "group": "vision",
            "quantity": "peak allocated",
            "id": "vit-a",
            "skipped": True,
            "reason": "not a language model",
            "measured_gib": 10.0,
        },
    ]
    summary = {
        "dataset": "megatron",
        "quantity": "peak allocated",
        "rows": 2,
        "skipped": 0,
        "median_abs_pct": 7.5,
        "p90_abs_pct": 10.0,
        "bias_pct": 2.5,
    }
    targets = [
        {
            "name": "Megatron median |error| %",
            "value": 7.5,
            "target": 10,
            "at_most": True,
            "met": True,
        },
        {
            "name": "Megatron p90 |error| %",
            "value": 10.0,
            "target": 5,
            "at_most": True,
            "met": False,
        },
    ]
    return {"rows": rows, "summaries": [summary], "fit_confusion": {}, "targets": targets}


def test_page_reports_targets_errors_and_skipped_rows():
    page = markdown(small_report())
    assert "1 of 2 targets met." in page
    assert "| Megatron median \\|error\\| % | 7.5% | ≤ 10.0% | ✓ |" in page
    assert "| gpt-a | gpt | peak allocated | 40.00 | 44.00 | +10.0% |" in page
    assert "| Megatron-LM | not a language model | vision | 1 | 1 |" in page
    # The summary covers the gpt rows only; the page says why the vision row is missing from it.
    assert "the summary covers the gpt rows (2 of 3)" in page
    assert "# Throughput" not in page  # no throughput report given


def test_page_sections_come_in_order():
    page = markdown(small_report())
    headings = [line for line in page.split("\n") if line.startswith("## ")]
    assert headings[:3] == [
        "## Targets",
        "## Summary",
        "## Fit prediction (Ultra-Scale, H100 80 GB)",
    ]
    assert headings[-1] == "## All Megatron-LM rows"
