"""vramplan: GPU memory for training and serving LLMs, from Python.

The same C++ core as the ``vramplan`` command; every answer's ``to_dict()`` equals what
``vramplan <command> --format json`` prints.

>>> import vramplan
>>> est = vramplan.estimate(model="Llama-3.1-8B", tp=2, seq_len=8192)
>>> est.peak.allocated_bytes > 0
True
"""

from ._api import (
    AccuracyError,
    Error,
    FitError,
    Result,
    check,
    emit_formats,
    estimate,
    fit,
    from_config,
    from_formats,
    gpus,
    infer,
    models,
    plan,
    quick,
    quick_examples,
    roofline,
    validate,
)

__all__ = [
    "AccuracyError",
    "Error",
    "FitError",
    "Result",
    "check",
    "emit_formats",
    "estimate",
    "fit",
    "from_config",
    "from_formats",
    "gpus",
    "infer",
    "models",
    "plan",
    "quick",
    "quick_examples",
    "roofline",
    "validate",
]
