"""Checks that vramplan accepts every row's settings: `vramplan estimate --scenario row.json`.

Usage: check_settings.py VRAMPLAN_BINARY [DATASET] [--compare]
With --compare it prints vramplan's peak allocated beside the reference's (for reading only)."""

import json
import subprocess
import sys
import tempfile
from pathlib import Path

DEFAULT = Path(__file__).resolve().parents[1] / "data" / "measurements" / "pytorch_reference.json"


def estimate(binary, settings):
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
        json.dump(settings, f)
        path = f.name
    try:
        proc = subprocess.run(
            [binary, "estimate", "--scenario", path, "--format", "json"], capture_output=True, text=True
        )
    finally:
        Path(path).unlink()
    return proc


def main(argv):
    binary = argv[0]
    dataset = Path(argv[1]) if len(argv) > 1 and not argv[1].startswith("--") else DEFAULT
    compare = "--compare" in argv
    data = json.loads(dataset.read_text())
    failures = 0
    for row in data["rows"]:
        proc = estimate(binary, row["settings"])
        if proc.returncode != 0:
            failures += 1
            print(f"REFUSED {row['id']}: {proc.stderr.strip()[:300]}")
        elif compare:
            out = json.loads(proc.stdout)
            print(f"{row['id']}\t{row['peak_allocated_bytes'] / 2**30:.3f}\t{json.dumps(out.get('peak'))[:300]}")
    print(f"{len(data['rows']) - failures} accepted, {failures} refused")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
