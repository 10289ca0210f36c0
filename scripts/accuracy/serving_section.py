"""The serving section: the memory figures vLLM and SGLang logged in public runs against
`vramplan validate --serving`."""

from .markdown import pct, signed_pct, table


def serving_section(report):
    serving = report.get("serving")
    if not serving:
        return [
            "## Serving (published vLLM / SGLang figures)",
            "",
            "Not in this report (run with `vramplan validate --serving --format json`).",
        ]
    summary = [
        [s["quantity"], str(s["rows"]), pct(s["median_abs_pct"]), pct(s["max_abs_pct"])]
        for s in serving["summaries"]
    ]
    rows = []
    for r in serving["rows"]:
        tokens = r["unit"] == "tokens"
        fmt = (lambda v: f"{v:,.0f}") if tokens else (lambda v: f"{v:.2f} GiB")
        rows.append(
            [
                r["id"],
                r["engine"],
                r["quantity"],
                fmt(r["published"]),
                fmt(r["predicted"]),
                signed_pct(r["error_pct"]),
                f"[source]({r['source']})",
            ]
        )
    return [
        "## Serving (published vLLM / SGLang figures)",
        "",
        "`vramplan validate --serving` predicts the memory figures that vLLM and SGLang logged in "
        "public runs (data/measurements/serving_published.csv), with the same default conventions "
        "every `vramplan infer` user gets.",
        "",
        table(["quantity", "rows", "median |error|", "max |error|"], summary, "lrrr"),
        "",
        table(
            ["run", "engine", "quantity", "published", "predicted", "error", "source"],
            rows,
            "lllrrrl",
        ),
    ]
