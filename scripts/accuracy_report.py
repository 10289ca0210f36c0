#!/usr/bin/env python3
"""Turns `vramplan validate --format json` into docs/accuracy.md and its plots.

Usage: scripts/accuracy_report.py [REPORT.json | -] [--docs DIR]

Reads the validation report from the file (or stdin when it is absent or "-"),
writes DIR/accuracy.md (DIR defaults to the repository's docs/) and the SVG
scatter plots DIR/accuracy/*.svg. The output holds no timestamps and the SVGs
are written deterministically, so regenerating without changes to the numbers
leaves every file byte-for-byte the same. Normally run through
scripts/accuracy_report.sh. The work is done by the package scripts/accuracy/.
"""

import sys

try:
    import matplotlib  # noqa: F401  (checked here, so that its absence gets a clear message)
except ModuleNotFoundError:
    sys.exit(
        "accuracy_report.py: matplotlib is missing for " + sys.executable + "; install "
        "python3-matplotlib or run it through scripts/accuracy_report.sh, which finds a python3 "
        "that has it"
    )

from accuracy.cli import main  # noqa: E402  (after the check above)

if __name__ == "__main__":
    main()
