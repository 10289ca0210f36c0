"""The cost of one estimate from Python, to set beside build/estimate_bench's C++ figures
(docs/python.md#cost-of-a-call): the same settings, {"model": "Llama-3.1-8B"}, with and without
formulas, through vramplan.estimate reading the peak (the answer stays in C++ but for the part
read) or the whole answer (to_dict()), and the extension module's whole JSON text.

    PYTHONPATH=build/python python3 bench/python_estimate_bench.py [--seconds 1]

Prints microseconds per call, wall-clock and CPU (the best of 5 repeats); asserts nothing about
time.
"""

import argparse
import json
import time
import timeit

import vramplan
from vramplan import _core


def per_call_us(function, seconds, timer):
    number = 1
    while timeit.timeit(function, number=number, timer=timer) < seconds / 10:
        number *= 2
    return min(timeit.repeat(function, number=number, repeat=5, timer=timer)) / number * 1e6


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=1.0, help="rough time per repeat")
    args = parser.parse_args()
    llama = {"model": "Llama-3.1-8B"}
    cases = [
        (
            "estimate(formulas=False).peak.allocated_bytes",
            lambda: vramplan.estimate(**llama, formulas=False).peak.allocated_bytes,
        ),
        (
            "estimate().peak.allocated_bytes",
            lambda: vramplan.estimate(**llama).peak.allocated_bytes,
        ),
        (
            "estimate(formulas=False).to_dict()",
            lambda: vramplan.estimate(**llama, formulas=False).to_dict(),
        ),
        ("estimate().to_dict()", lambda: vramplan.estimate(**llama).to_dict()),
        (
            "_core.estimate(json text), formulas=False",
            lambda: _core.estimate(json.dumps({**llama, "formulas": False})),
        ),
    ]
    # Wall-clock and CPU time, as Google Benchmark's "Time" and "CPU" columns: on a shared
    # machine the CPU time is the steadier figure.
    print(f"{'per call, best of 5':<44} {'wall us':>10} {'CPU us':>10}")
    for name, function in cases:
        wall = per_call_us(function, args.seconds, time.perf_counter)
        cpu = per_call_us(function, args.seconds, time.process_time)
        print(f"{name:<44} {wall:10.1f} {cpu:10.1f}")


if __name__ == "__main__":
    main()
