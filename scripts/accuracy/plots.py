"""The SVG scatter plots of predicted against measured values, one per memory quantity and one of
throughput. Written deterministically (fixed hash salt, no date, text as paths), so that
regenerating unchanged numbers leaves every file byte-for-byte the same."""

import collections

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402  (the backend must be chosen first)
import matplotlib.ticker  # noqa: E402

from .figures import BAND, FALLBACK_COLOURS, GROUP_COLOURS, THROUGHPUT_BAND  # noqa: E402
from .markdown import pct, signed_pct  # noqa: E402
from .rows import compared, find_summary, group_order  # noqa: E402
from .throughput_sections import MODEL_ORDER, throughput_rows  # noqa: E402


def _new_figure():
    plt.rcParams["svg.hashsalt"] = "vramplan"
    plt.rcParams["svg.fonttype"] = "path"
    return plt.subplots(figsize=(7, 6.2))


def _diagonal(ax, lo, hi, band):
    """The line predicted = measured and the shaded ±band around it."""
    xs = [lo, hi]
    ax.fill_between(
        xs,
        [x * (1 - band) for x in xs],
        [x * (1 + band) for x in xs],
        color="#999999",
        alpha=0.2,
        linewidth=0,
        label=f"±{band * 100:.0f}%",
        zorder=1,
    )
    ax.plot(
        xs, xs, color="#444444", linestyle="--", linewidth=1, label="predicted = measured", zorder=2
    )


def _log_axes(ax, lo, hi, xlabel, ylabel, minor_grid):
    """Equal log axes over [lo, hi], tick labels as plain numbers."""
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlim(lo, hi)
    ax.set_ylim(lo, hi)
    ax.set_aspect("equal")
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.grid(True, which="major", color="#dddddd", linewidth=0.6)
    if minor_grid:
        ax.grid(True, which="minor", color="#f0f0f0", linewidth=0.4)
    ax.xaxis.set_major_formatter(matplotlib.ticker.FuncFormatter(lambda v, _: f"{v:g}"))
    ax.yaxis.set_major_formatter(matplotlib.ticker.FuncFormatter(lambda v, _: f"{v:g}"))


def _finish(fig, ax, title, markerscale, path):
    """Title, legend, and the SVG written to path."""
    ax.set_title(title, fontsize=11)
    legend = ax.legend(loc="upper left", fontsize=9, framealpha=0.9, markerscale=markerscale)
    handles = legend.legend_handles if hasattr(legend, "legend_handles") else legend.legendHandles
    for handle in handles[2:]:  # the group markers, shown opaque; not the band or the line
        handle.set_alpha(1)
    fig.tight_layout()
    fig.savefig(path, format="svg", metadata={"Date": None})
    plt.close(fig)


def plot_memory(report, dataset, quantity, title, path):
    """Predicted against measured GiB of one dataset's quantity, coloured by group."""
    rows = compared(report["rows"], dataset, quantity)
    summary = find_summary(report, dataset, quantity)

    fig, ax = _new_figure()

    values = [r["measured_gib"] for r in rows] + [r["predicted_gib"] for r in rows]
    values = [v for v in values if v > 0]
    lo = min(values) / 1.3 if values else 0.1
    hi = max(values) * 1.3 if values else 100
    _diagonal(ax, lo, hi, BAND)

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

    _log_axes(ax, lo, hi, "measured (GiB)", "predicted by vramplan (GiB)", minor_grid=True)
    if summary:
        stats = (
            f"median |error| {pct(summary['median_abs_pct'])}, "
            f"p90 {pct(summary['p90_abs_pct'])}, bias {signed_pct(summary['bias_pct'])}, "
            f"n = {summary['rows']}"
        )
    else:
        stats = f"n = {len(rows)}"
    _finish(fig, ax, f"{title}\n{stats}", 2 if many else 1, path)


def plot_throughput(tp, path):
    """Predicted against measured tokens/s per GPU, coloured by model size."""
    rows = throughput_rows(tp)
    fig, ax = _new_figure()
    values = [v for r in rows for v in (r["measured_tok_s_gpu"], r["predicted_tok_s_gpu"]) if v > 0]
    lo, hi = min(values) / 1.3, max(values) * 1.3
    _diagonal(ax, lo, hi, THROUGHPUT_BAND)
    summaries = {s["model"]: s for s in tp["summaries"]}
    for model in MODEL_ORDER:
        points = [r for r in rows if r["model"] == model]
        if not points:
            continue
        fitted = "fitted" if summaries.get(model, {}).get("fitted") else "held out"
        ax.scatter(
            [p["measured_tok_s_gpu"] for p in points],
            [p["predicted_tok_s_gpu"] for p in points],
            s=9,
            alpha=0.5,
            color=GROUP_COLOURS.get(model, "#000000"),
            edgecolors="none",
            label=f"{model}, {fitted} ({len(points)})",
            zorder=3,
        )
    _log_axes(ax, lo, hi, "measured tokens/s per GPU", "predicted by vramplan", minor_grid=False)
    everything = summaries.get("all")
    stats = (
        (
            f"median |error| {pct(everything['median_abs_tok_pct'])}, Spearman "
            f"{everything['spearman_tok']:.2f}, n = {everything['rows']}"
        )
        if everything
        else ""
    )
    _finish(fig, ax, f"Ultra-Scale Playbook: tokens/s per GPU\n{stats}", 2, path)
