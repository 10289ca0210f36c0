"""compare_rows.py COMMITTED FRESH [--subset]: FRESH must equal COMMITTED, except that byte
counts may differ by up to BYTE_TOLERANCE.

Why a tolerance: in some 1F1B / interleaved pipeline rows a single 4-byte fp32 tensor is alive
through both steps or not, depending on what the worker process ran before (a tensor cached
process-wide is counted only in the first scenario that creates it). Everything else - ids,
settings, phases, in_target, versions, parameter counts - must match exactly. With --subset,
only FRESH's rows are compared (a run with --only / --limit). Exit 1 on any difference."""

import json
import sys

BYTE_TOLERANCE = 16
BYTE_FIELDS = ("peak_allocated_bytes", "phase_peaks", "at_peak")


def _bytes_close(a, b):
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_bytes_close(a[k], b[k]) for k in a)
    return isinstance(a, int) and isinstance(b, int) and abs(a - b) <= BYTE_TOLERANCE


def rows_equal(committed, fresh):
    if committed is None or committed.keys() != fresh.keys():
        return False
    for key in committed:
        if key in BYTE_FIELDS:
            if not _bytes_close(committed[key], fresh[key]):
                return False
        elif committed[key] != fresh[key]:
            return False
    return True


def differences(committed, fresh, subset):
    bad = [key for key in ("command", "versions", "notes", "parameter_counts") if committed[key] != fresh[key]]
    rows = {r["id"]: r for r in committed["rows"]}
    fresh_ids = {r["id"] for r in fresh["rows"]}
    for row in fresh["rows"]:
        if not rows_equal(rows.get(row["id"]), row):
            bad.append(row["id"])
    if not subset:
        bad += [f"missing from the fresh run: {i}" for i in rows if i not in fresh_ids]
        if committed["not_run"] != fresh["not_run"]:
            bad.append("not_run")
    return bad


def main(argv):
    committed = json.load(open(argv[0]))
    fresh = json.load(open(argv[1]))
    bad = differences(committed, fresh, "--subset" in argv)
    for item in bad:
        print(f"differs: {item}", file=sys.stderr)
    print(f"{len(fresh['rows'])} rows compared, {len(bad)} differ")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
