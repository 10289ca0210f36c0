"""The CLI the Python answers are compared with: $VRAMPLAN_CLI (set by ctest), else build/vramplan."""

import json
import os
import pathlib
import subprocess

import pytest

ROOT = pathlib.Path(os.environ.get("VRAMPLAN_SOURCE_DIR", pathlib.Path(__file__).parents[2]))


@pytest.fixture(scope="session")
def cli():
    path = os.environ.get("VRAMPLAN_CLI", str(ROOT / "build" / "vramplan"))
    if not os.path.exists(path):
        pytest.fail(f"no vramplan program at {path} (set VRAMPLAN_CLI)")

    def run(*args, scenario=None, tmp=None):
        argv = [path, *args]
        if scenario is not None:
            file = tmp / "scenario.json"
            file.write_text(json.dumps(scenario))
            argv += ["--scenario", str(file)]
        done = subprocess.run(argv, capture_output=True, text=True, check=False)
        return done

    return run


@pytest.fixture(scope="session")
def fixtures():
    return ROOT / "tests" / "fixtures" / "imports"
