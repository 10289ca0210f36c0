"""The public functions: keyword arguments are the scenario keys (as in a scenario file or an API
body), handed to the C++ core as JSON; answers and errors come back as the CLI's JSON."""

import json
import os

from . import _core
from ._result import Result, wrap

__all__ = ["Result"]


class Error(ValueError):
    """Bad input, as the C++ vramplan::Error: the field as you named it, the value you gave,
    what is accepted and (optionally) why.

    >>> try:
    ...     vramplan.estimate(model="Llama-3.1-8B", tp=3)
    ... except vramplan.Error as e:
    ...     print(e.field)
    tp
    """

    def __init__(self, field, value, accepted, reason="", message=None):
        self.field = field
        self.value = value
        self.accepted = accepted
        self.reason = reason
        self.message = message or _message(field, value, accepted, reason)
        super().__init__(self.message)


def _message(field, value, accepted, reason):
    text = f"{field} = {value}"
    if reason:
        text += f": {reason}"
    return f"{text}; accepted: {accepted}"


class FitError(Error):
    """Raised by check(): the layout does not fit the GPU (or the chosen headroom).
    ``.estimate`` holds the whole answer (its breakdown prints with the error)."""

    def __init__(self, field, value, accepted, reason, estimate):
        super().__init__(field, value, accepted, reason)
        self.estimate = estimate


def _settings(kwargs):
    # from_ (a Python keyword) is the API's "from"; None values are left out (not given).
    out = {}
    for key, value in kwargs.items():
        if value is None:
            continue
        out["from" if key == "from_" else key] = value
    return out


def _call(function, settings):
    try:
        text = json.dumps(settings)
    except (TypeError, ValueError) as e:
        raise Error(
            "settings", repr(settings), "JSON values (numbers, text, bools, dicts)", str(e)
        ) from None
    ok, answer = function(text)
    data = json.loads(answer)
    if not ok:
        raise Error(data["field"], data["value"], data["accepted"], data["reason"], data["message"])
    return Result(data)


def estimate(**settings):
    """Per-GPU training memory for one scenario: ``vramplan estimate --format json``.

    Keyword names are the scenario keys (``vramplan options`` / GET /api/options):
    ``model``, ``tp``, ``pp``, ``dp``, ``seq_len``, ``micro_batch``, ``zero``, ``gpu`` ...
    ``from_="<launch config text>"`` imports a framework config (docs/importers.md);
    ``emit="<format>"`` answers ``{"config", "format"}`` instead, as the API does.

    >>> est = vramplan.estimate(model="Llama-3.1-8B", tp=2, seq_len=8192)
    >>> est.stages[0].rows[0].formula  # doctest: +SKIP
    """
    return _call(_core.estimate, _settings(settings))


def infer(**settings):
    """Serving memory (weights, KV cache, activations): ``vramplan infer --format json``.

    >>> vramplan.infer(model="Llama-3.1-8B", max_seqs=8).peak  # doctest: +SKIP
    """
    return _call(_core.infer, _settings(settings))


def plan(**settings):
    """Every layout of ``gpus`` GPUs ranked: ``vramplan plan --format json``.

    ``threads=`` sets the search threads (0: every core). The search runs without the GIL, so
    other Python threads go on meanwhile.

    >>> vramplan.plan(model="Llama-3.1-8B", gpus=8, global_batch=64).candidates[0]  # doctest: +SKIP
    """
    return _call(_core.plan, _settings(settings))


def roofline(**settings):
    """The roofline of one layer's operations and the step-time model on the chosen GPU:
    ``vramplan roofline --format json``, the cluster keys (``gpus_per_node``,
    ``intra_node_gbps``, ``inter_node_gbps``) included; the CLI's ``--gpu-catalog`` is not.

    >>> vramplan.roofline(model="Llama-3.1-8B", gpu="h100-80gb").step  # doctest: +SKIP
    """
    return _call(_core.roofline, _settings(settings))


def models():
    """The model presets (``vramplan models --format json``): a list of answers."""
    return wrap(json.loads(_core.models()))


def gpus():
    """The GPU catalog (``vramplan gpus --format json``)."""
    return wrap(json.loads(_core.gpus()))


def validate(dataset=None):
    """Every measured run predicted and compared: ``vramplan validate [--dataset D] --format json``
    (rows, summaries, fit confusion, targets, parameter counts, the Ultra-Scale noise floor).
    ``dataset``: ``"megatron"``, ``"ultrascale"``, ``"torchtitan"``, ``"pytorch-reference"`` or ``"gpu-measured"``;
    None: every dataset, with the uncertainty bands they support.

    >>> v = vramplan.validate(dataset="megatron")
    >>> v.summaries[0].dataset
    'megatron'
    """
    if dataset is not None and not isinstance(dataset, str):
        raise Error("dataset", repr(dataset), "a dataset name or None", "not text")
    ok, answer = _core.validate(dataset or "")
    data = json.loads(answer)
    if not ok:
        raise Error(data["field"], data["value"], data["accepted"], data["reason"], data["message"])
    return Result(data)


def from_formats():
    """The launch-config formats ``from_config`` reads: [{name, what}]."""
    return wrap(json.loads(_core.formats())["from"])


def emit_formats():
    """The framework formats ``emit=`` writes: [{name, what}]."""
    return wrap(json.loads(_core.formats())["emit"])


def from_config(path_or_text, *, from_format=None, from_files=None, serving=False, **settings):
    """Estimate from a framework's launch config (docs/importers.md), as ``--from`` does.

    ``path_or_text`` is a file path or the config text itself. The files it names (a DeepSpeed
    JSON, a job TOML ...) are read beside the file, then in the working directory, unless given
    in ``from_files={name: text}``. Other keywords are scenario keys and win over the file's.
    ``serving=True`` reads a serving command (vLLM, SGLang ...) and answers as ``infer``.

    >>> vramplan.from_config("torchrun train.py --tp 2 ...")  # doctest: +SKIP
    """
    path = None
    text = path_or_text
    if isinstance(path_or_text, os.PathLike) or (
        isinstance(path_or_text, str) and "\n" not in path_or_text and os.path.isfile(path_or_text)
    ):
        path = os.fspath(path_or_text)
        try:
            with open(path, encoding="utf-8") as f:
                text = f.read()
        except OSError as e:
            raise Error("from", path, "a readable launch config file or its text", str(e)) from None
    body = _settings(settings)
    body["from"] = text
    if from_format is not None:
        body["from_format"] = from_format
    files = dict(from_files or {})
    beside = {k: v for k, v in body.items() if k not in ("from", "from_format")}
    for name in _core.files_named(text, from_format or "", json.dumps(beside)):
        if name in files:
            continue
        dirs = [os.path.dirname(path)] if path else []
        for d in dirs + ["."]:
            candidate = os.path.join(d, name)
            if os.path.isfile(candidate):
                with open(candidate, encoding="utf-8") as f:
                    files[name] = f.read()
                break
    if files:
        body["from_files"] = files
    return _call(_core.infer if serving else _core.estimate, body)


def check(headroom=0.0, **settings):
    """Raise before launch when the layout does not fit: the training estimate's peak against
    the chosen GPU (``gpu=`` / ``gpu_memory_gib=``; H100 80 GB when none) less ``headroom``
    (a fraction, 0.1 keeps 10% free). Returns the estimate when it fits.

    >>> vramplan.check(model="Llama-3.1-70B", gpu="h100-80gb")  # doctest: +SKIP
    Traceback (most recent call last):
    vramplan.FitError: ...
    """
    if (
        not isinstance(headroom, (int, float))
        or isinstance(headroom, bool)
        or not (0 <= headroom < 1)
    ):
        raise Error("headroom", repr(headroom), "a fraction from 0 (none) up to, not including, 1")
    est = estimate(**settings)
    data = est.to_dict()
    fit = data["fit"][0]
    usable = fit["usable_bytes"] * (1 - headroom)
    peak = data["peak"]["device_bytes"]
    if peak <= usable:
        return est
    lines = [f"{'stage':<10} {'component':<32} {'GiB':>9}"]
    for stage in data["stages"]:
        for row in stage["rows"]:
            lines.append(f"{stage['name']:<10} {row['component']:<32} {row['bytes'] / 2**30:>9.2f}")
    reason = (
        f"the peak per GPU, {peak / 2**30:.2f} GiB on the device, exceeds {usable / 2**30:.2f} GiB "
        f"(usable on {fit['gpu']} less {headroom:.0%} headroom)\n" + "\n".join(lines)
    )
    raise FitError(
        "gpu", fit["gpu"], "a layout whose peak fits (vramplan.plan ranks them)", reason, est
    )
