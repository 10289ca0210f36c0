"""Executes the example notebook (python/examples/vramplan.ipynb) in a fresh kernel with nbclient,
as a reader would run it; any cell's error fails (ctest python.notebook). The kernel inherits
PYTHONPATH, so it imports the vramplan package of the build dir.

usage: run_notebook.py NOTEBOOK
"""

import sys

import nbclient
import nbformat


def main(path):
    notebook = nbformat.read(path, as_version=4)
    nbclient.NotebookClient(notebook, timeout=120, kernel_name="python3").execute()
    html = [
        o
        for cell in notebook.cells
        for o in cell.get("outputs", [])
        if "text/html" in o.get("data", {})
    ]
    if not html:
        sys.exit(f"{path}: no cell drew the estimate (text/html output)")
    print(f"{path}: {len(notebook.cells)} cells ran, {len(html)} drawn as HTML")


if __name__ == "__main__":
    main(sys.argv[1])
