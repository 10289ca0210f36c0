#!/usr/bin/env python3
"""Checks the source layout docs/architecture.md describes, on every include of the tree.

1. Layers: a file of src/<folder>/ or include/vramplan/<folder>/ includes only its own folder
   and the folders below it in LAYERS (tests, *_test.cc, may use any folder).
2. No include cycles between files.
3. No source file over MAX_LINES lines; no source folder with more than MAX_FILES non-test files.

Usage: check_layout.py [SOURCE_DIR]. Prints every breach and exits 1 when there is one.
"""
import os
import re
import sys

# Lowest first. A folder may include the ones before it, never the ones after.
LAYERS = ["base", "model", "training", "serving", "perf", "quick", "plan", "interop", "io", "report",
          "validation",
          "hub", "python", "server", "cli"]
MAX_LINES = 600
MAX_FILES = 25
SOURCE_SUFFIXES = (".cc", ".h", ".ts", ".css", ".py", ".sh", ".mjs", ".cmake")
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def layer_of(path):
    """The layer of a file or an include path, or None when it belongs to none."""
    parts = path.split("/")
    if parts[:2] == ["include", "vramplan"] and len(parts) > 3:
        return parts[2]
    if parts[0] == "src" and len(parts) > 2:
        return parts[1]
    if parts[0] == "vramplan" and len(parts) > 2:
        return parts[1]
    if len(parts) > 1 and parts[0] in LAYERS:
        return parts[0]
    return None


def tracked_files(root):
    out = []
    for top in ("src", "include", "bench", "tests", "web/src", "scripts", "cmake", "python",
                "reference"):
        for dirpath, dirnames, filenames in os.walk(os.path.join(root, top)):
            dirnames[:] = [d for d in dirnames if d not in ("node_modules", ".venv", "__pycache__")
                           and not d.startswith("build")]
            for name in filenames:
                out.append(os.path.relpath(os.path.join(dirpath, name), root))
    return sorted(out)


def include_target(root, includer, text):
    """The tree path an include names ("vramplan/x/y.h" or "x/y.h"), or None for a system one."""
    for candidate in (os.path.join("include", text), os.path.join("src", text),
                      os.path.join(os.path.dirname(includer), text)):
        if os.path.isfile(os.path.join(root, candidate)):
            return os.path.normpath(candidate)
    return None


def check(root):
    breaches = []
    files = tracked_files(root)
    cxx = [f for f in files if f.endswith((".cc", ".h")) and f.startswith(("src/", "include/"))]
    graph = {}
    for f in cxx:
        with open(os.path.join(root, f), encoding="utf-8") as handle:
            text = handle.read()
        targets = [t for t in (include_target(root, f, i) for i in INCLUDE.findall(text)) if t]
        graph[f] = targets
        mine = layer_of(f)
        if mine not in LAYERS or f.endswith("_test.cc") or os.path.basename(f).startswith("test_"):
            continue
        for t in targets:
            theirs = layer_of(t)
            if theirs in LAYERS and LAYERS.index(theirs) > LAYERS.index(mine):
                breaches.append(f"{f}: includes {t} ({theirs} is above {mine})")
    breaches += cycles(graph)
    for f in files:
        if not f.endswith(SOURCE_SUFFIXES):
            continue
        with open(os.path.join(root, f), encoding="utf-8", errors="replace") as handle:
            lines = sum(1 for _ in handle)
        if lines > MAX_LINES:
            breaches.append(f"{f}: {lines} lines (at most {MAX_LINES})")
    folders = {}
    for f in files:
        if f.endswith(SOURCE_SUFFIXES) and not re.search(r"(_test|\.test)\.\w+$", f):
            folders.setdefault(os.path.dirname(f), []).append(f)
    for folder, members in sorted(folders.items()):
        if len(members) > MAX_FILES and folder.startswith(("src", "include", "web/src")):
            breaches.append(f"{folder}/: {len(members)} source files (at most {MAX_FILES})")
    return breaches


def cycles(graph):
    """One line per include cycle found by depth-first search (each reported once)."""
    found, state, stack = [], {}, []

    def visit(node):
        state[node] = "open"
        stack.append(node)
        for nxt in graph.get(node, []):
            if state.get(nxt) == "open":
                loop = stack[stack.index(nxt):] + [nxt]
                found.append("include cycle: " + " -> ".join(loop))
            elif nxt not in state:
                visit(nxt)
        stack.pop()
        state[node] = "done"

    for node in sorted(graph):
        if node not in state:
            visit(node)
    return found


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "../..")
    breaches = check(os.path.abspath(root))
    for b in breaches:
        print(b)
    print(f"layout: {len(breaches)} breach(es)")
    return 1 if breaches else 0


if __name__ == "__main__":
    sys.exit(main())
