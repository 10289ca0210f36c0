"""The whole of docs/accuracy.md: its sections in order."""

from .memory_sections import (
    confusion_section,
    largest_errors_section,
    megatron_rows_section,
    plots_section,
    skipped_section,
    summary_section,
    targets_section,
    ultrascale_breakdown_section,
    uncertainty_section,
)
from .gpu_section import gpu_section
from .reference_section import reference_section
from .serving_section import serving_section
from .gpu_step_section import gpu_step_section
from .published_section import published_section
from .throughput_sections import planner_section, throughput_sections

REGENERATE = "scripts/accuracy_report.sh"


def markdown(report, throughput=None, peers=None):
    parts = [
        [
            "# vramplan accuracy",
            "",
            f"Regenerate with `{REGENERATE}` (runs `vramplan validate --format json` and rewrites "
            "this page and its plots).",
        ],
        targets_section(report),
        summary_section(report),
        confusion_section(report),
        ultrascale_breakdown_section(report),
        reference_section(report, peers),
        gpu_section(report),
        uncertainty_section(report),
        serving_section(report),
        plots_section(),
        skipped_section(report),
        largest_errors_section(report),
        megatron_rows_section(report),
    ]
    if throughput is not None:
        parts += throughput_sections(throughput)
        parts.append(planner_section(throughput.get("planner")))
        parts += published_section(
            throughput.get("published"), throughput.get("published_calibration")
        )
        parts += gpu_step_section(throughput.get("gpu_measured"))
    return "\n\n".join("\n".join(p) for p in parts if p) + "\n"
