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
    """

    __slots__ = ("_data",)

    def __init__(self, data):
        object.__setattr__(self, "_data", data)

    def __getattr__(self, name):
        try:
            return wrap(self._data[name])
        except KeyError:
            raise AttributeError(
                f"{name!r}: not in this answer; it has {', '.join(self._data)}"
            ) from None

    def __getitem__(self, key):
        return wrap(self._data[key])

    def __contains__(self, key):
        return key in self._data

    def __setattr__(self, name, value):
        raise AttributeError("vramplan answers are read-only; use to_dict() for a copy")

    def __dir__(self):
        return list(self._data) + ["to_dict", "to_json", "to_pandas"]

    def __eq__(self, other):
        return isinstance(other, Result) and self._data == other._data

    def keys(self):
        return self._data.keys()

    def to_dict(self):
        """A deep copy of the answer as plain dicts and lists (the CLI's JSON)."""
        return json.loads(json.dumps(self._data))

    def to_json(self, indent=2):
        """The answer as JSON text, indented as the CLI prints it."""
        return json.dumps(self._data, indent=indent)

    def __repr__(self):
        keys = ", ".join(list(self._data)[:8])
        more = ", ..." if len(self._data) > 8 else ""
        return f"<vramplan.Result {keys}{more}>"

    def to_pandas(self):
        """The rows of every stage as a pandas DataFrame (needs pandas installed).

        One row per (stage, component); the columns are the row's keys plus ``stage``.
        """
        try:
            import pandas  # noqa: PLC0415 -- optional dependency
        except ImportError as e:
            raise ImportError("to_pandas() needs pandas: pip install pandas") from e
        return pandas.DataFrame(_rows(self._data))

    def _repr_html_(self):
        from ._html import render  # noqa: PLC0415

        return render(self._data)


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
