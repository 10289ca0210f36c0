"""Bad input raises vramplan.Error naming the field as written, the value and what is accepted:
the same error the CLI reports (exit 2) for the same settings."""

import json

import pytest

import vramplan

BAD = [
    ("estimate", {"model": "Llama-3.1-8B", "tp": 3}, "tp"),
    ("estimate", {"model": "Llama-3.1-8B", "seq_len": -1}, "seq_len"),
    ("estimate", {"model": "Llama-3.1-8B", "recompute": "sometimes"}, "recompute"),
    ("estimate", {"model": "No-Such-Model"}, "model"),
    ("estimate", {"model": "Llama-3.1-8B", "no_such_key": 1}, "no_such_key"),
    ("estimate", {"model": "Llama-3.1-8B", "tp": "two"}, "tp"),
    ("infer", {"model": "Llama-3.1-8B", "context": 0}, "context"),
    ("infer", {"model": "Llama-3.1-8B", "kv_dtype": "int3"}, "kv_dtype"),
    ("plan", {"model": "Llama-3.1-8B", "global_batch": 64}, "gpus"),
    ("roofline", {"model": "Llama-3.1-8B", "gpu": "no-such-gpu"}, "gpu"),
    ("roofline", {"model": "Llama-3.1-8B", "gpu_memory_gib": 80}, "gpu_memory_gib"),
]


@pytest.mark.parametrize("command,settings,field", BAD, ids=lambda x: json.dumps(x))
def test_error_matches_cli(cli, tmp_path, command, settings, field):
    with pytest.raises(vramplan.Error) as caught:
        getattr(vramplan, command)(**settings)
    e = caught.value
    assert e.field == field
    assert e.accepted
    assert str(e) == e.message
    assert isinstance(e, ValueError)
    done = cli(command, "--format", "json", scenario=settings, tmp=tmp_path)
    assert done.returncode == 2
    assert e.value in done.stderr
    assert e.reason in done.stderr
    assert e.accepted in done.stderr


def test_error_carries_reason():
    with pytest.raises(vramplan.Error) as caught:
        vramplan.estimate(model="Llama-3.1-8B", tp=3)
    assert caught.value.value == "3"
    assert caught.value.reason


def test_settings_that_are_not_json():
    with pytest.raises(vramplan.Error) as caught:
        vramplan.estimate(model=object())
    assert caught.value.field == "settings"


def test_bad_emit_format():
    with pytest.raises(vramplan.Error) as caught:
        vramplan.estimate(model="Llama-3.1-8B", emit="no-such-format")
    assert caught.value.field == "emit"
    with pytest.raises(vramplan.Error) as caught:
        vramplan.estimate(model="Llama-3.1-8B", emit=3)
    assert caught.value.field == "emit"


def test_model_file_that_does_not_exist(tmp_path):
    with pytest.raises(vramplan.Error) as caught:
        vramplan.estimate(model=str(tmp_path / "missing" / "config.json"))
    assert caught.value.field == "model"


def test_from_config_garbage():
    with pytest.raises(vramplan.Error) as caught:
        vramplan.from_config("this is not a launch config\nat all")
    assert caught.value.field.startswith("from")


@pytest.mark.parametrize("headroom", [-0.1, 1, 1.5, "10%", True])
def test_check_headroom_refused(headroom):
    with pytest.raises(vramplan.Error) as caught:
        vramplan.check(model="Llama-3.1-8B", headroom=headroom)
    assert caught.value.field == "headroom"


@pytest.mark.parametrize("dataset", ["nope", "ultrascale-crashed", 3])
def test_validate_unknown_dataset(dataset):
    with pytest.raises(vramplan.Error) as e:
        vramplan.validate(dataset=dataset)
    assert e.value.field == "dataset"
    if isinstance(dataset, str):
        assert e.value.value == dataset and "megatron" in e.value.accepted
