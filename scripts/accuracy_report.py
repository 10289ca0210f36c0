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


def markdown(report):
    parts = [
        ["# vramplan accuracy", "",
         f"Regenerate with `{REGENERATE}` (runs `vramplan validate --format json` and rewrites "
         "this page and its plots)."],
        targets_section(report),
        summary_section(report),
        confusion_section(report),
        uncertainty_section(report),
        serving_section(report),
        plots_section(),
        skipped_section(report),
        largest_errors_section(report),
        megatron_rows_section(report),
    ]
    return "\n\n".join("\n".join(p) for p in parts) + "\n"


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
    md_path = os.path.join(docs, "accuracy.md")
    write_if_changed(md_path, markdown(report))
    written.insert(0, md_path)
    for path in written:
        print(os.path.relpath(path))


if __name__ == "__main__":
    main()
