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


class AccuracyError(Error):
    """Raised by ``validate(check=True)`` when an accuracy target is missed (the CLI's
    ``validate --check`` exits 1): worse than the target and than the figure committed for it
    (``throughput=True``: any target not met). ``.result`` holds the whole answer, ``.failed``
    the number of targets missed."""

    def __init__(self, field, value, accepted, reason, result, failed):
        super().__init__(field, value, accepted, reason)
        self.result = result
        self.failed = failed


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


def _dumps(settings):
    try:
        return json.dumps(settings)
    except (TypeError, ValueError) as e:
        raise Error(
            "settings", repr(settings), "JSON values (numbers, text, bools, dicts)", str(e)
        ) from None


def _call(function, settings):
    ok, answer = function(_dumps(settings))
    data = json.loads(answer)
    if not ok:
        raise _error(data)
    return Result(data)


def estimate(**settings):
    """Per-GPU training memory for one scenario: ``vramplan estimate --format json``.

    Keyword names are the scenario keys (``vramplan options`` / GET /api/options):
    ``model``, ``tp``, ``pp``, ``dp``, ``seq_len``, ``micro_batch``, ``zero``, ``gpu`` ...
    ``from_="<launch config text>"`` imports a framework config (docs/importers.md);
    ``emit="<format>"`` answers ``{"config", "format"}`` instead, as the API does;
    ``formulas=False`` leaves every row's formula and source empty (``--no-formulas``): the
    same bytes, several times faster, for sweeps.

    >>> est = vramplan.estimate(model="Llama-3.1-8B", tp=2, seq_len=8192)
    >>> est.stages[0].rows[0].formula  # doctest: +SKIP
    """
    ok, answer = _core.estimate_answer(_dumps(_settings(settings)))
    if isinstance(answer, str):  # emit=, or an error
        data = json.loads(answer)
        if not ok:
            raise _error(data)
        return Result(data)
    return Result(None, answer)


def infer(**settings):
    """Serving memory (weights, KV cache, activations): ``vramplan infer --format json``.

    >>> vramplan.infer(model="Llama-3.1-8B", max_seqs=8).peak  # doctest: +SKIP
    """
    return _call(_core.infer, _settings(settings))


def plan(**settings):
    """Every layout of ``gpus`` GPUs ranked: ``vramplan plan --format json``.

    ``threads=`` sets the search threads (0: every core). The search runs without the GIL, so
    other Python threads go on meanwhile. ``emit="<format>"`` answers the best-ranked layout the
    format can write as its launch config (``vramplan plan --emit``): ``{config, format, choice
    (1: the first choice), layout, skipped (why better-ranked ones could not be written)}``.

    >>> vramplan.plan(model="Llama-3.1-8B", gpus=8, global_batch=64).candidates[0]  # doctest: +SKIP
    """
    return _call(_core.plan, _settings(settings))


def fit(question, **settings):
    """What fits, found by search: ``vramplan fit QUESTION --format json`` (docs/fit.md).

    ``question`` is ``"micro_batch"``, ``"seq_len"``, ``"global_batch"`` (the largest that fits
    the layout given) or ``"gpus"`` (the smallest GPU count with a layout that fits; the
    planner's settings apply). Nothing fitting is an answer (``fits`` False), not an error.

    >>> vramplan.fit("micro_batch", model="Llama-3.1-8B", dp=8, zero=3).value  # doctest: +SKIP
    """
    body = _settings(settings)
    body["question"] = question
    return _call(_core.fit, body)


def roofline(gpu_catalog=None, **settings):
    """The roofline of one layer's operations and the step-time model on the chosen GPU:
    ``vramplan roofline --format json``, the cluster keys (``gpus_per_node``,
    ``intra_node_gbps``, ``inter_node_gbps``) included. ``gpu_catalog`` (``--gpu-catalog``):
    a catalog to use instead of the built-in one, as a file path, its JSON text or a dict in
    the format of data/gpus.json.

    >>> vramplan.roofline(model="Llama-3.1-8B", gpu="h100-80gb").step  # doctest: +SKIP
    """
    body = _settings(settings)
    if gpu_catalog is not None:
        body["gpu_catalog"] = _catalog_text(gpu_catalog)
    return _call(_core.roofline, body)


def _catalog_text(catalog):
    if isinstance(catalog, (dict, list)):
        return json.dumps(catalog)
    if isinstance(catalog, os.PathLike) or (
        isinstance(catalog, str) and not catalog.lstrip().startswith(("{", "["))
    ):
        try:
            with open(catalog, encoding="utf-8") as f:
                return f.read()
        except OSError as e:
            raise Error(
                "gpu_catalog",
                os.fspath(catalog),
                "a GPU catalog file, its JSON text or a dict (as data/gpus.json)",
                str(e),
            ) from None
    if isinstance(catalog, str):
        return catalog
    raise Error(
        "gpu_catalog",
        repr(catalog),
        "a GPU catalog file, its JSON text or a dict (as data/gpus.json)",
        "not a path, text or dict",
    )


def quick(**settings):
    """The quick calculator (docs/quick.md): memory from a parameter count, layers and hidden
    size, each row with its formula, beside the full estimate of the matching architecture:
    ``vramplan quick --format json``. Keywords are ``vramplan quick``'s settings (``params``,
    ``layers``, ``hidden``, ``batch``, ``seq_len``, ``mode`` ...); ``example="<name>"`` starts
    from a shipped scenario (``quick_examples()``) and the keywords given beside it win.

    >>> vramplan.quick(params="7B", layers=32, hidden=4096).estimate.total_gib  # doctest: +SKIP
    """
    return _call(_core.quick, _settings(settings))


def quick_examples():
    """The quick calculator's shipped scenarios (``vramplan quick --list-examples --format
    json``)."""
    return wrap(json.loads(_core.quick_examples()))


def models():
    """The model presets (``vramplan models --format json``): a list of answers."""
    return wrap(json.loads(_core.models()))


def gpus():
    """The GPU catalog (``vramplan gpus --format json``)."""
    return wrap(json.loads(_core.gpus()))


_VALIDATE_MODES = ("serving", "throughput", "planner", "bands")


def validate(
    dataset=None, *, serving=False, throughput=False, planner=False, bands=False, check=False
):
    """Every measured run predicted and compared: ``vramplan validate [--dataset D] --format json``
    (rows, summaries, fit confusion, targets, parameter counts, the Ultra-Scale noise floor).
    ``dataset``: ``"megatron"``, ``"ultrascale"``, ``"torchtitan"``, ``"pytorch-reference"`` or
    ``"gpu-measured"``; None: every dataset, with the uncertainty bands they support.

    One of the CLI's other modes instead (each answers its ``--format json``):
    ``serving=True`` (published vLLM/SGLang figures), ``throughput=True`` (the step-time model
    against the Ultra-Scale sweep), ``planner=True`` (where the planner's choices rank by measured
    throughput), ``bands=True`` (the uncertainty bands alone, data/uncertainty.json).

    ``check=True`` is ``--check``: raises ``vramplan.AccuracyError`` (with ``.result``) when an
    accuracy target is missed, where the CLI exits 1; open targets no worse than their committed
    figure pass. For the memory validation and ``throughput`` only.

    >>> v = vramplan.validate(dataset="megatron")
    >>> v.summaries[0].dataset
    'megatron'
    """
    if dataset is not None and not isinstance(dataset, str):
        raise Error("dataset", repr(dataset), "a dataset name or None", "not text")
    modes = {"serving": serving, "throughput": throughput, "planner": planner, "bands": bands}
    for name, value in list(modes.items()) + [("check", check)]:
        if not isinstance(value, bool):
            raise Error(name, repr(value), "True or False", "not a bool")
    chosen = [name for name in _VALIDATE_MODES if modes[name]]
    if len(chosen) > 1:
        raise Error(
            chosen[1],
            "True",
            "one of serving, throughput, planner, bands",
            f"{chosen[0]} is already chosen",
        )
    mode = chosen[0] if chosen else ""
    ok, answer = _core.validate(mode, dataset or "", check)
    data = json.loads(answer)
    if not ok:
        raise _error(data)
    result = Result(data["result"])
    failed = data["gate"]["failed"]
    if check and failed > 0:
        what = "throughput" if mode == "throughput" else "accuracy"
        raise AccuracyError(
            "check",
            str(failed),
            f"every {what} target met (or open and no worse than its committed figure)",
            f"{failed} {what} target(s) missed: "
            + ", ".join(t["name"] for t in data["result"].get("targets", []) if not _passes(t)),
            result,
            failed,
        )
    return result


def _passes(target):
    # The JSON's "met"; open targets (memory and throughput) also carry "passes".
    return target.get("passes", target.get("met", True))


def _error(data):
    return Error(data["field"], data["value"], data["accepted"], data["reason"], data["message"])


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
    fit = est["fit"][0]
    usable = fit["usable_bytes"] * (1 - headroom)
    peak = est["peak"]["device_bytes"]
    if peak <= usable:
        return est
    lines = [f"{'stage':<10} {'component':<32} {'GiB':>9}"]
    for stage in est.to_dict()["stages"]:
        for row in stage["rows"]:
            lines.append(f"{stage['name']:<10} {row['component']:<32} {row['bytes'] / 2**30:>9.2f}")
    reason = (
        f"the peak per GPU, {peak / 2**30:.2f} GiB on the device, exceeds {usable / 2**30:.2f} GiB "
        f"(usable on {fit['gpu']} less {headroom:.0%} headroom)\n" + "\n".join(lines)
    )
    raise FitError(
        "gpu", fit["gpu"], "a layout whose peak fits (vramplan.plan ranks them)", reason, est
    )
