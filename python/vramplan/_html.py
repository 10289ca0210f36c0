"""The notebook view of an answer: a stacked bar per stage and the rows table, plain HTML."""

from ._result import escape

_COLORS = [
    "#4e79a7",
    "#f28e2b",
    "#e15759",
    "#76b7b2",
    "#59a14f",
    "#edc948",
    "#b07aa1",
    "#ff9da7",
    "#9c755f",
    "#bab0ac",
]


def _gib(n):
    return f"{n / 2**30:.2f} GiB"


def render(data):
    stages = data.get("stages")
    if not isinstance(stages, list):
        return "<pre>" + escape(data) + "</pre>"
    components = []
    for stage in stages:
        for row in stage.get("rows", []):
            if row["component"] not in components:
                components.append(row["component"])
    color = {c: _COLORS[i % len(_COLORS)] for i, c in enumerate(components)}
    widest = max([sum(r["bytes"] for r in s.get("rows", [])) for s in stages] + [1])
    out = ['<div class="vramplan">']
    peak = data.get("peak", {})
    if peak:
        out.append(
            f"<p><b>peak</b> {escape(_gib(peak.get('allocated_bytes', 0)))} allocated, "
            f"{escape(_gib(peak.get('device_bytes', 0)))} on the device "
            f"(stage {escape(peak.get('stage', ''))})</p>"
        )
    for stage in stages:
        out.append(
            f'<div style="display:flex;align-items:center;margin:2px 0">'
            f'<span style="width:90px">{escape(stage.get("name", ""))}</span>'
            f'<div style="display:flex;width:600px;height:16px">'
        )
        for row in stage.get("rows", []):
            width = 600 * row["bytes"] / widest
            out.append(
                f'<div title="{escape(row["component"])}: {escape(_gib(row["bytes"]))}" '
                f'style="width:{width:.1f}px;background:{color[row["component"]]}"></div>'
            )
        out.append("</div></div>")
    out.append(
        "<table><tr><th>stage</th><th>component</th><th>bytes</th><th>formula</th>"
        "<th>source</th></tr>"
    )
    for stage in stages:
        for row in stage.get("rows", []):
            out.append(
                f'<tr><td>{escape(stage.get("name", ""))}</td>'
                f'<td><span style="color:{color[row["component"]]}">&#9632;</span> '
                f'{escape(row["component"])}</td><td>{escape(_gib(row["bytes"]))}</td>'
                f'<td><code>{escape(row.get("formula", ""))}</code></td>'
                f'<td>{escape(row.get("source", ""))}</td></tr>'
            )
    out.append("</table>")
    for w in data.get("warnings", []):
        out.append(f"<p>&#9888; {escape(w)}</p>")
    out.append("</div>")
    return "".join(out)
