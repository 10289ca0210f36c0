"""The command line of scripts/accuracy_report.py: reads the reports, writes the page and plots,
and prints the path of each file written."""

import argparse
import os
import sys

from .figures import PLOT_DIR, PLOTS, REFERENCE_PLOT, THROUGHPUT_PLOT
from .load import ReportError, load_report, read_json
from .page import markdown
from .plots import plot_memory, plot_throughput

DESCRIPTION = "Turns `vramplan validate --format json` into docs/accuracy.md and its plots."
REPOSITORY = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")


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


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=DESCRIPTION)
    parser.add_argument("report", nargs="?", default="-", help="validate JSON (default: stdin)")
    parser.add_argument(
        "--docs",
        default=os.path.join(REPOSITORY, "docs"),
        help="directory that receives accuracy.md and accuracy/ (default: docs/)",
    )
    parser.add_argument("--serving", help="`vramplan validate --serving --format json` output")
    parser.add_argument(
        "--peers",
        metavar="PEERS.json",
        help="data/measurements/peer_estimates.json: the peers' errors against the PyTorch "
        "reference beside vramplan's",
    )
    parser.add_argument(
        "--throughput",
        metavar="REPORT.json",
        help="also `vramplan validate --throughput --format json`: step-time section and plot",
    )
    parser.add_argument(
        "--published-calibration",
        metavar="REPORT.json",
        help="also `vramplan validate --calibrate-published --format json`: what a fit on the "
        "published rows reaches, held-out part apart",
    )
    parser.add_argument(
        "--planner",
        metavar="REPORT.json",
        help="also `vramplan validate --planner --format json`: the planner's top choices "
        "against the sweep's measured throughput (with --throughput)",
    )
    return parser.parse_args(argv)


def main(argv=None):
    args = parse_args(argv)
    try:
        report = load_report(args.report, args.serving)
    except ReportError as error:
        sys.exit(str(error))

    docs = os.path.normpath(args.docs)
    plot_dir = os.path.join(docs, PLOT_DIR)
    os.makedirs(plot_dir, exist_ok=True)

    written = []
    for stem, dataset, quantity, title in PLOTS + [REFERENCE_PLOT]:
        if stem == REFERENCE_PLOT[0] and not any(r["dataset"] == dataset for r in report["rows"]):
            continue
        path = os.path.join(plot_dir, stem + ".svg")
        plot_memory(report, dataset, quantity, title, path)
        written.append(path)
    throughput = None
    if args.throughput:
        throughput = read_json(args.throughput)
        if args.published_calibration:
            throughput["published_calibration"] = read_json(args.published_calibration)
        if args.planner:
            throughput["planner"] = read_json(args.planner)
        path = os.path.join(plot_dir, THROUGHPUT_PLOT + ".svg")
        plot_throughput(throughput, path)
        written.append(path)
    peers = read_json(args.peers) if args.peers else None
    md_path = os.path.join(docs, "accuracy.md")
    write_if_changed(md_path, markdown(report, throughput, peers))
    written.insert(0, md_path)
    for path in written:
        print(os.path.relpath(path))
