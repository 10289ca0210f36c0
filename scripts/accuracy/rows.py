"""Selecting and ordering the rows of a `vramplan validate --format json` report."""

import math

DATASET_NAMES = {
    "megatron": "Megatron-LM",
    "ultrascale": "Ultra-Scale (ran)",
    "ultrascale-crashed": "Ultra-Scale (crashed)",
    "torchtitan": "torchtitan (published)",
    "pytorch-reference": "PyTorch reference",
    "gpu-measured": "GPU-measured",
}

# The groups the datasets use, in their natural order: model families, then model sizes.
KNOWN_GROUPS = ["gpt", "moe", "1B", "3B", "8B", "80B"]


def dataset_name(dataset):
    return DATASET_NAMES.get(dataset, dataset)


def group_order(groups):
    """Known groups in their natural order (gpt, moe; 1B, 3B, 8B, 80B), then the rest."""
    known = [g for g in KNOWN_GROUPS if g in groups]
    return known + sorted(g for g in groups if g not in KNOWN_GROUPS)


def compared(rows, dataset, quantity=None):
    """The rows of a dataset (and quantity) that were predicted and compared, not skipped."""
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


def nearest_rank(sorted_values, fraction):
    """The nearest-rank percentile, as `vramplan validate` computes it."""
    n = len(sorted_values)
    return sorted_values[max(1, min(n, math.ceil(fraction * n))) - 1]


# How many rows the "largest errors" tables show per dataset.
LARGEST_ERRORS = 15
