"""What the GPU measurement scripts (gpu_speed.py, gpu_shapes.py) share: their options and a run
that writes JSON lines, an environment line first, each row as soon as it is measured."""

from __future__ import annotations

import argparse
import contextlib
import json
import time

from .gpu_measure import environment


def measurement_parser(doc: str, seconds: float, parts: str) -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(description=doc.splitlines()[0])
    ap.add_argument("--output", required=True)
    ap.add_argument("--seconds", type=float, default=seconds, help="start nothing after this many seconds")
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--smoke", action="store_true", help="tiny shapes: exercise the code paths")
    ap.add_argument("--parts", default=parts, help="which parts, in this order")
    return ap


@contextlib.contextmanager
def measurement_run(args, torch):
    """Yields (emit, deadline): emit(row) writes a row and prints its gist; nothing new should
    start after the deadline, so that a time limit keeps what ran."""
    t0 = time.time()
    with open(args.output, "w") as out:

        def emit(row):
            out.write(json.dumps(row) + "\n")
            out.flush()
            brief = {k: v for k, v in row.items() if k not in ("trace", "kind")}
            print(f"[{time.time() - t0:6.1f} s] {row['kind']} {json.dumps(brief)[:220]}", flush=True)

        env = environment(args.device)
        if args.device == "cuda":
            env["torch_cuda_arch"] = torch.cuda.get_device_capability()
            env["sm_count"] = torch.cuda.get_device_properties(0).multi_processor_count
        emit(dict(kind="environment", **env))
        yield emit, t0 + args.seconds
