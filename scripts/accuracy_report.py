#!/usr/bin/env python3
"""Turns `vramplan validate --format json` into docs/accuracy.md and its plots.

Usage: scripts/accuracy_report.py [REPORT.json | -] [--docs DIR]

Reads the validation report from the file (or stdin when it is absent or "-"),
writes DIR/accuracy.md (DIR defaults to the repository's docs/) and the SVG
scatter plots DIR/accuracy/*.svg. The output holds no timestamps and the SVGs
are written deterministically, so regenerating without changes to the numbers
leaves every file byte-for-byte the same. Normally run through
scripts/accuracy_report.sh.
"""

import argparse
import collections
import json
import math
import os
import sys

try:
    import matplotlib
except ModuleNotFoundError:
    sys.exit(
        "accuracy_report.py: matplotlib is missing for " + sys.executable + "; install "
        "python3-matplotlib or run it through scripts/accuracy_report.sh, which finds a python3 "
        "that has it"
    )

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402  (the backend must be chosen first)
import matplotlib.ticker  # noqa: E402

REGENERATE = "scripts/accuracy_report.sh"
PLOT_DIR = "accuracy"  # relative to the docs directory
BAND = 0.10  # the shaded band around y = x

# Fixed colours per group so plots keep their look from run to run.
GROUP_COLOURS = {
    "gpt": "#1f77b4",
    "moe": "#d62728",
    "1B": "#1f77b4",
    "3B": "#2ca02c",
    "8B": "#ff7f0e",
    "80B": "#d62728",
}
FALLBACK_COLOURS = ["#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"]

# (file stem, dataset, quantity, title prefix)
PLOTS = [
    ("megatron_static", "megatron", "static allocated", "Megatron-LM: static allocated memory"),
    ("megatron_peak", "megatron", "peak allocated", "Megatron-LM: peak allocated memory"),
    ("ultrascale_reported", "ultrascale", "reported", "Ultra-Scale Playbook: reported memory"),
]

DATASET_NAMES = {
    "megatron": "Megatron-LM",
    "ultrascale": "Ultra-Scale (ran)",
    "ultrascale-crashed": "Ultra-Scale (crashed)",
    "torchtitan": "torchtitan (published)",
}

LARGEST_ERRORS = 15


# ---------------------------------------------------------------- formatting


def gib(value):
    return f"{value:.2f}"


def pct(value):
    return f"{value:.1f}%"


def signed_pct(value):
    return f"{value:+.1f}%"


def cell(text):
    """Makes text safe inside a Markdown table cell."""
    return str(text).replace("|", "\\|").replace("\n", " ")


def table(header, rows, align=None):
    """A Markdown table; align is a string of 'l'/'r' per column."""
    align = align or "l" * len(header)
    rule = ["---:" if a == "r" else "---" for a in align]
    out = ["| " + " | ".join(cell(h) for h in header) + " |", "| " + " | ".join(rule) + " |"]
    for row in rows:
        out.append("| " + " | ".join(cell(c) for c in row) + " |")
    return "\n".join(out)


def dataset_name(dataset):
    return DATASET_NAMES.get(dataset, dataset)


def group_order(groups):
    """Known groups in their natural order (gpt, moe; 1B, 3B, 8B, 80B), then the rest."""
    known = [g for g in GROUP_COLOURS if g in groups]
    return known + sorted(g for g in groups if g not in GROUP_COLOURS)


def compared(rows, dataset, quantity=None):
    return [
        r
        for r in rows
        if r["dataset"] == dataset
        and (quantity is None or r["quantity"] == quantity)
        and not r["skipped"]
        and "error_pct" in r
    ]


def find_summary(report, dataset, quantity):
    for s in report.get("summaries", []):
        if s["dataset"] == dataset and s["quantity"] == quantity:
            return s
    return None


# --------------------------------------------------------------------- plots


def plot(report, stem, dataset, quantity, title, path):
    rows = compared(report["rows"], dataset, quantity)
    summary = find_summary(report, dataset, quantity)

    plt.rcParams["svg.hashsalt"] = "vramplan"
    plt.rcParams["svg.fonttype"] = "path"
    fig, ax = plt.subplots(figsize=(7, 6.2))

    values = [r["measured_gib"] for r in rows] + [r["predicted_gib"] for r in rows]
    values = [v for v in values if v > 0]
    lo = min(values) / 1.3 if values else 0.1
    hi = max(values) * 1.3 if values else 100

    xs = [lo, hi]
    ax.fill_between(
        xs,
        [x * (1 - BAND) for x in xs],
        [x * (1 + BAND) for x in xs],
        color="#999999",
        alpha=0.2,
        linewidth=0,
        label=f"±{BAND * 100:.0f}%",
        zorder=1,
    )
    ax.plot(xs, xs, color="#444444", linestyle="--", linewidth=1, label="predicted = measured", zorder=2)

    by_group = collections.defaultdict(list)
    for r in rows:
        by_group[r["group"]].append(r)
    many = len(rows) > 300
    fallback = iter(FALLBACK_COLOURS)
    for group in group_order(by_group):
        points = by_group[group]
        colour = GROUP_COLOURS.get(group) or next(fallback, "#000000")
        ax.scatter(
            [p["measured_gib"] for p in points],
            [p["predicted_gib"] for p in points],
            s=10 if many else 26,
            alpha=0.55 if many else 0.85,
            color=colour,
            edgecolors="none",
            label=f"{group} ({len(points)})",
            zorder=3,
        )

    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlim(lo, hi)
    ax.set_ylim(lo, hi)
    ax.set_aspect("equal")
    ax.set_xlabel("measured (GiB)")
    ax.set_ylabel("predicted by vramplan (GiB)")
    ax.grid(True, which="major", color="#dddddd", linewidth=0.6)
    ax.grid(True, which="minor", color="#f0f0f0", linewidth=0.4)
    ax.xaxis.set_major_formatter(matplotlib.ticker.FuncFormatter(lambda v, _: f"{v:g}"))
    ax.yaxis.set_major_formatter(matplotlib.ticker.FuncFormatter(lambda v, _: f"{v:g}"))
    if summary:
        stats = (
            f"median |error| {pct(summary['median_abs_pct'])}, "
            f"p90 {pct(summary['p90_abs_pct'])}, bias {signed_pct(summary['bias_pct'])}, "
            f"n = {summary['rows']}"
        )
    else:
        stats = f"n = {len(rows)}"
    ax.set_title(f"{title}\n{stats}", fontsize=11)
    legend = ax.legend(loc="upper left", fontsize=9, framealpha=0.9, markerscale=2 if many else 1)
    handles = legend.legend_handles if hasattr(legend, "legend_handles") else legend.legendHandles
    for handle in handles[2:]:  # the group markers, shown opaque; not the band or the line
        handle.set_alpha(1)
    fig.tight_layout()
    fig.savefig(path, format="svg", metadata={"Date": None})
    plt.close(fig)


# ------------------------------------------------------------------ markdown


def targets_section(report):
    rows = []
    for t in report.get("targets", []):
        is_pct = t["name"].rstrip().endswith("%")
        fmt = pct if is_pct else gib
        bound = "≤" if t["at_most"] else "≥"
        rows.append([t["name"], fmt(t["value"]), f"{bound} {fmt(t['target'])}", "✓" if t["met"] else "✗"])
    met = sum(1 for t in report.get("targets", []) if t["met"])
    total = len(report.get("targets", []))
    return [
        "## Targets",
        "",
        f"{met} of {total} targets met.",
        "",
        table(["target", "value", "goal", "met"], rows, "lrrl"),
    ]


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
            r for r in report["rows"] if r["dataset"] == s["dataset"] and r["quantity"] == s["quantity"]
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
            ["dataset", "quantity", "rows compared", "skipped", "median |error|", "p90 |error|", "bias"],
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


def nearest_rank(sorted_values, fraction):
    """The nearest-rank percentile, as `vramplan validate` computes it."""
    n = len(sorted_values)
    return sorted_values[max(1, min(n, math.ceil(fraction * n))) - 1]


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
        rows.append([key[0], key[1], len(errors), pct(nearest_rank(absolute, 0.5)),
                     pct(nearest_rank(absolute, 0.9)), signed_pct(nearest_rank(errors, 0.5))])
    floor = report.get("ultrascale_noise_floor", {})
    out = [
        "## Ultra-Scale: where the error is",
        "",
        table(["pipeline", "tensor parallel", "runs", "median |error|", "p90 |error|", "bias"],
              rows, "llrrrr"),
        "",
    ]
    if floor:
        out += [
            f"**Noise floor.** {floor['rows']} runs fall in {floor['groups']} groups whose "
            "per-GPU memory cannot differ (ZeRO-0, so it cannot depend on dp; a full pipeline, so "
            "not on grad_accum; same model, tp, pp and micro-batch). Compared with their own "
            f"group's median they are off by median {pct(floor['median_abs_pct'])} and p90 "
            f"{pct(floor['p90_abs_pct'])}: no prediction made from the layout alone can do better "
            "on those runs, so the p90 ≤ 10% target sits at the sweep's own floor.",
            "",
            "Most of the remaining error is at pp = 1 with tp ≥ 8, where the sweep holds two "
            "regimes for the same layout: some runs measure what sequence-parallel activations "
            "predict, others about 4·h bytes more per token and layer — what keeping the "
            "all-gathered inputs of the two column-parallel linears would cost "
            "(`sp_saves_gathered_inputs`, docs/frameworks.md). Runs with pp > 1 follow the "
            "sharded model, so vramplan keeps that one.",
        ]
    return out


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
        key=lambda k: (order.index(k[0]) if k[0] in order else len(order), -counts[k]["rows"], k[1]),
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
            rows.append([r["id"], r["group"], r["quantity"], gib(r["measured_gib"]), "—", "—",
                         "skipped: " + (r["reason"] or "no reason given")])
        else:
            rows.append([r["id"], r["group"], r["quantity"], gib(r["measured_gib"]),
                         gib(r["predicted_gib"]), f"{r['predicted_gib'] - r['measured_gib']:+.2f}",
                         signed_pct(r["error_pct"])])
    return [
        "## All Megatron-LM rows",
        "",
        "Δ is predicted − measured in GiB.",
        "",
        table(["id", "group", "quantity", "measured GiB", "predicted GiB", "Δ GiB", "error"],
              rows, "lllrrrl"),
    ]


def uncertainty_section(report):
    bands = report.get("uncertainty", {})
    rows = []
    for key, label in [("model_states", "weights, gradients, optimizer states, buffers"),
                       ("activations", "activations, logits, head inputs"),
                       ("reserved", "reserved total (allocator pool)"),
                       ("device", "CUDA context, NCCL")]:
        b = bands.get(key)
        if not b:
            continue
        rows.append([label, signed_pct(b["low_pct"]), signed_pct(b["high_pct"]),
                     str(b["samples"]), b["basis"]])
    return [
        "## Uncertainty",
        "",
        "Every row and total carries a band, `bytes_low`..`bytes_high` in the JSON and "
        "\"likely a–b\" in the table: where the measured value fell for 80% of validated runs. "
        "For each class of row, the 10th and 90th percentiles of the signed error "
        "e = (predicted − measured) / measured give measured ∈ [predicted / (1 + e90), "
        "predicted / (1 + e10)]. The bands live in `data/uncertainty.json`, written by this "
        "script (`vramplan validate --bands`); a unit test fails when the file and the "
        "measurements disagree.",
        "",
        table(["rows", "e10", "e90", "runs", "basis"], rows, "lrrrl"),
    ]


def serving_section(report):
    serving = report.get("serving")
    if not serving:
        return ["## Serving (published vLLM / SGLang figures)", "",
                "Not in this report (run with `vramplan validate --serving --format json`)."]
    summary = [[s["quantity"], str(s["rows"]), pct(s["median_abs_pct"]), pct(s["max_abs_pct"])]
               for s in serving["summaries"]]
    rows = []
    for r in serving["rows"]:
        tokens = r["unit"] == "tokens"
        fmt = (lambda v: f"{v:,.0f}") if tokens else (lambda v: f"{v:.2f} GiB")
        rows.append([r["id"], r["engine"], r["quantity"], fmt(r["published"]), fmt(r["predicted"]),
                     signed_pct(r["error_pct"]), f"[source]({r['source']})"])
    return [
        "## Serving (published vLLM / SGLang figures)",
        "",
        "`vramplan validate --serving` predicts the memory figures that vLLM and SGLang logged in "
        "public runs (data/measurements/serving_published.csv), with the same default conventions "
        "every `vramplan infer` user gets.",
        "",
        table(["quantity", "rows", "median |error|", "max |error|"], summary, "lrrr"),
        "",
        table(["run", "engine", "quantity", "published", "predicted", "error", "source"], rows,
              "lllrrrl"),
    ]


def markdown(report, throughput=None):
    parts = [
        ["# vramplan accuracy", "",
         f"Regenerate with `{REGENERATE}` (runs `vramplan validate --format json` and rewrites "
         "this page and its plots)."],
        targets_section(report),
        summary_section(report),
        confusion_section(report),
        ultrascale_breakdown_section(report),
        uncertainty_section(report),
        serving_section(report),
        plots_section(),
        skipped_section(report),
        largest_errors_section(report),
        megatron_rows_section(report),
    ]
    if throughput is not None:
        parts += throughput_sections(throughput)
    return "\n\n".join("\n".join(p) for p in parts) + "\n"


# ------------------------------------------------ throughput (step time)
# `vramplan validate --throughput --format json`: the step-time model against the Ultra-Scale
# Playbook sweep's measured tokens/s per GPU and MFU. Kept apart from the memory report above.

THROUGHPUT_PLOT = "throughput"
THROUGHPUT_BAND = 0.25
MODEL_ORDER = ["1B", "3B", "8B", "80B"]


def throughput_rows(tp):
    return [r for r in tp["rows"] if not r["skipped"]]


def nodes_of(row_id):
    """'8B n16 dp4 tp8 ...' -> 16."""
    for word in row_id.split():
        if word.startswith("n") and word[1:].isdigit():
            return int(word[1:])
    return 0


def plot_throughput(tp, path):
    rows = throughput_rows(tp)
    plt.rcParams["svg.hashsalt"] = "vramplan"
    plt.rcParams["svg.fonttype"] = "path"
    fig, ax = plt.subplots(figsize=(7, 6.2))
    values = [v for r in rows for v in (r["measured_tok_s_gpu"], r["predicted_tok_s_gpu"]) if v > 0]
    lo, hi = min(values) / 1.3, max(values) * 1.3
    xs = [lo, hi]
    ax.fill_between(xs, [x * (1 - THROUGHPUT_BAND) for x in xs],
                    [x * (1 + THROUGHPUT_BAND) for x in xs], color="#999999", alpha=0.2,
                    linewidth=0, label=f"±{THROUGHPUT_BAND * 100:.0f}%", zorder=1)
    ax.plot(xs, xs, color="#444444", linestyle="--", linewidth=1, label="predicted = measured",
            zorder=2)
    summaries = {s["model"]: s for s in tp["summaries"]}
    for model in MODEL_ORDER:
        points = [r for r in rows if r["model"] == model]
        if not points:
            continue
        fitted = "fitted" if summaries.get(model, {}).get("fitted") else "held out"
        ax.scatter([p["measured_tok_s_gpu"] for p in points],
                   [p["predicted_tok_s_gpu"] for p in points], s=9, alpha=0.5,
                   color=GROUP_COLOURS.get(model, "#000000"), edgecolors="none",
                   label=f"{model}, {fitted} ({len(points)})", zorder=3)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlim(lo, hi)
    ax.set_ylim(lo, hi)
    ax.set_aspect("equal")
    ax.set_xlabel("measured tokens/s per GPU")
    ax.set_ylabel("predicted by vramplan")
    ax.grid(True, which="major", color="#dddddd", linewidth=0.6)
    ax.xaxis.set_major_formatter(matplotlib.ticker.FuncFormatter(lambda v, _: f"{v:g}"))
    ax.yaxis.set_major_formatter(matplotlib.ticker.FuncFormatter(lambda v, _: f"{v:g}"))
    everything = summaries.get("all")
    stats = (f"median |error| {pct(everything['median_abs_tok_pct'])}, Spearman "
             f"{everything['spearman_tok']:.2f}, n = {everything['rows']}") if everything else ""
    ax.set_title(f"Ultra-Scale Playbook: tokens/s per GPU\n{stats}", fontsize=11)
    legend = ax.legend(loc="upper left", fontsize=9, framealpha=0.9, markerscale=2)
    handles = legend.legend_handles if hasattr(legend, "legend_handles") else legend.legendHandles
    for handle in handles[2:]:
        handle.set_alpha(1)
    fig.tight_layout()
    fig.savefig(path, format="svg", metadata={"Date": None})
    plt.close(fig)


def twin_noise(tp):
    """Pairs of runs identical but for ZeRO 0 vs 1 (which barely changes the work): how far
    apart the sweep measures them, as |ln(a/b)|."""
    by_layout = collections.defaultdict(dict)
    for r in tp["rows"]:
        words = r["id"].split()
        zero = [w for w in words if w.startswith("zero")]
        if not zero or r["measured_tok_s_gpu"] <= 0:
            continue
        key = " ".join(w for w in words if not w.startswith("zero"))
        by_layout[key].setdefault(zero[0], r["measured_tok_s_gpu"])
    gaps = sorted(abs(math.log(v["zero0"] / v["zero1"]))
                  for v in by_layout.values() if "zero0" in v and "zero1" in v)
    return gaps


def throughput_sections(tp):
    c = tp["constants"]
    summary_rows = []
    for s in tp["summaries"]:
        role = "" if s["model"] == "all" else ("fitted" if s["fitted"] else "held out")
        summary_rows.append([s["model"], role, s["rows"], pct(s["median_abs_tok_pct"]),
                             pct(s["p90_abs_tok_pct"]), signed_pct(s["bias_tok_pct"]),
                             pct(s["median_abs_mfu_pct"]), f"{s['spearman_tok']:.3f}",
                             f"{s['spearman_mfu']:.3f}"])
    target_rows = []
    for t in tp.get("targets", []):
        is_pct = t["name"].rstrip().endswith("%")
        value = pct(t["value"]) if is_pct else f"{t['value']:.3f}"
        goal = pct(t["target"]) if is_pct else f"{t['target']:.2f}"
        target_rows.append([t["name"], value, f"{'≤' if t['at_most'] else '≥'} {goal}",
                            "✓" if t["met"] else "✗"])
    rows = throughput_rows(tp)
    by_nodes = collections.defaultdict(list)
    for r in rows:
        by_nodes[nodes_of(r["id"])].append(r)
    node_rows = []
    for nodes in sorted(by_nodes):
        errors = sorted(abs(r["tok_error_pct"]) for r in by_nodes[nodes])
        signed = sorted(r["tok_error_pct"] for r in by_nodes[nodes])
        node_rows.append([nodes, nodes * 8, len(errors), pct(errors[len(errors) // 2]),
                          signed_pct(signed[len(signed) // 2])])
    small_bias = max((abs(float(row[4].rstrip("%"))) for row in node_rows if row[0] <= 16),
                     default=0)
    per_model = {s["model"]: s for s in tp["summaries"]}
    fitted = [m for m in MODEL_ORDER if per_model.get(m, {}).get("fitted")]
    held_out = [m for m in MODEL_ORDER if m in per_model and m not in fitted]

    def medians(models):
        return ", ".join(f"{m} {pct(per_model[m]['median_abs_tok_pct'])}" for m in models)

    fitted_text, held_out_text = medians(fitted), medians(held_out)
    gaps = twin_noise(tp)
    noise = (f"{len(gaps)} pairs of runs differ only in ZeRO stage 0 vs 1, which changes the work "
             f"by a parameter all-gather: the sweep measures them a median "
             f"{pct((math.exp(gaps[len(gaps) // 2]) - 1) * 100)} apart, and a quarter of the "
             f"pairs more than {pct((math.exp(gaps[3 * len(gaps) // 4]) - 1) * 100)} apart "
             f"(largest: ×{math.exp(gaps[-1]):.0f}).") if gaps else ""
    worst = sorted(rows, key=lambda r: (-abs(r["tok_error_pct"]), r["id"]))[:LARGEST_ERRORS]
    constants = [[k, f"{v:.3g}"] for k, v in c.items()]
    return [
        ["# Throughput: step time against measured runs", "",
         "Regenerate with the same script (it also runs `vramplan validate --throughput "
         "--format json`). Every run of the Ultra-Scale Playbook sweep (nanotron, 1–64 nodes of "
         "8 H100 80GB, seq 4096, global batch 256 sequences) is predicted by the step-time model "
         "(README \"Roofline and step time\") on `h100-80gb` with its catalog cluster (8 GPUs per "
         "node, 450 GB/s NVLink, 50 GB/s network per GPU), and compared with the measured "
         "`tok_s_gpu` and `mfu_pct`."],
        ["## Throughput summary", "",
         "Error is (predicted − measured) / measured of tokens/s per GPU; bias is the median "
         "signed error. ρ is Spearman's rank correlation of predicted and measured: how well "
         "the model orders layouts, which is what the planner needs. The MFU columns compare "
         "with the sweep's `mfu_pct`, which counts nanotron's FLOPs (6·N with the embedding, "
         "twice for tied embeddings when pp > 1, plus 12·L·s·h per token); vramplan's own MFU "
         "counts only matmul weights (no lookup embedding), so the prediction is converted to "
         "nanotron's count first.",
         "",
         table(["model", "constants", "rows", "median |error|", "p90 |error|", "bias",
                "MFU median |error|", "ρ tokens/s", "ρ MFU"], summary_rows, "llrrrrrrr"),
         "",
         f"The constants were fitted on the {' and '.join(fitted)} rows only (`vramplan validate "
         f"--throughput --calibrate`); {' and '.join(held_out)} are held out. Median error: "
         f"{held_out_text} held out against {fitted_text} fitted."],
        ["## Throughput targets", "", table(["target", "value", "goal", "met"], target_rows,
                                            "lrrl")],
        ["## Error by cluster size", "",
         table(["nodes", "GPUs", "rows", "median |error|", "bias"], node_rows, "rrrrr"), "",
         f"Up to 16 nodes the bias stays within ±{small_bias:.0f}%; beyond, the sweep's runs "
         "are far slower than any term of the model explains (MFU around 1% with pipelines "
         "crossing many nodes), and the model over-predicts them."],
        ["## Measurement noise", "", noise, "",
         "Per-row errors of that size are noise in the data, not in the model; the median "
         "error and the rank correlation are the telling figures."],
        ["## Fitted constants", "",
         "Fitted within physically plausible ranges (include/vramplan/step_time.h); several sit "
         "at an edge of their range. They describe nanotron's eager PyTorch on that cluster: "
         "a large CPU cost per kernel (GPUs wait for Python when tensor parallelism makes "
         "kernels small), slow flash attention, and very slow pipeline sends between nodes. "
         "Frameworks with fused kernels, CUDA graphs and overlapped communication (Megatron-LM "
         "with Transformer Engine) will run faster than predicted.",
         "",
         table(["constant", "value"], constants, "lr")],
        [f"![Ultra-Scale Playbook: tokens/s per GPU]({PLOT_DIR}/{THROUGHPUT_PLOT}.svg)", "",
         f"Log axes; the dashed line is predicted = measured, the grey band ±"
         f"{THROUGHPUT_BAND * 100:.0f}%."],
        ["## Largest throughput errors", "",
         table(["run", "measured tok/s", "predicted", "error", "measured MFU", "predicted MFU"],
               [[r["id"], f"{r['measured_tok_s_gpu']:.0f}", f"{r['predicted_tok_s_gpu']:.0f}",
                 signed_pct(r["tok_error_pct"]), pct(r["measured_mfu_pct"]),
                 pct(r["predicted_mfu_pct"])] for r in worst], "lrrrrr")],
    ]


# ---------------------------------------------------------------------- main


def write_if_changed(path, text):
    """Writes text unless the file already holds exactly that (keeps mtimes quiet)."""
    try:
        with open(path, encoding="utf-8") as f:
            if f.read() == text:
                return
    except FileNotFoundError:
        pass
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("report", nargs="?", default="-", help="validate JSON (default: stdin)")
    parser.add_argument("--docs", default=os.path.join(here, "..", "docs"),
                        help="directory that receives accuracy.md and accuracy/ (default: docs/)")
    parser.add_argument("--serving", help="`vramplan validate --serving --format json` output")
    parser.add_argument("--throughput", metavar="REPORT.json",
                        help="also `vramplan validate --throughput --format json`: step-time "
                             "section and plot")
    args = parser.parse_args()

    if args.report == "-":
        report = json.load(sys.stdin)
    else:
        with open(args.report, encoding="utf-8") as f:
            report = json.load(f)
    if args.serving:
        with open(args.serving, encoding="utf-8") as f:
            report["serving"] = json.load(f)
    for key in ("rows", "summaries", "fit_confusion", "targets"):
        if key not in report:
            sys.exit(f"accuracy_report: the report has no '{key}' key; is it `vramplan validate --format json`?")

    docs = os.path.normpath(args.docs)
    plot_dir = os.path.join(docs, PLOT_DIR)
    os.makedirs(plot_dir, exist_ok=True)

    written = []
    for stem, dataset, quantity, title in PLOTS:
        path = os.path.join(plot_dir, stem + ".svg")
        plot(report, stem, dataset, quantity, title, path)
        written.append(path)
    throughput = None
    if args.throughput:
        with open(args.throughput, encoding="utf-8") as f:
            throughput = json.load(f)
        path = os.path.join(plot_dir, THROUGHPUT_PLOT + ".svg")
        plot_throughput(throughput, path)
        written.append(path)
    md_path = os.path.join(docs, "accuracy.md")
    write_if_changed(md_path, markdown(report, throughput))
    written.insert(0, md_path)
    for path in written:
        print(os.path.relpath(path))


if __name__ == "__main__":
    main()
