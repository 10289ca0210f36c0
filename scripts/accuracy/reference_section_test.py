from accuracy.memory_sections import targets_section
from accuracy.page import markdown
from accuracy.reference_section import reference_section, spread


def reference_row(row_id, quantity, measured, predicted, family="llama", method="full", **kw):
    basis = kw.get("basis")
    return {
        "dataset": "pytorch-reference",
        "id": row_id,
        "group": family,
        "quantity": quantity,
        "skipped": False,
        "reason": "",
        "measured_gib": measured,
        "predicted_gib": predicted,
        "error_pct": (predicted - measured) / (basis or measured) * 100,
        "facets": {
            "family": family,
            "method": method,
            "layout": kw.get("layout", "single GPU"),
            "precision": "pure bf16",
            "attention": "sdpa -> flash",
            "model_code": kw.get("model_code", "transformers"),
            "peak_phase": kw.get("phase", "backward"),
            "predicted_peak_phase": kw.get("predicted_phase", "forward/backward"),
        },
    }


def small_report():
    rows = [
        reference_row("a", "peak allocated", 10.0, 9.0),
        reference_row("b", "peak allocated", 20.0, 21.0, family="qwen3", method="lora"),
        reference_row(
            "c", "peak allocated", 10.0, 10.0, method="qlora", phase="optimizer"
        ),  # phases disagree: 2 of 3 agree
        reference_row("a", "gradients at peak", 0.0, 0.5, basis=10.0),
        {
            "dataset": "pytorch-reference",
            "id": "d",
            "group": "gpt2",
            "quantity": "peak allocated",
            "skipped": True,
            "reason": "out of target: GPT-2's Conv1D projections stay bf16",
            "measured_gib": 5.0,
        },
    ]
    checks = [
        {"preset": "Llama", "part": "total", "reference": 8, "vramplan": 8, "matches": True},
        {"preset": "DS", "part": "total", "reference": 10, "vramplan": 12, "matches": False},
    ]
    return {
        "rows": rows,
        "summaries": [],
        "fit_confusion": {},
        "targets": [],
        "parameter_counts": checks,
    }


def peers():
    return {
        "rows": [
            {"id": "a", "reference_bytes": 10 * 2**30, "accelerate": {"bytes": 5 * 2**30}},
            {"id": "b", "reference_bytes": 20 * 2**30, "accelerate": {"not_applicable": "no"}},
        ],
        "time_per_estimate_ms": {"accelerate": 4.1},
    }


def test_spread_is_nearest_rank():
    assert spread([-10.0, 5.0, 1.0]) == (3, 5.0, 10.0, 1.0)
    assert spread([]) == (0, 0.0, 0.0, 0.0)


def test_section_groups_by_family_method_and_category():
    text = "\n".join(reference_section(small_report(), peers()))
    assert "3 rows compared, 1 out of target" in text
    assert "| llama | 2 | 0.0% | 10.0% | -10.0% |" in text
    assert "| LoRA (PEFT, torchtune) | 1 | 5.0% | 5.0% | +5.0% |" in text
    assert "### Per model code" in text and "| transformers | 3 |" in text
    assert "| QLoRA (torchao NF4) | 1 | 0.0% | 0.0% | +0.0% |" in text
    # a category's error is in % of the peak: 0.5 GiB of gradients against a 10 GiB peak
    assert "| gradients | 1 | 5.0% | 5.0% | +5.0% |" in text
    assert "for 2 of 3 rows" in text
    # accelerate runs on row a only: -50% against vramplan's -10% on the same row
    assert (
        "| accelerate estimate-memory (training column) | total | 1 | 50.0% | 50.0% | -50.0% "
        in text
    )
    assert "| 10.0% | 10.0% |" in text
    assert "accelerate 4.1 ms" in text
    assert "1 of 2 parts of 2 presets equal" in text
    assert "| DS | total | 10 | 12 | +2 |" in text


def test_section_is_absent_without_reference_rows():
    assert reference_section({"rows": []}) == []
    assert "## PyTorch reference" not in markdown(
        {"rows": [], "summaries": [], "fit_confusion": {}, "targets": []}
    )


def test_open_targets_are_listed_with_their_figures():
    report = {
        "targets": [
            {
                "name": "Reference p90 |error| %",
                "value": 27.8,
                "target": 3,
                "at_most": True,
                "met": False,
                "open": True,
                "passes": True,
                "committed": 27.8,
            },
            {
                "name": "Worse p90 |error| %",
                "value": 30.0,
                "target": 3,
                "at_most": True,
                "met": False,
                "open": True,
                "passes": False,
                "committed": 27.8,
            },
        ]
    }
    text = "\n".join(targets_section(report))
    assert "| Reference p90 \\|error\\| % | 27.8% | ≤ 3.0% | open (committed 27.8) |" in text
    assert "- Reference p90 |error| %: 27.8 against ≤ 3 (committed 27.8)" in text
    assert "**Missed:** Worse p90 |error| %." in text
