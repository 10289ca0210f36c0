"""Every answer's to_dict() equals the CLI's JSON for the same settings (a scenario file)."""

import json

import pytest

import vramplan

ESTIMATES = [
    {"model": "Llama-3.1-8B"},
    {"model": "Llama-3.1-8B", "tp": 2, "seq_len": 8192},
    {"model": "Llama-3.1-8B", "tp": 2, "pp": 2, "gpus": 8, "micro_batch": 2},
    {"model": "Llama-3.1-70B", "tp": 8, "zero": 3, "gpus": 16},
    {"model": "Qwen3-32B", "recompute": "full", "gpu": "a100-40gb"},
    {"model": "Llama-3.1-8B", "seq_len": 4096, "micro_batch": 4, "zero": 1, "gpus": 4},
]


@pytest.mark.parametrize("settings", ESTIMATES, ids=lambda s: json.dumps(s))
def test_estimate_equals_cli(cli, tmp_path, settings):
    done = cli("estimate", "--format", "json", scenario=settings, tmp=tmp_path)
    assert done.returncode == 0, done.stderr
    assert vramplan.estimate(**settings).to_dict() == json.loads(done.stdout)


INFERS = [
    {"model": "Llama-3.1-8B"},
    {"model": "Llama-3.1-8B", "context": 8192, "tp": 2},
    {"model": "Qwen3-32B", "gpu_memory_utilization": 0.5},
]


@pytest.mark.parametrize("settings", INFERS, ids=lambda s: json.dumps(s))
def test_infer_equals_cli(cli, tmp_path, settings):
    done = cli("infer", "--format", "json", scenario=settings, tmp=tmp_path)
    assert done.returncode == 0, done.stderr
    assert vramplan.infer(**settings).to_dict() == json.loads(done.stdout)


def test_plan_equals_cli(cli, tmp_path):
    # One search thread on both sides so that the search's counters are deterministic; only
    # stats.seconds (a clock) may differ.
    settings = {"model": "Llama-3.1-8B", "gpus": 8, "global_batch": 64, "threads": 1}
    done = cli("plan", "--format", "json", scenario=settings, tmp=tmp_path)
    assert done.returncode == 0, done.stderr
    expected = json.loads(done.stdout)
    answer = vramplan.plan(**settings).to_dict()
    assert answer["stats"].pop("seconds") >= 0
    expected["stats"].pop("seconds")
    assert answer == expected


ROOFLINES = [
    {"model": "Llama-3.1-8B"},
    {"model": "Llama-3.1-8B", "tp": 4, "gpu": "a100-80gb"},
]


@pytest.mark.parametrize("settings", ROOFLINES, ids=lambda s: json.dumps(s))
def test_roofline_equals_cli(cli, tmp_path, settings):
    done = cli("roofline", "--format", "json", scenario=settings, tmp=tmp_path)
    assert done.returncode == 0, done.stderr
    assert vramplan.roofline(**settings).to_dict() == json.loads(done.stdout)


def test_models_and_gpus_equal_cli(cli):
    for name, function in (("models", vramplan.models), ("gpus", vramplan.gpus)):
        done = cli(name, "--format", "json")
        assert done.returncode == 0, done.stderr
        assert [m.to_dict() for m in function()] == json.loads(done.stdout)


@pytest.mark.parametrize(
    "dataset", [None, "megatron", "torchtitan", "pytorch-reference", "gpu-measured"]
)
def test_validate_equals_cli(cli, dataset):
    args = ["--dataset", dataset] if dataset else []
    done = cli("validate", *args, "--format", "json")
    assert done.returncode == 0, done.stderr
    got = vramplan.validate(dataset=dataset).to_dict()
    assert got == json.loads(done.stdout)
    assert ("uncertainty" in got) == (dataset is None)


def test_from_config_equals_cli(cli, fixtures):
    path = fixtures / "megatron" / "llama3_8b_pretrain.sh"
    done = cli("estimate", "--from", str(path), "--format", "json")
    assert done.returncode == 0, done.stderr
    from_path = vramplan.from_config(str(path))
    assert from_path.to_dict() == json.loads(done.stdout)
    assert from_path.imported.format == "megatron"
    # the text itself gives the same answer
    assert vramplan.from_config(path.read_text()).to_dict() == from_path.to_dict()


def test_from_config_reads_named_files_beside_it(cli, fixtures):
    path = fixtures / "deepspeed" / "run_clm_zero3.sh"
    done = cli("estimate", "--from", str(path), "--format", "json")
    assert done.returncode == 0, done.stderr
    assert vramplan.from_config(path).to_dict() == json.loads(done.stdout)


def test_emit_equals_cli(cli):
    formats = [f.name for f in vramplan.emit_formats()]
    assert formats
    done = cli("estimate", "--model", "Llama-3.1-8B", "--tp", "2", "--emit", formats[0])
    answer = vramplan.estimate(model="Llama-3.1-8B", tp=2, emit=formats[0])
    assert done.returncode == 0, done.stderr
    assert answer.config == done.stdout
    assert answer.format == formats[0]


def test_fit_equals_cli(cli, tmp_path):
    # "seconds" is a clock; the rest is the CLI's JSON.
    settings = {"model": "Llama-3.1-8B", "dp": 8, "zero": 3, "recompute": "full", "seq_len": 8192}
    done = cli("fit", "micro-batch", "--format", "json", scenario=settings, tmp=tmp_path)
    assert done.returncode == 0, done.stderr
    expected = json.loads(done.stdout)
    answer = vramplan.fit("micro_batch", **settings).to_dict()
    assert answer.pop("seconds") >= 0
    expected.pop("seconds")
    assert answer == expected
    assert answer["fits"] and answer["value"] >= 1
    with pytest.raises(vramplan.Error) as error:
        vramplan.fit("micro_batch", model="Llama-3.1-8B", micro_batch=2)
    assert error.value.field == "micro_batch"
