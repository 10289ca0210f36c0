"""Answers with attribute access: a JSON object becomes a Result, a list a list of them."""

import html
import json


def wrap(value):
    """JSON values as Python values: objects become Result, arrays lists."""
    if isinstance(value, dict):
        return Result(value)
    if isinstance(value, list):
        return [wrap(v) for v in value]
    return value


class Result:
    """A JSON object of the CLI's answer with attribute access (``est.peak.allocated_bytes``).

    ``to_dict()`` gives the JSON back exactly as ``vramplan ... --format json`` prints it.
    Keys are also reachable as items (``est["peak"]``).

    An estimate's answer stays in C++ until it is read: each top-level key is made a Python value
    the first time it is asked for (``est.peak`` costs the peak alone), and
    ``to_dict()``, ``to_json()``, ``==`` and the notebook view read the whole answer once.
    """

    __slots__ = ("_data", "_answer", "_keys", "_parts")

    def __init__(self, data, answer=None):
        # data: the JSON object as a dict; or None and answer: the C++ answer read in parts.
        object.__setattr__(self, "_data", data)
        object.__setattr__(self, "_answer", answer)
        object.__setattr__(self, "_keys", None if answer is None else answer.keys())
        object.__setattr__(self, "_parts", {})

    def _full(self):
        if self._data is None:
            object.__setattr__(self, "_data", self._answer.value())
            object.__setattr__(self, "_answer", None)
            object.__setattr__(self, "_parts", {})
        return self._data

    def _get(self, key):
        if self._data is not None:
            return self._data[key]
        parts = self._parts
        if key not in parts:
            if key not in self._keys:
                raise KeyError(key)
            parts[key] = self._answer.part(key)
        return parts[key]

    def _key_list(self):
        return list(self._data) if self._data is not None else list(self._keys)

    def __getattr__(self, name):
        try:
            return wrap(self._get(name))
        except KeyError:
            raise AttributeError(
                f"{name!r}: not in this answer; it has {', '.join(self._key_list())}"
            ) from None

    def __getitem__(self, key):
        return wrap(self._get(key))

    def __contains__(self, key):
        return key in self._key_list()

    def __setattr__(self, name, value):
        raise AttributeError("vramplan answers are read-only; use to_dict() for a copy")

    def __dir__(self):
        return self._key_list() + ["to_dict", "to_json", "to_pandas"]

    def __eq__(self, other):
        return isinstance(other, Result) and self._full() == other._full()

    def keys(self):
        return self._full().keys()

    def to_dict(self):
        """A deep copy of the answer as plain dicts and lists (the CLI's JSON)."""
        if self._data is None:
            return self._answer.value()  # made anew on each call
        return json.loads(json.dumps(self._data))

    def to_json(self, indent=2):
        """The answer as JSON text, indented as the CLI prints it."""
        return json.dumps(self._full(), indent=indent)

    def __repr__(self):
        keys = self._key_list()
        more = ", ..." if len(keys) > 8 else ""
        return f"<vramplan.Result {', '.join(keys[:8])}{more}>"

    def to_pandas(self):
        """The rows of every stage as a pandas DataFrame (needs pandas installed).

        One row per (stage, component); the columns are the row's keys plus ``stage``.
        """
        try:
            import pandas  # noqa: PLC0415 -- optional dependency
        except ImportError as e:
            raise ImportError("to_pandas() needs pandas: pip install pandas") from e
        return pandas.DataFrame(_rows(self._full()))

    def _repr_html_(self):
        from ._html import render  # noqa: PLC0415

        return render(self._full())


def _rows(data):
    rows = []
    for i, stage in enumerate(data.get("stages", [])):
        for row in stage.get("rows", []):
            flat = {"stage": stage.get("stage", i)}
            flat.update(row)
            rows.append(flat)
    if not rows and isinstance(data.get("rows"), list):
        rows = [dict(r) for r in data["rows"] if isinstance(r, dict)]
    return rows


def escape(value):
    return html.escape(str(value))
