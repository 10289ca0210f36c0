"""The GPU-measured section of docs/accuracy.md: vramplan against the caching allocator's own
figures (torch.cuda.max_memory_allocated / max_memory_reserved) for the PyTorch reference's
single-GPU scenarios run on a real GPU (data/measurements/gpu_measured.json)."""

from .markdown import pct, signed_pct, table
from .reference_section import METHOD_NAMES, METHOD_ORDER, facet_sections, spread
from .rows import compared

DATASET = "gpu-measured"
PEAK = "peak allocated"
QUANTITIES = [
    "peak allocated",
    "forward/backward allocated",
    "optimizer step allocated",
    "peak reserved",
]


def quantity_table(report):
    body = []
    for quantity in QUANTITIES:
        n, median, p90, bias = spread(
            [r["error_pct"] for r in compared(report["rows"], DATASET, quantity)]
        )
        body.append([quantity, n, pct(median), pct(p90), signed_pct(bias)])
    return table(["quantity", "rows", "median |error|", "p90 |error|", "bias"], body, "lrrrr")


def gpu_section(report):
    """The section's Markdown lines (none when the report has no GPU rows)."""
    rows = compared(report["rows"], DATASET, PEAK)
    if not rows:
        return []
    skipped = [
        r
        for r in report["rows"]
        if r["dataset"] == DATASET and r["quantity"] == PEAK and r["skipped"]
    ]
    gpu = rows[0].get("facets", {}).get("gpu", "?")
    return [
        "## Measured on a GPU",
        "",
        "`vramplan validate --dataset gpu-measured`: the PyTorch reference's single-GPU scenarios "
        f"(every family, precision, optimizer, recompute and fine-tuning method) run for real on "
        f'one {gpu} with the same model code (reference/README.md, "On a real GPU"), read '
        "from the caching allocator: torch.cuda.max_memory_allocated over two steps and per "
        "phase, and max_memory_reserved. Unlike the fake-tensor reference this includes what no "
        "tensor holds (cuBLAS workspaces, the allocator's rounding), so vramplan's whole "
        "allocated figure is compared, GEMM workspaces included.",
        "",
        f"{len(rows)} rows compared, {len(skipped)} out of target (the reference's reasons).",
        "",
        quantity_table(report),
        "",
        *facet_sections(
            rows,
            [
                ("family", "family", "family"),
                ("method", "method", "method", METHOD_NAMES, METHOD_ORDER),
                ("precision", "precision", "precision"),
            ],
        ),
        "Peak reserved is the allocator's pool, which depends on the order of allocations a "
        "two-layer model makes; vramplan's pool overhead is calibrated on full-size runs "
        "(Megatron-LM, torchtitan), and this row is reported, not targeted.",
    ]
