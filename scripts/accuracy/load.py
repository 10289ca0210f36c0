"""Reading the reports of `vramplan validate --format json` (and of its --serving and
--throughput modes)."""

import json
import sys

# What every memory report holds; a file without them is not `vramplan validate` output.
REQUIRED_KEYS = ("rows", "summaries", "fit_confusion", "targets")


class ReportError(Exception):
    """The input is not the report this script reads."""


def read_json(path):
    """The JSON in the file at path, or on stdin when path is "-"."""
    if path == "-":
        return json.load(sys.stdin)
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def check_report(report):
    """Raises ReportError naming the first key a memory report must have and lacks."""
    for key in REQUIRED_KEYS:
        if key not in report:
            raise ReportError(
                f"accuracy_report: the report has no '{key}' key; "
                "is it `vramplan validate --format json`?"
            )


def load_report(path, serving_path=None):
    """The memory report at path ("-": stdin), with the serving report under "serving"."""
    report = read_json(path)
    if serving_path:
        report["serving"] = read_json(serving_path)
    check_report(report)
    return report
