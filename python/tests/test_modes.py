"""The CLI's remaining modes from Python: estimate without formulas, quick, plan --emit, the
roofline's --gpu-catalog and validate's --serving/--throughput/--planner/--bands/--check, each
equal to the CLI's output for the same settings, and their bad input raising vramplan.Error."""

import json

import pytest

import vramplan

from conftest import ROOT


def cli_json(cli, *args):
    done = cli(*args)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


# -- estimate(formulas=False): --no-formulas


def test_estimate_without_formulas_equals_cli(cli, tmp_path):
    settings = {"model": "Llama-3.1-8B", "tp": 2, "seq_len": 8192, "formulas": False}
    done = cli("estimate", "--format", "json", scenario=settings, tmp=tmp_path)
    assert done.returncode == 0, done.stderr
    lean = vramplan.estimate(**settings).to_dict()
    assert lean == json.loads(done.stdout)
    flag = cli_json(
        cli,
        "estimate",
        "--model",
        "Llama-3.1-8B",
        "--tp",
        "2",
        "--seq-len",
        "8192",
        "--no-formulas",
        "--format",
        "json",
    )
    assert lean == flag


def test_estimate_without_formulas_keeps_every_number():
    full = vramplan.estimate(model="Llama-3.1-8B", pp=2, gpus=2).to_dict()
    lean = vramplan.estimate(model="Llama-3.1-8B", pp=2, gpus=2, formulas=False).to_dict()
    assert all(row["formula"] for stage in full["stages"] for row in stage["rows"])
    assert all(row["formula"] == "" for stage in lean["stages"] for row in stage["rows"])

    def strip(answer):
        for stage in answer["stages"]:
            for row in stage["rows"]:
                row.pop("formula")
                row.pop("source")  # the fast path leaves sources out with the formulas
        return answer

    assert strip(lean) == strip(full)


def test_formulas_must_be_a_bool():
    with pytest.raises(vramplan.Error) as caught:
        vramplan.estimate(model="Llama-3.1-8B", formulas="sometimes")
    assert caught.value.field == "formulas"
    assert caught.value.value == "sometimes"


# -- quick


@pytest.mark.parametrize(
    "settings",
    [
        {"params": "7B", "layers": 32, "hidden": 4096},
        {"params": "1.3B", "layers": 24, "hidden": 2048, "mode": "inference", "batch": 8},
        {"example": "medium-training"},
        {"example": "serving", "batch": 4},
    ],
    ids=lambda s: json.dumps(s),
)
def test_quick_equals_cli(cli, tmp_path, settings):
    done = cli("quick", "--format", "json", scenario=settings, tmp=tmp_path)
    assert done.returncode == 0, done.stderr
    assert vramplan.quick(**settings).to_dict() == json.loads(done.stdout)


def test_quick_examples_equal_cli(cli):
    expected = cli_json(cli, "quick", "--list-examples", "--format", "json")
    assert [e.to_dict() for e in vramplan.quick_examples()] == expected


@pytest.mark.parametrize(
    "settings,field",
    [
        ({"params": "lots", "layers": 32, "hidden": 4096}, "params"),
        ({"example": "no-such-example"}, "example"),
        ({"params": "7B", "layers": 32, "hidden": 4096, "mode": "racing"}, "mode"),
    ],
    ids=lambda x: json.dumps(x),
)
def test_quick_errors_match_cli(cli, tmp_path, settings, field):
    with pytest.raises(vramplan.Error) as caught:
        vramplan.quick(**settings)
    assert caught.value.field == field
    done = cli("quick", "--format", "json", scenario=settings, tmp=tmp_path)
    assert done.returncode == 2
    assert caught.value.accepted in done.stderr


# -- plan(emit=): --emit


def test_plan_emit_equals_cli(cli, tmp_path):
    settings = {"model": "Llama-3.1-8B", "gpus": 8, "global_batch": 64, "threads": 1}
    done = cli("plan", "--emit", "megatron", scenario=settings, tmp=tmp_path)
    assert done.returncode == 0, done.stderr
    answer = vramplan.plan(emit="megatron", **settings)
    assert answer.config == done.stdout
    assert answer.format == "megatron"
    assert answer.choice >= 1
    layouts = [c["layout"] for c in vramplan.plan(**settings).to_dict()["candidates"]]
    assert answer.layout == layouts[answer.choice - 1]


def test_plan_emit_unknown_format():
    with pytest.raises(vramplan.Error) as caught:
        vramplan.plan(model="Llama-3.1-8B", gpus=8, global_batch=64, emit="no-such-format")
    assert caught.value.field == "emit"


# -- roofline(gpu_catalog=): --gpu-catalog


def test_roofline_gpu_catalog_equals_cli(cli, tmp_path):
    catalog = json.loads((ROOT / "data" / "gpus.json").read_text())
    path = tmp_path / "catalog.json"
    path.write_text(json.dumps(catalog))
    expected = cli_json(
        cli,
        "roofline",
        "--model",
        "Llama-3.1-8B",
        "--gpu",
        "h100-80gb",
        "--gpu-catalog",
        str(path),
        "--format",
        "json",
    )
    by_path = vramplan.roofline(model="Llama-3.1-8B", gpu="h100-80gb", gpu_catalog=str(path))
    by_dict = vramplan.roofline(model="Llama-3.1-8B", gpu="h100-80gb", gpu_catalog=catalog)
    assert by_path.to_dict() == expected
    assert by_dict.to_dict() == expected


def test_roofline_gpu_catalog_is_used(tmp_path):
    # A catalog that holds a renamed GPU: the built-in catalog has no such id.
    catalog = json.loads((ROOT / "data" / "gpus.json").read_text())
    entries = catalog["gpus"] if isinstance(catalog, dict) else catalog
    next(e for e in entries if e["id"] == "h100-80gb")["id"] = "my-own-gpu"
    answer = vramplan.roofline(model="Llama-3.1-8B", gpu="my-own-gpu", gpu_catalog=catalog)
    assert answer.to_dict()
    with pytest.raises(vramplan.Error) as caught:
        vramplan.roofline(model="Llama-3.1-8B", gpu="my-own-gpu")
    assert caught.value.field == "gpu"


@pytest.mark.parametrize("catalog", ["{not json", "/no/such/catalog.json", 42])
def test_roofline_bad_gpu_catalog(catalog):
    with pytest.raises(vramplan.Error) as caught:
        vramplan.roofline(model="Llama-3.1-8B", gpu_catalog=catalog)
    assert caught.value.field.startswith("gpu_catalog")


# -- validate's modes


@pytest.mark.parametrize("mode", ["serving", "throughput", "planner", "bands"])
def test_validate_mode_equals_cli(cli, mode):
    expected = cli_json(cli, "validate", f"--{mode}", "--format", "json")
    assert vramplan.validate(**{mode: True}).to_dict() == expected


@pytest.mark.parametrize(
    "args", [{}, {"dataset": "megatron"}, {"throughput": True}], ids=json.dumps
)
def test_validate_check_as_cli(cli, args):
    argv = ["validate", "--check", "--format", "json"]
    if "dataset" in args:
        argv += ["--dataset", args["dataset"]]
    if args.get("throughput"):
        argv += ["--throughput"]
    done = cli(*argv)
    assert done.returncode in (0, 1), done.stderr
    if done.returncode == 0:
        assert vramplan.validate(check=True, **args).to_dict() == json.loads(done.stdout)
    else:
        with pytest.raises(vramplan.AccuracyError) as caught:
            vramplan.validate(check=True, **args)
        assert caught.value.field == "check"
        assert caught.value.failed > 0
        assert caught.value.result.to_dict() == json.loads(done.stdout)


@pytest.mark.parametrize(
    "args,field",
    [
        ({"dataset": "megatron", "serving": True}, "dataset"),
        ({"serving": True, "check": True}, "check"),
        ({"bands": True, "check": True}, "check"),
        ({"serving": True, "planner": True}, "planner"),
        ({"throughput": "yes"}, "throughput"),
    ],
    ids=lambda x: json.dumps(x),
)
def test_validate_bad_modes(args, field):
    with pytest.raises(vramplan.Error) as caught:
        vramplan.validate(**args)
    assert caught.value.field == field


# -- an estimate read in parts (the answer stays in C++ until read)


@pytest.mark.parametrize(
    "settings",
    [
        {"model": "Llama-3.1-8B", "tp": 2, "pp": 2, "gpus": 8},
        {"model": "Llama-3.1-8B", "formulas": False},
        {
            "model": "Llama-3.1-8B",
            "from_": "--tensor-model-parallel-size 2 --seq-length 4096 --micro-batch-size 1 --bf16",
        },
    ],
    ids=lambda s: json.dumps(s)[:60],
)
def test_estimate_parts_equal_the_whole(settings):
    whole = vramplan.estimate(**settings).to_dict()
    lazy = vramplan.estimate(**settings)
    assert sorted(lazy.keys()) == sorted(whole)
    fresh = vramplan.estimate(**settings)
    for key in whole:
        value = fresh[key]
        assert (
            value.to_dict()
            if isinstance(value, vramplan.Result)
            else [v.to_dict() if isinstance(v, vramplan.Result) else v for v in value]
            if isinstance(value, list)
            else value
        ) == whole[key]
    with pytest.raises(AttributeError):
        vramplan.estimate(model="Llama-3.1-8B").no_such_key
    assert "peak" in vramplan.estimate(model="Llama-3.1-8B")
