"""The throughput sections: the step-time model against the Ultra-Scale Playbook sweep's measured
tokens/s per GPU and MFU (`vramplan validate --throughput --format json`). Kept apart from the
memory report."""

import collections
import math

from .figures import PLOT_DIR, THROUGHPUT_BAND, THROUGHPUT_PLOT
from .markdown import pct, signed_pct, table
from .rows import LARGEST_ERRORS

MODEL_ORDER = ["1B", "3B", "8B", "80B"]


def throughput_rows(tp):
    return [r for r in tp["rows"] if not r["skipped"]]


def nodes_of(row_id):
    """'8B n16 dp4 tp8 ...' -> 16."""
    for word in row_id.split():
        if word.startswith("n") and word[1:].isdigit():
            return int(word[1:])
    return 0


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
    gaps = sorted(
        abs(math.log(v["zero0"] / v["zero1"]))
        for v in by_layout.values()
        if "zero0" in v and "zero1" in v
    )
    return gaps


def target_cells(t):
    """One row of the targets table: name, value, goal, and ✓, ✗ or "open (committed x)" for a
    target not met yet that the gate holds at its committed figure."""
    is_pct = t["name"].rstrip().endswith("%")
    value = pct(t["value"]) if is_pct else f"{t['value']:.3f}"
    goal = pct(t["target"]) if is_pct else f"{t['target']:.2f}"
    if t["met"]:
        status = "✓"
    elif t.get("open"):
        status = f"open (committed {t['committed']:g})"
    else:
        status = "✗"
    return [t["name"], value, f"{'≤' if t['at_most'] else '≥'} {goal}", status]


def group_ranking_section(tp, goal=0.9):
    """Spearman's ρ within each (model, GPU count) group: the ordering a user choosing a layout
    for one model on one cluster relies on, beside the sweep's own ordering of the same layouts
    (its ZeRO-0 runs against its ZeRO-1 runs)."""
    groups = tp.get("group_rankings", [])
    if not groups:
        return []
    ordered = sum(1 for g in groups if g["spearman_tok"] >= goal)
    rhos = sorted(g["spearman_tok"] for g in groups)
    twins = [g for g in groups if g.get("twin_pairs", 0) > 0]
    twins_ordered = sum(1 for g in twins if g["twin_spearman_tok"] >= goal)
    twin_rhos = sorted(g["twin_spearman_tok"] for g in twins)
    rows = []
    for g in groups:
        has_twins = g.get("twin_pairs", 0) > 0
        rows.append(
            [
                g["model"],
                g["gpus"],
                g["rows"],
                f"{g['spearman_tok']:.3f}",
                g["twin_pairs"] if has_twins else "—",
                f"{g['twin_spearman_tok']:.3f}" if has_twins else "—",
            ]
        )
    twin_text = (
        (
            f" The sweep cannot order most groups that well itself: where it ran a layout under "
            f"both ZeRO 0 and ZeRO 1 (one parameter all-gather apart), the two sets of "
            f"measurements rank those layouts with a median ρ of "
            f"{twin_rhos[len(twin_rhos) // 2]:.3f}, ≥ {goal} in {twins_ordered} of {len(twins)} "
            "groups; no model reaches a higher ρ than the data's own where its runs disagree so."
        )
        if twins
        else ""
    )
    return [
        "## Ordering within each (model, GPU count) group",
        "",
        f"What the planner needs is the order of the layouts for one model on one cluster. Issue "
        f"23 asks for ρ ≥ {goal} in every group; {ordered} of {len(groups)} groups reach it "
        f"(median ρ {rhos[len(rhos) // 2]:.3f}, worst {rhos[0]:.3f}). Groups of fewer than 3 runs "
        "are left out." + twin_text,
        "",
        table(
            ["model", "GPUs", "runs", "ρ tokens/s", "ZeRO 0/1 twins", "twins' ρ"],
            rows,
            "rrrrrr",
        ),
    ]


def throughput_sections(tp):
    c = tp["constants"]
    summary_rows = []
    for s in tp["summaries"]:
        role = "" if s["model"] == "all" else ("fitted" if s["fitted"] else "held out")
        summary_rows.append(
            [
                s["model"],
                role,
                s["rows"],
                pct(s["median_abs_tok_pct"]),
                pct(s["p90_abs_tok_pct"]),
                signed_pct(s["bias_tok_pct"]),
                pct(s["median_abs_mfu_pct"]),
                f"{s['spearman_tok']:.3f}",
                f"{s['spearman_mfu']:.3f}",
            ]
        )
    target_rows = [target_cells(t) for t in tp.get("targets", [])]
    rows = throughput_rows(tp)
    by_nodes = collections.defaultdict(list)
    for r in rows:
        by_nodes[nodes_of(r["id"])].append(r)
    node_rows = []
    for nodes in sorted(by_nodes):
        errors = sorted(abs(r["tok_error_pct"]) for r in by_nodes[nodes])
        signed = sorted(r["tok_error_pct"] for r in by_nodes[nodes])
        node_rows.append(
            [
                nodes,
                nodes * 8,
                len(errors),
                pct(errors[len(errors) // 2]),
                signed_pct(signed[len(signed) // 2]),
            ]
        )
    small_bias = max(
        (abs(float(row[4].rstrip("%"))) for row in node_rows if row[0] <= 16), default=0
    )
    per_model = {s["model"]: s for s in tp["summaries"]}
    fitted = [m for m in MODEL_ORDER if per_model.get(m, {}).get("fitted")]
    held_out = [m for m in MODEL_ORDER if m in per_model and m not in fitted]

    def medians(models):
        return ", ".join(f"{m} {pct(per_model[m]['median_abs_tok_pct'])}" for m in models)

    fitted_text, held_out_text = medians(fitted), medians(held_out)
    gaps = twin_noise(tp)
    noise = (
        (
            f"{len(gaps)} pairs of runs differ only in ZeRO stage 0 vs 1, which changes the work "
            f"by a parameter all-gather: the sweep measures them a median "
            f"{pct((math.exp(gaps[len(gaps) // 2]) - 1) * 100)} apart, and a quarter of the "
            f"pairs more than {pct((math.exp(gaps[3 * len(gaps) // 4]) - 1) * 100)} apart "
            f"(largest: ×{math.exp(gaps[-1]):.0f})."
        )
        if gaps
        else ""
    )
    worst = sorted(rows, key=lambda r: (-abs(r["tok_error_pct"]), r["id"]))[:LARGEST_ERRORS]
    constants = [[k, f"{v:.3g}"] for k, v in c.items()]
    return [
        [
            "# Throughput: step time against measured runs",
            "",
            "Regenerate with the same script (it also runs `vramplan validate --throughput "
            "--format json`). Every run of the Ultra-Scale Playbook sweep (nanotron, 1–64 nodes of "
            "8 H100 80GB, seq 4096, global batch 256 sequences) is predicted by the step-time model "
            "(docs/roofline.md) on `h100-80gb` with its catalog cluster (8 GPUs per "
            "node, 450 GB/s NVLink, 50 GB/s network per GPU), and compared with the measured "
            "`tok_s_gpu` and `mfu_pct`.",
        ],
        [
            "## Throughput summary",
            "",
            "Error is (predicted − measured) / measured of tokens/s per GPU; bias is the median "
            "signed error. ρ is Spearman's rank correlation of predicted and measured: how well "
            "the model orders layouts, which is what the planner needs. The MFU columns compare "
            "with the sweep's `mfu_pct`, which counts nanotron's FLOPs (6·N with the embedding, "
            "twice for tied embeddings when pp > 1, plus 12·L·s·h per token); vramplan's own MFU "
            "counts only matmul weights (no lookup embedding), so the prediction is converted to "
            "nanotron's count first.",
            "",
            table(
                [
                    "model",
                    "constants",
                    "rows",
                    "median |error|",
                    "p90 |error|",
                    "bias",
                    "MFU median |error|",
                    "ρ tokens/s",
                    "ρ MFU",
                ],
                summary_rows,
                "llrrrrrrr",
            ),
            "",
            f"The constants were fitted on the {' and '.join(fitted)} rows only (`vramplan validate "
            f"--throughput --calibrate`); {' and '.join(held_out)} are held out. Median error: "
            f"{held_out_text} held out against {fitted_text} fitted.",
        ],
        [
            "## Throughput targets",
            "",
            table(["target", "value", "goal", "met"], target_rows, "lrrl"),
        ],
        group_ranking_section(tp),
        [
            "## Error by cluster size",
            "",
            table(["nodes", "GPUs", "rows", "median |error|", "bias"], node_rows, "rrrrr"),
            "",
            f"Up to 16 nodes the bias stays within ±{small_bias:.0f}%; beyond, the sweep's runs "
            "are far slower than any term of the model explains (MFU around 1% with pipelines "
            "crossing many nodes), and the model over-predicts them.",
        ],
        [
            "## Measurement noise",
            "",
            noise,
            "",
            "Per-row errors of that size are noise in the data, not in the model; the median "
            "error and the rank correlation are the telling figures.",
        ],
        [
            "## Fitted constants",
            "",
            "Fitted within physically plausible ranges (include/vramplan/perf/step_time.h); several sit "
            "at an edge of their range. They describe nanotron's eager PyTorch on that cluster: "
            "a large CPU cost per kernel (GPUs wait for Python when tensor parallelism makes "
            "kernels small), slow flash attention, and very slow pipeline sends between nodes. "
            "Frameworks with fused kernels, CUDA graphs and overlapped communication (Megatron-LM "
            "with Transformer Engine) will run faster than predicted.",
            "",
            table(["constant", "value"], constants, "lr"),
        ],
        [
            f"![Ultra-Scale Playbook: tokens/s per GPU]({PLOT_DIR}/{THROUGHPUT_PLOT}.svg)",
            "",
            f"Log axes; the dashed line is predicted = measured, the grey band ±"
            f"{THROUGHPUT_BAND * 100:.0f}%.",
        ],
        [
            "## Largest throughput errors",
            "",
            table(
                ["run", "measured tok/s", "predicted", "error", "measured MFU", "predicted MFU"],
                [
                    [
                        r["id"],
                        f"{r['measured_tok_s_gpu']:.0f}",
                        f"{r['predicted_tok_s_gpu']:.0f}",
                        signed_pct(r["tok_error_pct"]),
                        pct(r["measured_mfu_pct"]),
                        pct(r["predicted_mfu_pct"]),
                    ]
                    for r in worst
                ],
                "lrrrrr",
            ),
        ],
    ]


def planner_section(planner, goal=0.8):
    """`vramplan validate --planner`: where the planner's top choice ranks among the layouts the
    sweep ran, per (model, GPU count), and issue 23's target for it."""
    if not planner:
        return []
    groups = planner["groups"]
    within = planner["top_within_5pct_of_best"]
    share = within / len(groups) if groups else 0
    rows = []
    for g in groups:
        top = (
            f"#{g['top_measured_rank']} ({pct(g['top_fraction_of_best'] * 100)})"
            if g["top_measured_rank"] > 0
            else g["top_status"]
        )
        rows.append([g["model"], g["gpus"], g["measured"], g["top_layout"] or "—", top])
    return [
        "## The planner against the sweep",
        "",
        "`vramplan validate --planner` plans each (model, GPU count) of the sweep over nanotron's "
        "dimensions and looks up its top choice among the layouts the sweep ran (rank by measured "
        "tokens/s per GPU, and its share of the best). Target (issue 23): the top choice is the "
        f"measured best or within 5% of it in ≥ {goal * 100:.0f}% of groups. Now {within} of "
        f"{len(groups)} ({share * 100:.0f}%): {'met' if share >= goal else 'open'}. A top choice "
        f"the sweep never ran cannot count; {planner['top_ran']} of the top choices ran, and the "
        "planner's best choice that ran reaches a median "
        f"{pct(planner['median_ran_fraction_of_best'] * 100)} of the best measured.",
        "",
        table(["model", "GPUs", "layouts that ran", "top choice", "measured rank"], rows, "rrrll"),
    ]
