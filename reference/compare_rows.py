"""compare_rows.py COMMITTED FRESH: every row of FRESH must equal the committed row of its id
(and FRESH's parameter counts and versions the committed ones). Exit 1 on any difference."""

import json
import sys


def main(committed_path, fresh_path):
    committed = json.load(open(committed_path))
    fresh = json.load(open(fresh_path))
    rows = {r["id"]: r for r in committed["rows"]}
    bad = []
    for key in ("versions", "parameter_counts"):
        if committed[key] != fresh[key]:
            bad.append(key)
    for row in fresh["rows"]:
        if rows.get(row["id"]) != row:
            bad.append(row["id"])
    for id_ in bad:
        print(f"differs: {id_}", file=sys.stderr)
    print(f"{len(fresh['rows'])} rows compared, {len(bad)} differ")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:3]))
