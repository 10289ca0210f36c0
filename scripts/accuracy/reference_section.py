"""The PyTorch reference section of docs/accuracy.md: vramplan against the training memory that
Hugging Face transformers, PEFT, torchao and PyTorch's FSDP2 / pipelining measure on fake tensors
(data/measurements/pytorch_reference.json), per family, fine-tuning method, layout and category,
and the peers' estimators (data/measurements/peer_estimates.json) on the same rows."""

import collections

from .figures import PLOT_DIR, REFERENCE_PLOT
from .markdown import pct, signed_pct, table
from .rows import compared, nearest_rank

DATASET = "pytorch-reference"
PEAK = "peak allocated"
CATEGORIES = [
    "parameters at peak",
    "gradients at peak",
    "optimizer states at peak",
    "activations + temporaries at peak",
]
# The peers in peer_estimates.json, as the page names them, and what each estimates.
PEERS = [
    ("deepspeed", "DeepSpeed estimate_zero2/3_model_states_mem_needs", "model states only"),
    ("accelerate", "accelerate estimate-memory (training column)", "total"),
    ("llm_analysis", "llm-analysis train()", "total"),
    ("megatron_core", "Megatron-core theoretical memory report", "total"),
]
METHOD_ORDER = ["full", "frozen", "lora", "qlora"]
METHOD_NAMES = {
    "full": "full",
    "frozen": "frozen layers",
    "lora": "LoRA (PEFT, torchtune)",
    "qlora": "QLoRA (torchao NF4)",
}


def spread(errors):
    """(rows, median |error|, p90 |error|, bias) of signed errors in %, nearest-rank."""
    if not errors:
        return 0, 0.0, 0.0, 0.0
    absolute = sorted(abs(e) for e in errors)
    return (
        len(errors),
        nearest_rank(absolute, 0.5),
        nearest_rank(absolute, 0.9),
        nearest_rank(sorted(errors), 0.5),
    )


def spread_cells(errors):
    n, median, p90, bias = spread(errors)
    return [n, pct(median), pct(p90), signed_pct(bias)]


def grouped(rows, facet, order=None):
    """{facet value: [errors]} of compared rows, in `order` then alphabetical."""
    groups = collections.defaultdict(list)
    for r in rows:
        groups[r.get("facets", {}).get(facet, "?")].append(r["error_pct"])
    keys = [k for k in (order or []) if k in groups]
    keys += sorted(k for k in groups if k not in keys)
    return [(k, groups[k]) for k in keys]


def group_table(rows, facet, heading, names=None, order=None):
    body = [[(names or {}).get(k, k)] + spread_cells(v) for k, v in grouped(rows, facet, order)]
    return table([heading, "rows", "median |error|", "p90 |error|", "bias"], body, "lrrrr")


def facet_sections(rows, sections):
    """A "### Per <title>" heading and its group_table for each (title, facet, heading[, names,
    order]) of `sections`, each followed by a blank line."""
    out = []
    for title, facet, heading, *rest in sections:
        out += [f"### Per {title}", "", group_table(rows, facet, heading, *rest), ""]
    return out


def category_table(report):
    body = []
    for quantity in CATEGORIES:
        errors = [r["error_pct"] for r in compared(report["rows"], DATASET, quantity)]
        body.append([quantity.replace(" at peak", "")] + spread_cells(errors))
    return table(
        ["category at the peak", "rows", "median |error|", "p90 |error|", "bias"], body, "lrrrr"
    )


def phase_lines(report):
    """How often vramplan puts the peak in the phase the reference measured it in."""
    rows = compared(report["rows"], DATASET, PEAK)
    same = 0
    for r in rows:
        facets = r.get("facets", {})
        measured = facets.get("peak_phase", "")
        predicted = facets.get("predicted_peak_phase", "")
        measured_step = "optimizer step" if measured == "optimizer" else "forward/backward"
        same += measured_step == predicted
    body = []
    for quantity in ("forward/backward allocated", "optimizer step allocated"):
        errors = [r["error_pct"] for r in compared(report["rows"], DATASET, quantity)]
        body.append([quantity.replace(" allocated", "")] + spread_cells(errors))
    return [
        f"vramplan puts the peak in the phase the reference measured it in for {same} of "
        f"{len(rows)} rows. Each phase's own peak (forward and backward together, as vramplan "
        "reports them):",
        "",
        table(["phase", "rows", "median |error|", "p90 |error|", "bias"], body, "lrrrr"),
    ]


def peer_table(report, peers):
    """Each peer's error against the reference beside vramplan's, on the rows the peer runs."""
    ours = {r["id"]: r for r in compared(report["rows"], DATASET, PEAK)}
    body = []
    for key, name, covers in PEERS:
        peer_errors, our_errors = [], []
        for row in peers.get("rows", []):
            estimate = row.get(key, {})
            if "bytes" not in estimate or row["id"] not in ours:
                continue
            measured = row["reference_bytes"]
            peer_errors.append((estimate["bytes"] - measured) / measured * 100)
            our_errors.append(ours[row["id"]]["error_pct"])
        n, median, p90, bias = spread(peer_errors)
        if n == 0:
            body.append([name, covers, 0, "—", "—", "—", "—", "—"])
            continue
        _, our_median, our_p90, _ = spread(our_errors)
        body.append(
            [
                name,
                covers,
                n,
                pct(median),
                pct(p90),
                signed_pct(bias),
                pct(our_median),
                pct(our_p90),
            ]
        )
    timing = peers.get("time_per_estimate_ms", {})
    lines = [
        table(
            [
                "estimator",
                "counts",
                "rows",
                "median |error|",
                "p90 |error|",
                "bias",
                "vramplan median",
                "vramplan p90",
            ],
            body,
            "llrrrrrr",
        )
    ]
    if timing:
        times = ", ".join(f"{k} {v:g} ms" for k, v in sorted(timing.items()))
        lines += ["", f"Time per estimate in the run that wrote the file: {times}."]
    return lines


def parameter_lines(report):
    checks = report.get("parameter_counts", [])
    differ = [c for c in checks if not c["matches"]]
    presets = len({c["preset"] for c in checks})
    lines = [
        f"**Parameter counts.** Every preset's transformers class on the meta device against "
        f"vramplan's count, part by part (total, embedding, LM head, the rest outside the layers, "
        f"each run of identical layers, the modules of a layer): {len(checks) - len(differ)} of "
        f"{len(checks)} parts of {presets} presets equal; a unit test fails on any difference."
    ]
    if differ:
        lines += [
            "",
            table(
                ["preset", "part", "reference", "vramplan", "difference"],
                [
                    [
                        c["preset"],
                        c["part"],
                        f"{c['reference']:,}",
                        f"{c['vramplan']:,}",
                        f"{c['vramplan'] - c['reference']:+,}",
                    ]
                    for c in differ
                ],
                "llrrr",
            ),
        ]
    return lines


def reference_section(report, peers=None):
    """The section's Markdown lines; peers is peer_estimates.json (or None)."""
    rows = compared(report["rows"], DATASET, PEAK)
    if not rows:
        return []
    skipped = [
        r
        for r in report["rows"]
        if r["dataset"] == DATASET and r["quantity"] == PEAK and r["skipped"]
    ]
    out = [
        "## PyTorch reference",
        "",
        "`vramplan validate --dataset pytorch-reference`: training memory measured with the "
        "frameworks' own code — Hugging Face transformers models with the real widths and 2–6 "
        "layers, PyTorch's FSDP2 / HSDP / `torch.distributed.pipelining`, PEFT LoRA, torchao NF4 "
        "QLoRA, torchtune's own builders, chunked loss and recipe loop (full, LoRA, QLoRA), and "
        "torchtitan's own model, FSDP2 wrapping and loss — run for two steps on fake tensors while a tracker counts every live tensor "
        "(reference/README.md, data/measurements/README.md). Each row's settings go through "
        "the same reader as the CLI; the measured rank's stage is compared on peak allocated "
        "(tensors only: vramplan's GEMM workspaces are not tensors and are left out), on each "
        "phase's peak, and on the categories at the peak. The categories are vramplan's rows "
        "of the phase the reference peaked in (`estimate` with `RowsAt`), also where "
        "vramplan's own largest phase is another: two phases often peak within a percent, and "
        "the rows of different moments are not comparable; which phase peaks is scored by the "
        "two phase rows. A category's error is in % of the measured peak (a category may be 0 "
        "at the peak: gradients before the first one exists).",
        "",
        f"{len(rows)} rows compared, {len(skipped)} out of target (listed under "
        "Skipped rows with the reference's reason).",
        "",
        f"![{REFERENCE_PLOT[3]}]({PLOT_DIR}/{REFERENCE_PLOT[0]}.svg)",
        "",
        *facet_sections(
            rows,
            [
                ("family", "family", "family"),
                ("method", "method", "method", METHOD_NAMES, METHOD_ORDER),
                ("model code", "model_code", "model code (whose modules ran)"),
                ("layout", "layout", "layout (as the harness ran it)"),
                ("precision", "precision", "precision"),
                ("attention kernel", "attention", "attention (transformers -> kernel)"),
            ],
        ),
        "### Per category at the peak",
        "",
        category_table(report),
        "",
        "### Per phase",
        "",
    ]
    out += phase_lines(report)
    if peers:
        out += [
            "",
            "### Peers on the same rows",
            "",
            "The peers' own estimators (reference/peers/, data/measurements/peer_estimates.json) "
            "on the rows they can express, against the same reference; vramplan's figures are on "
            "the same rows. A peer that estimates only model states is expected to under-predict "
            "by the activations.",
            "",
        ]
        out += peer_table(report, peers)
    out += [""] + parameter_lines(report)
    return out
