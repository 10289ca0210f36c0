"""Number formats and Markdown tables, shared by every section of the page."""


def gib(value):
    return f"{value:.2f}"


def pct(value):
    return f"{value:.1f}%"


def signed_pct(value):
    return f"{value:+.1f}%"


def cell(text):
    """Makes text safe inside a Markdown table cell."""
    return str(text).replace("|", "\\|").replace("\n", " ")


def table(header, rows, align=None):
    """A Markdown table; align is a string of 'l'/'r' per column."""
    align = align or "l" * len(header)
    rule = ["---:" if a == "r" else "---" for a in align]
    out = ["| " + " | ".join(cell(h) for h in header) + " |", "| " + " | ".join(rule) + " |"]
    for row in rows:
        out.append("| " + " | ".join(cell(c) for c in row) + " |")
    return "\n".join(out)
