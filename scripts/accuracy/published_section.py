"""The step-time model against published throughput (`validate --throughput`, key `published`)."""

from .markdown import cell, pct, signed_pct, table

LARGEST_ERRORS = 10


def compared_rows(published):
    return [r for r in published.get("rows", []) if not r.get("skipped")]


def skip_reasons(published):
    """How many rows were left out, by reason (numbers in the reason kept: they name the model)."""
    counts = {}
    for r in published.get("rows", []):
        if r.get("skipped"):
            counts[r["reason"]] = counts.get(r["reason"], 0) + 1
    return sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))


def summary(published, group):
    for s in published.get("summaries", []):
        if s["group"] == group:
            return s
    return None


def finding(published):
    """What the summaries say, in words computed from them (none when nothing was compared)."""
    everything, held_out = summary(published, "all"), summary(published, "held out")
    if not everything or not everything["rows"]:
        return ""
    bf16, fp8 = summary(published, "precision bf16"), summary(published, "precision fp8")
    direction = "below" if everything["bias_tok_pct"] < 0 else "above"
    text = (
        f"Overall the prediction is a median {pct(abs(everything['bias_tok_pct']))} {direction} "
        f"the published tokens/s, and orders the layouts with ρ = "
        f"{everything['spearman_tok']:.2f}."
    )
    if bf16 and fp8 and bf16["rows"] and fp8["rows"]:
        text += (
            f" By precision: bf16 {signed_pct(bf16['bias_tok_pct'])}, fp8 "
            f"{signed_pct(fp8['bias_tok_pct'])}."
        )
        if fp8["bias_tok_pct"] < bf16["bias_tok_pct"] - 10:
            text += (
                " The published fp8 runs gain more over bf16 than the model's fp8 speed-up "
                "(docs/fp8.md) gives them."
            )
    if held_out and held_out["rows"]:
        median_met = held_out["median_abs_tok_pct"] <= 10
        p90_met = held_out["p90_abs_tok_pct"] <= 20
        verdict = (
            "both met."
            if median_met and p90_met
            else "the median met, the p90 not yet."
            if median_met
            else "the p90 met, the median not yet."
            if p90_met
            else "neither met yet."
        )
        text += (
            f" Held out: median {pct(held_out['median_abs_tok_pct'])}, p90 "
            f"{pct(held_out['p90_abs_tok_pct'])} against the targets of 10% and 20%: {verdict}"
        )
    text += release_floor_text(published)
    return text


def release_floor_text(published):
    """The same layout measured in several releases: how far the data disagrees with itself."""
    floor, held = published.get("release_floor"), published.get("held_out_release_floor")
    if not floor or not floor["rows"]:
        return ""
    text = (
        f" The data's own spread: {floor['rows']} rows give a layout another release also "
        f"measured ({floor['groups']} layouts), and differ from their layout's median by a median "
        f"{pct(floor['median_abs_pct'])}, p90 {pct(floor['p90_abs_pct'])}"
    )
    if held and held["rows"]:
        text += (
            f"; in the held-out families {pct(held['median_abs_pct'])} and "
            f"{pct(held['p90_abs_pct'])} ({held['rows']} rows): between releases the software "
            "(dispatchers, CUDA graphs, fused kernels) moves a layout's throughput, and no "
            "prediction from the layout alone can get below that p90 on those rows"
        )
    return text + "."


def calibration_text(calibration):
    """What a fit on the calibration rows reaches there and on the held-out part."""
    if not calibration or "calibration" not in calibration:
        return ""
    fit = calibration["calibration"]
    rest, held_out = summary(calibration, "the rest"), summary(calibration, "held out")
    if not rest or not held_out or not rest["rows"] or not held_out["rows"]:
        return ""
    return (
        f"A fit of the constants on the {fit['rows']} Megatron-Bridge / NeMo rows that are not "
        f"held out (`vramplan validate --calibrate-published`) brings the rows not held out to a "
        f"median "
        f"{pct(rest['median_abs_tok_pct'])} (p90 {pct(rest['p90_abs_tok_pct'])}), but the "
        f"held-out part to {pct(held_out['median_abs_tok_pct'])} (p90 "
        f"{pct(held_out['p90_abs_tok_pct'])}, bias {signed_pct(held_out['bias_tok_pct'])}): "
        "constants fitted there do not carry over to other model families, so they are not "
        "the defaults. What is missing is more likely in the model's terms (the held-out part is "
        "mostly MoE) than in its constants."
        if held_out["median_abs_tok_pct"] > 10
        else f"A fit of the constants on the {fit['rows']} Megatron-Bridge / NeMo rows that are "
        f"not held out reaches a held-out median of {pct(held_out['median_abs_tok_pct'])}."
    )


def summary_cells(s, skipped=True):
    """A summary's table cells: group, rows, (skipped,) median, p90, bias, ρ; "—" without rows."""
    return (
        [cell(s["group"]), str(s["rows"])]
        + ([str(s["skipped"])] if skipped else [])
        + [
            pct(s["median_abs_tok_pct"]) if s["rows"] else "—",
            pct(s["p90_abs_tok_pct"]) if s["rows"] else "—",
            signed_pct(s["bias_tok_pct"]) if s["rows"] else "—",
            f"{s['spearman_tok']:.3f}" if s["rows"] > 1 else "—",
        ]
    )


def published_section(published, calibration=None):
    if not published or not published.get("rows"):
        return []
    summaries = [summary_cells(s) for s in published.get("summaries", [])]
    rows = compared_rows(published)
    worst = sorted(rows, key=lambda r: (-abs(r["tok_error_pct"]), r["id"]))[:LARGEST_ERRORS]
    reasons = skip_reasons(published)
    return [
        [
            "## Published throughput",
            "",
            "`vramplan validate --throughput` also predicts every row of "
            "data/measurements/published_throughput.csv: tokens/s per GPU that NVIDIA's "
            "Megatron-Bridge and NeMo performance summaries and torchtitan's benchmark tables "
            "publish for named layouts (model, GPUs, TP/PP/CP/VP/EP, micro and global batch, "
            "sequence length, precision; each row links its table). The layout goes through the "
            "same settings reader as the CLI, on the catalog GPU and its node (8 GPUs; GB200: "
            "the 72-GPU NVL72 rack). Megatron-Bridge and NeMo rows with TP run with TP "
            "communication overlap, as their performance recipes do (`tp_comm_overlap`, not for "
            "NVFP4), torchtitan rows where the table says async TP. No constant "
            "was fitted on these rows: the constants are the Ultra-Scale fit above. The Qwen3 and "
            "Llama 2 rows are the held-out part, named before any comparison, for when constants "
            "are calibrated on the rest.",
            "",
            table(
                ["group", "rows", "skipped", "median |error|", "p90 |error|", "bias", "ρ tokens/s"],
                summaries,
                "lrrrrrr",
            ),
            "",
            finding(published),
            "",
            calibration_text(calibration),
        ],
        [
            "### Rows left out",
            "",
            table(["reason", "rows"], [[cell(k), str(v)] for k, v in reasons], "lr"),
        ],
        [
            "### Largest published-throughput errors",
            "",
            table(
                ["row", "GPU", "GPUs", "precision", "measured tok/s", "predicted", "error"],
                [
                    [
                        cell(r["id"]),
                        r["gpu"],
                        str(r["gpus"]),
                        r["precision"],
                        f"{r['measured_tok_s_gpu']:.0f}",
                        f"{r['predicted_tok_s_gpu']:.0f}",
                        signed_pct(r["tok_error_pct"]),
                    ]
                    for r in worst
                ],
                "llrlrrr",
            ),
        ],
    ]
