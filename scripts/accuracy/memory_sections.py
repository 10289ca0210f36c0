"""The memory accuracy page: how `vramplan validate`'s predictions of per-GPU memory compare with
the Megatron-LM, Ultra-Scale Playbook and torchtitan measurements. Each section is a list of
Markdown lines; scripts/accuracy/page.py puts them in order."""

import collections

from .figures import BAND, PLOT_DIR, PLOTS
from .markdown import gib, pct, signed_pct, table
from .rows import DATASET_NAMES, LARGEST_ERRORS, compared, dataset_name, group_order, nearest_rank


def target_status(t):
    """✓ met; open (held to the figure committed for it); ✗ missed (worse than that figure)."""
    if t["met"]:
        return "✓"
    if t.get("open") and t.get("passes"):
        return f"open (committed {t['committed']:.1f})"
    return "✗"


def targets_section(report):
    targets = report.get("targets", [])
    rows = []
    for t in targets:
        is_pct = t["name"].rstrip().endswith("%") or t["name"].endswith("% of peak")
        fmt = pct if is_pct else gib
        bound = "≤" if t["at_most"] else "≥"
        rows.append([t["name"], fmt(t["value"]), f"{bound} {fmt(t['target'])}", target_status(t)])
    met = sum(1 for t in targets if t["met"])
    still_open = [t for t in targets if not t["met"] and t.get("open") and t.get("passes")]
    missed = [t for t in targets if not t["met"] and not (t.get("open") and t.get("passes"))]
    out = [
        "## Targets",
        "",
        f"{met} of {len(targets)} targets met.",
        "",
        "CI holds every target (`vramplan validate --check`, and the unit test "
        "`Validation.TheAccuracyGateHoldsEveryTarget`): a target is met, or it is **open** — not "
        "met yet, and held to the figure committed when it was opened, so that it may only get "
        "better. Targets are never moved to pass; an open target's figure is lowered as it "
        "improves and removed once the target is met (src/validation/accuracy_gate.cc).",
        "",
        table(["target", "value", "goal", "status"], rows, "lrrl"),
    ]
    if still_open:
        out += ["", "**Open targets** (not met yet; the current figure, the target):", ""]
        out += [
            f"- {t['name']}: {t['value']:.1f} against {'≤' if t['at_most'] else '≥'} "
            f"{t['target']:g} (committed {t['committed']:.1f})"
            for t in still_open
        ]
    if missed:
        out += ["", f"**Missed:** {', '.join(t['name'] for t in missed)}."]
    return out


def summary_section(report):
    rows = []
    notes = []
    for s in report.get("summaries", []):
        rows.append(
            [
                dataset_name(s["dataset"]),
                s["quantity"],
                s["rows"],
                s["skipped"],
                pct(s["median_abs_pct"]),
                pct(s["p90_abs_pct"]),
                signed_pct(s["bias_pct"]),
            ]
        )
        # Say so when a summary leaves some of its dataset's rows out (out-of-scope families).
        all_rows = [
            r
            for r in report["rows"]
            if r["dataset"] == s["dataset"] and r["quantity"] == s["quantity"]
        ]
        if len(all_rows) > s["rows"] + s["skipped"]:
            groups = sorted({r["group"] for r in all_rows if not r["skipped"]})
            in_groups = [r for r in all_rows if r["group"] in groups]
            if len(in_groups) == s["rows"] + s["skipped"]:
                notes.append(
                    f"{dataset_name(s['dataset'])} {s['quantity']}: the summary covers the "
                    f"{', '.join(groups)} rows ({len(in_groups)} of {len(all_rows)}); the other "
                    f"families are out of scope and appear only under Skipped rows."
                )
    out = [
        "## Summary",
        "",
        "Error is (predicted − measured) / measured: positive over-predicts, negative "
        "under-predicts. Bias is the median signed error; p90 is the nearest-rank 90th "
        "percentile of |error|.",
        "",
        table(
            [
                "dataset",
                "quantity",
                "rows compared",
                "skipped",
                "median |error|",
                "p90 |error|",
                "bias",
            ],
            rows,
            "llrrrrr",
        ),
    ]
    if notes:
        out += [""] + [f"- {n}" for n in notes]
    return out


def confusion_section(report):
    f = report.get("fit_confusion", {})
    ran = f.get("ran", {})
    crashed = f.get("crashed", {})

    def line(label, counts):
        total = sum(counts.get(k, 0) for k in ("fits", "tight", "oom"))
        return [label] + [counts.get(k, 0) for k in ("fits", "tight", "oom")] + [total]

    return [
        "## Fit prediction (Ultra-Scale, H100 80 GB)",
        "",
        "Each Ultra-Scale layout either ran or crashed; vramplan's verdict for it is fits, "
        "tight or oom.",
        "",
        table(
            ["runs that…", "predicted fits", "predicted tight", "predicted oom", "total"],
            [line("ran", ran), line("crashed", crashed)],
            "lrrrr",
        ),
    ]


def ultrascale_breakdown_section(report):
    """Where the Ultra-Scale error sits, and the floor the sweep's own repeats put under it."""
    cells = {}
    for r in report["rows"]:
        if r["dataset"] != "ultrascale" or r["skipped"] or "error_pct" not in r:
            continue
        fields = dict((t[:2], t[2:]) for t in r["id"].split()[1:])
        pp_key = "pp = 1" if fields.get("pp") == "1" else "pp > 1"
        tp_key = "tp ≤ 4" if int(fields.get("tp", "1")) <= 4 else "tp ≥ 8"
        cells.setdefault((pp_key, tp_key), []).append(r["error_pct"])
    rows = []
    for key in sorted(cells):
        errors = sorted(cells[key])
        absolute = sorted(abs(e) for e in errors)
        rows.append(
            [
                key[0],
                key[1],
                len(errors),
                pct(nearest_rank(absolute, 0.5)),
                pct(nearest_rank(absolute, 0.9)),
                signed_pct(nearest_rank(errors, 0.5)),
            ]
        )
    floor = report.get("ultrascale_noise_floor", {})
    out = [
        "## Ultra-Scale: where the error is",
        "",
        table(
            ["pipeline", "tensor parallel", "runs", "median |error|", "p90 |error|", "bias"],
            rows,
            "llrrrr",
        ),
        "",
    ]
    if floor:
        out += [
            f"**Noise floor.** {floor['rows']} runs fall in {floor['groups']} groups whose "
            "per-GPU memory cannot differ (ZeRO-0, so it cannot depend on dp; a full pipeline, so "
            "not on grad_accum; same model, tp, pp and micro-batch). Compared with their own "
            f"group's median they are off by median {pct(floor['median_abs_pct'])} and p90 "
            f"{pct(floor['p90_abs_pct'])}: no prediction made from the layout alone can do better "
            "on those runs. The sweep is therefore judged against its own floor: median ≤ 5% and "
            "p90 ≤ 1.5 × the floor's p90, over the runs outside the pp = 1, tp ≥ 8 group, which "
            "is reported apart (Summary).",
            "",
            "Most of the remaining error is at pp = 1 with tp ≥ 8, where the sweep holds two "
            "regimes for the same layout: some runs measure what sequence-parallel activations "
            "predict, others about 4·h bytes more per token and layer — what keeping the "
            "all-gathered inputs of the two column-parallel linears would cost "
            "(`sp_saves_gathered_inputs`, docs/frameworks.md). Runs with pp > 1 follow the "
            "sharded model, so vramplan keeps that one.",
        ]
    return out


def uncertainty_section(report):
    bands = report.get("uncertainty", {})
    rows = []
    for key, label in [
        ("model_states", "weights, gradients, optimizer states, buffers"),
        ("activations", "activations, logits, head inputs"),
        ("reserved", "reserved total (allocator pool)"),
        ("device", "CUDA context, NCCL"),
    ]:
        b = bands.get(key)
        if not b:
            continue
        rows.append(
            [
                label,
                signed_pct(b["low_pct"]),
                signed_pct(b["high_pct"]),
                str(b["samples"]),
                b["basis"],
            ]
        )
    return [
        "## Uncertainty",
        "",
        "Every row and total carries a band, `bytes_low`..`bytes_high` in the JSON and "
        '"likely a–b" in the table: where the measured value fell for 80% of validated runs. '
        "For each class of row, the 10th and 90th percentiles of the signed error "
        "e = (predicted − measured) / measured give measured ∈ [predicted / (1 + e90), "
        "predicted / (1 + e10)]. The bands live in `data/uncertainty.json`, written by this "
        "script (`vramplan validate --bands`); a unit test fails when the file and the "
        "measurements disagree.",
        "",
        table(["rows", "e10", "e90", "runs", "basis"], rows, "lrrrl"),
    ]


def plots_section():
    out = ["## Plots", ""]
    for stem, _dataset, _quantity, title in PLOTS:
        out += [f"![{title}]({PLOT_DIR}/{stem}.svg)", ""]
    out.append(
        "Axes are log-scaled; the dashed line is predicted = measured and the grey band "
        f"±{BAND * 100:.0f}%. Points below the line are under-predictions."
    )
    return out


def skipped_section(report):
    counts = collections.OrderedDict()
    for r in report["rows"]:
        if not r["skipped"]:
            continue
        key = (r["dataset"], r["reason"] or "(no reason given)")
        entry = counts.setdefault(key, {"rows": 0, "ids": set(), "groups": set()})
        entry["rows"] += 1
        entry["ids"].add(r["id"])
        entry["groups"].add(r["group"])
    order = list(DATASET_NAMES)
    keys = sorted(
        counts,
        key=lambda k: (
            order.index(k[0]) if k[0] in order else len(order),
            -counts[k]["rows"],
            k[1],
        ),
    )
    rows = [
        [
            dataset_name(k[0]),
            k[1],
            ", ".join(group_order(counts[k]["groups"])),
            len(counts[k]["ids"]),
            counts[k]["rows"],
        ]
        for k in keys
    ]
    total = sum(c["rows"] for c in counts.values())
    return [
        "## Skipped rows",
        "",
        f"{total} rows were not compared. A Megatron-LM test contributes two rows (static and "
        "peak), so it counts once under runs and twice under rows.",
        "",
        table(["dataset", "reason", "groups", "runs", "rows"], rows, "lllrr"),
    ]


def largest_errors_section(report):
    out = ["## Largest errors", ""]
    datasets = []
    for r in report["rows"]:
        if r["dataset"] not in datasets and compared([r], r["dataset"]):
            datasets.append(r["dataset"])
    for dataset in datasets:
        rows = sorted(
            compared(report["rows"], dataset),
            key=lambda r: (-abs(r["error_pct"]), r["id"], r["quantity"]),
        )[:LARGEST_ERRORS]
        out += [
            f"### {dataset_name(dataset)}",
            "",
            table(
                ["id", "group", "quantity", "measured GiB", "predicted GiB", "error"],
                [
                    [
                        r["id"],
                        r["group"],
                        r["quantity"],
                        gib(r["measured_gib"]),
                        gib(r["predicted_gib"]),
                        signed_pct(r["error_pct"]),
                    ]
                    for r in rows
                ],
                "lllrrr",
            ),
            "",
        ]
    return out[:-1] if out[-1] == "" else out


def megatron_rows_section(report):
    rows = []
    for r in report["rows"]:
        if r["dataset"] != "megatron":
            continue
        if r["skipped"] or "error_pct" not in r:
            rows.append(
                [
                    r["id"],
                    r["group"],
                    r["quantity"],
                    gib(r["measured_gib"]),
                    "—",
                    "—",
                    "skipped: " + (r["reason"] or "no reason given"),
                ]
            )
        else:
            rows.append(
                [
                    r["id"],
                    r["group"],
                    r["quantity"],
                    gib(r["measured_gib"]),
                    gib(r["predicted_gib"]),
                    f"{r['predicted_gib'] - r['measured_gib']:+.2f}",
                    signed_pct(r["error_pct"]),
                ]
            )
    return [
        "## All Megatron-LM rows",
        "",
        "Δ is predicted − measured in GiB.",
        "",
        table(
            ["id", "group", "quantity", "measured GiB", "predicted GiB", "Δ GiB", "error"],
            rows,
            "lllrrrl",
        ),
    ]
