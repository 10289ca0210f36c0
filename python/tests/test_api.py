"""The Python surface: attribute access, to_dict, the notebook view, pandas, check, plan threads."""

import threading
import time

import pytest

import vramplan


@pytest.fixture(scope="module")
def est():
    return vramplan.estimate(model="Llama-3.1-8B", tp=2, seq_len=8192)


def test_attribute_access(est):
    data = est.to_dict()
    assert est.peak.allocated_bytes == data["peak"]["allocated_bytes"] > 0
    assert est.parameters.total == data["parameters"]["total"] > 7e9
    assert est.stages[0].rows[0].formula == data["stages"][0]["rows"][0]["formula"]
    assert est.stages[0].rows[0].source
    assert est.fit[0].gpu == "h100-80gb"
    assert isinstance(est.warnings, list)
    assert est["peak"] == est.peak
    assert "peak" in est and "nonsense" not in est
    with pytest.raises(AttributeError, match="nonsense"):
        _ = est.nonsense
    with pytest.raises(AttributeError):
        est.peak = 1


def test_to_dict_is_a_copy(est):
    d = est.to_dict()
    d["peak"]["allocated_bytes"] = -1
    assert est.peak.allocated_bytes > 0


def test_keyword_none_means_not_given():
    assert (
        vramplan.estimate(model="Llama-3.1-8B", tp=None).to_dict()
        == vramplan.estimate(model="Llama-3.1-8B").to_dict()
    )


def test_from_keyword_is_the_api_from(fixtures):
    text = (fixtures / "megatron" / "llama3_8b_pretrain.sh").read_text()
    assert vramplan.estimate(from_=text).to_dict() == vramplan.from_config(text).to_dict()


def test_html_view_draws_every_stage_and_row():
    est = vramplan.estimate(model="Llama-3.1-8B", pp=2, gpus=2)
    page = est._repr_html_()
    assert page.count("<tr>") == 1 + sum(len(s.rows) for s in est.stages)
    for stage in est.stages:
        assert stage.name in page
        for row in stage.rows:
            assert row.component in page


def test_to_pandas(est):
    try:
        import pandas  # noqa: F401
    except ImportError:
        with pytest.raises(ImportError, match="pandas"):
            est.to_pandas()
        return
    frame = est.to_pandas()
    assert len(frame) == sum(len(s.rows) for s in est.stages)
    assert {"stage", "component", "bytes", "formula"} <= set(frame.columns)


def test_check_passes_when_it_fits():
    answer = vramplan.check(model="Llama-3.1-8B", gpus=8, zero=3)
    assert answer.fit[0].verdict != "does_not_fit"


def test_check_raises_with_the_breakdown():
    with pytest.raises(vramplan.Error) as caught:
        vramplan.check(model="Llama-3.1-70B", gpu="h100-80gb")
    e = caught.value
    assert e.field == "gpu" and e.value == "h100-80gb"
    assert "weights" in str(e).lower()
    assert e.estimate.peak.device_bytes > e.estimate.fit[0].usable_bytes


def test_check_headroom_tightens_the_limit():
    est = vramplan.estimate(model="Llama-3.1-8B", gpus=8, zero=3)
    used = est.peak.device_bytes / est.fit[0].usable_bytes
    assert used < 1
    vramplan.check(model="Llama-3.1-8B", gpus=8, zero=3, headroom=(1 - used) / 2)
    with pytest.raises(vramplan.Error):
        vramplan.check(model="Llama-3.1-8B", gpus=8, zero=3, headroom=(1 - used) * 1.5 + 1e-9)


def test_plan_releases_the_gil():
    ticks = 0
    done = threading.Event()

    def search():
        vramplan.plan(model="Llama-3.1-70B", gpus=256, global_batch=1024, threads=1)
        done.set()

    worker = threading.Thread(target=search)
    start = time.perf_counter()
    worker.start()
    while not done.is_set():
        ticks += 1
        time.sleep(0.001)
    worker.join()
    # With the GIL held, this thread could not tick while the search ran.
    assert ticks >= 2, (ticks, time.perf_counter() - start)


def test_models_and_gpus():
    names = [m.name for m in vramplan.models()]
    assert "Llama-3.1-8B" in names
    assert any(g.id == "h100-80gb" for g in vramplan.gpus()) or vramplan.gpus()


def test_formats():
    assert {f.name for f in vramplan.from_formats()} >= {"megatron"}
    assert vramplan.emit_formats()
