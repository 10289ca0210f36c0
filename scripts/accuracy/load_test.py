import json

import pytest

from accuracy.load import REQUIRED_KEYS, ReportError, check_report, load_report


def complete_report():
    return {key: [] for key in REQUIRED_KEYS}


def test_check_report_names_the_missing_key():
    report = complete_report()
    del report["fit_confusion"]
    with pytest.raises(ReportError, match="no 'fit_confusion' key"):
        check_report(report)


def test_load_report_attaches_the_serving_report(tmp_path):
    memory, serving = tmp_path / "memory.json", tmp_path / "serving.json"
    memory.write_text(json.dumps(complete_report()), encoding="utf-8")
    serving.write_text(json.dumps({"rows": [1]}), encoding="utf-8")
    report = load_report(str(memory), str(serving))
    assert report["serving"] == {"rows": [1]}
    assert "serving" not in load_report(str(memory))
