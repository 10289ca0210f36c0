"""Runs one scenario: the model on fake tensors, the layout, two training steps, the tracker."""

from __future__ import annotations

import contextlib

import torch
from torch._subclasses.fake_tensor import FakeTensorMode

from . import finetune, layouts, recompute
from .distributed import fake_world, mesh, meshes_outside_fake_mode
from .gpu_kernels import emulate_cuda_rms_norm, emulate_cuda_sdpa, hf_unpacked_sequences
from .models import build_config, build_model, materialize_fake
from .scenario import PRECISIONS, Scenario
from .tracker import MemoryTracker, saved_tensor_marking

DTYPES = {"fp32": torch.float32, "bf16": torch.bfloat16}


class NotRunnable(Exception):
    """The scenario cannot run with this model code or layout; the message says why."""


def _homogeneous_groups(params):
    """Tensor parallelism without sequence parallelism leaves the norms' weights plain tensors
    beside the DTensor shards, and a fused or foreach step refuses a mix of the two ("got mixed
    torch.Tensor and DTensor"): as a user would, give each kind its own parameter group (the
    step runs once per group, each on tensors of one kind)."""
    from torch.distributed.tensor import DTensor

    params = list(params)
    shards = [p for p in params if isinstance(p, DTensor)]
    plain = [p for p in params if not isinstance(p, DTensor)]
    if not shards or not plain:
        return params
    return [{"params": shards}, {"params": plain}]


def make_optimizer(name, params):
    params = _homogeneous_groups(params)
    if name == "adamw-foreach":
        return torch.optim.AdamW(params, lr=1e-4, foreach=True)
    if name == "adamw-fused":
        return torch.optim.AdamW(params, lr=1e-4, fused=True)
    if name == "sgd":
        return torch.optim.SGD(params, lr=1e-4, foreach=True)
    if name == "sgd-momentum":
        return torch.optim.SGD(params, lr=1e-4, momentum=0.9, foreach=True)
    if name == "adafactor":
        return torch.optim.Adafactor(params, lr=1e-2, foreach=True)
    raise ValueError(f"optimizer {name!r}")


def run(sc: Scenario):
    """Returns (tracker report, facts dict). Raises NotRunnable."""
    with fake_world(sc.world, sc.rank):
        return _run_in_world(sc)


def _run_in_world(sc):
    param_dtype_name, autocast, fsdp_mixed = PRECISIONS[sc.precision]
    dtype = DTYPES[param_dtype_name]
    tracker = MemoryTracker("cpu")
    facts = {}
    meshes = _meshes(sc)  # device meshes read real rank tables: built outside fake mode
    fake = FakeTensorMode(allow_non_fake_inputs=True)
    if sc.model_code == "torchtune":
        with fake, tracker, emulate_cuda_sdpa() as sdpa_state:
            return _run_torchtune(sc, tracker, facts, sdpa_state)
    if sc.model_code == "torchtitan":
        with meshes_outside_fake_mode(), fake, tracker, emulate_cuda_rms_norm():
            return _run_torchtitan(sc, meshes, tracker, facts)
    with meshes_outside_fake_mode(), fake, tracker, emulate_cuda_sdpa() as sdpa_state, hf_unpacked_sequences():
        config = build_config(sc.preset, num_layers=sc.num_layers)
        with fake_mode_off():
            model = build_model(config, dtype, device="meta")
            model = _apply_method(sc, model)
        if sc.layout == "pp":
            return _run_pipeline(sc, model, config, dtype, tracker, facts, sdpa_state)
        materialize_fake(_base(model))
        if sc.method == "qlora":
            facts["nf4_linears"] = finetune.quantize_nf4(_base(model))
        facts["attn_implementation"] = _base(model).config._attn_implementation
        facts["model_class"] = type(_base(model)).__name__
        facts["recomputed_layers"] = recompute.apply_recompute(_base(model), sc.recompute, sc.recompute_every)
        model = _apply_layout(sc, model, meshes, fsdp_mixed, tracker)
        optimizer = _start_tracking(sc, tracker, model)
        vocab = config.vocab_size
        ids = torch.randint(0, vocab, (sc.micro_batch, sc.seq_len))
        # context parallelism shards the token and label buffers in place: two tensors then
        labels = ids.clone() if sc.cp > 1 else ids
        # context parallelism shards its buffers in place, so they exist before the step; elsewhere
        # positions are made by each forward, as a caller passing them would
        cp_positions = _positions(sc) if sc.cp > 1 else None
        amp = torch.autocast("cpu", dtype=torch.bfloat16) if autocast else contextlib.nullcontext()

        def microbatch_loss():
            positions = cp_positions if cp_positions is not None else _positions(sc)
            with amp:
                out = model(input_ids=ids, labels=labels, **positions)
            return out.loss / sc.microbatches

        _two_steps(
            sc, tracker, optimizer, microbatch_loss, lambda: _context_parallel(sc, meshes, ids, labels, cp_positions)
        )
        facts["sdpa_calls"] = dict(sdpa_state["calls"])
        sdpa_state["calls"].update(flash=0, efficient=0, math=0, fallback=0)
    return tracker.report, facts


def _start_tracking(sc, tracker, model):
    """The optimizer over the model's trainable parameters, with the tracker told which storages
    are parameters and optimizer states; peaks start from here (building the model is not
    training)."""
    optimizer = make_optimizer(sc.optimizer, finetune.trainable(model))
    tracker.mark_parameters(model)
    tracker.watch_optimizer(optimizer)
    tracker.reset_peak()
    return optimizer


def _two_steps(sc, tracker, optimizer, microbatch_loss, microbatch_context=contextlib.nullcontext):
    """Two training steps of sc.microbatches each, every framework's loop in the same order:
    microbatch_loss() runs the forward and the loss (what it made besides the loss is freed as it
    returns, as the frameworks `del` their outputs), then the backward; then the optimizer step
    and zero_grad(set_to_none=True)."""
    for step in (1, 2):
        for _ in range(sc.microbatches):
            with microbatch_context():
                tracker.set_phase("forward", step)
                with saved_tensor_marking(tracker):
                    loss = microbatch_loss()
                tracker.set_phase("backward", step)
                loss.backward()
                del loss
        tracker.set_phase("optimizer", step)
        with tracker.answering_scalars():
            optimizer.step()
        tracker.check_now()
        tracker.resolve_peak()  # an optimizer-step peak is split while .grad still exists
        optimizer.zero_grad(set_to_none=True)
    tracker.set_phase("done")


@contextlib.contextmanager
def fake_mode_off():
    from torch.utils._python_dispatch import _disable_current_modes

    with _disable_current_modes():
        yield


def _positions(sc):
    # HF derives positions from the embedding output's length; under sequence parallelism that
    # output is a sequence shard, so the full positions are passed as the caller would; under
    # context parallelism they are sharded with the tokens (_context_parallel)
    if sc.cp > 1:  # a buffer context_parallel shards with the tokens: one row per sequence
        return {"position_ids": torch.arange(sc.seq_len).unsqueeze(0).expand(sc.micro_batch, -1).contiguous()}
    if sc.tp > 1 and sc.sequence_parallel:
        return {"position_ids": torch.arange(sc.seq_len).unsqueeze(0)}
    return {}


def _context_parallel(sc, meshes, ids, labels, positions):
    """PyTorch's context parallelism (torch.distributed.tensor.experimental.context_parallel,
    as torchtitan applies it to SDPA models): the tokens, labels and positions are sharded along
    the sequence in place (load-balanced chunks) for the step, and SDPA runs as ring attention
    over the cp ranks (its flash op, emulate_cuda_sdpa)."""
    if sc.layout != "cp":
        return contextlib.nullcontext()
    from torch.distributed.tensor.experimental import context_parallel

    buffers = [ids, labels] + list(positions.values())
    return context_parallel(meshes, buffers=buffers, buffer_seq_dims=[1] * len(buffers))


def _base(model):
    """The transformers model under PEFT's wrappers."""
    if hasattr(model, "get_base_model"):
        return model.get_base_model()
    return model


def _apply_method(sc, model):
    if sc.method == "lora":
        for p in model.parameters():
            p.requires_grad_(False)
        return finetune.apply_lora(model, sc.lora_rank, sc.lora_targets)
    if sc.method == "qlora":  # the base is quantized once the model is on fake tensors
        for p in model.parameters():
            p.requires_grad_(False)
        return finetune.apply_lora(model, sc.lora_rank, sc.lora_targets)
    if sc.method == "frozen":
        finetune.freeze(model, sc.freeze_embeddings, sc.freeze_first_layers)
    return model


def _meshes(sc):
    if sc.layout in ("single", "pp"):
        return None
    if sc.layout in ("ddp", "fsdp"):
        return mesh((sc.dp,), ("dp",))
    if sc.layout == "tp":
        return mesh((sc.tp,), ("tp",))
    if sc.layout == "cp":
        return mesh((sc.cp,), ("cp",))
    if sc.layout == "fsdp+tp":
        return mesh((sc.dp, sc.tp), ("dp", "tp"))
    if sc.layout == "hsdp":
        # HSDP: shard within groups of 2, replicate across them
        return mesh((sc.dp // 2, 2), ("replicate", "shard"))
    raise NotRunnable(f"layout {sc.layout} is not implemented")


def _apply_layout(sc, model, m, fsdp_mixed, tracker):
    base = _base(model)
    if sc.layout == "single":
        return model
    if sc.layout == "ddp":
        return layouts.apply_ddp(_base(model), m, tracker) and model
    if sc.layout in ("tp", "fsdp+tp"):
        if not layouts.tp_supported(base):
            raise NotRunnable("the TP plan names Llama-style projections this model does not have")
        layouts.apply_tp(base, m["tp"], sc.sequence_parallel)
        if sc.layout == "fsdp+tp":
            layouts.apply_fsdp(base, m["dp"], sc.reshard_after_forward, fsdp_mixed, tracker)
        return model
    if sc.layout in ("fsdp", "hsdp"):
        layouts.apply_fsdp(base, m, sc.reshard_after_forward, fsdp_mixed, tracker)
        return model
    if sc.layout == "cp":
        return model  # the sequence is sharded per step (_context_parallel below)
    raise NotRunnable(f"layout {sc.layout} is not implemented")


def _run_pipeline(sc, model, config, dtype, tracker, facts, sdpa_state):
    import torch.distributed as dist

    from . import pipeline

    if sc.method != "full" or sc.precision not in ("bf16", "fp32"):
        raise NotRunnable("pipeline rows run full training in one dtype")
    facts["recomputed_layers"] = recompute.apply_recompute(model, sc.recompute, sc.recompute_every)
    stages, modules, parts = pipeline.build_stages(model, sc, dist.group.WORLD, config.hidden_size, dtype)
    for module in modules:
        module._apply(lambda t: torch.empty_like(t, device="cpu"))
    facts["stage_layers"] = [parts[st.stage_index]["layers"] for st in stages]
    pipeline.track_phases(stages, tracker)

    def loss_fn(logits, labels):
        return model.loss_function(logits=logits, labels=labels, vocab_size=config.vocab_size)

    schedule = pipeline.make_schedule(sc, stages, loss_fn)
    params = [p for m in modules for p in m.parameters() if p.requires_grad]
    optimizer = make_optimizer(sc.optimizer, params)
    for m in modules:
        tracker.mark_parameters(m)
    tracker.watch_optimizer(optimizer)
    tracker.reset_peak()
    batch = sc.micro_batch * sc.microbatches
    ids = torch.randint(0, config.vocab_size, (batch, sc.seq_len))
    first = any(parts[st.stage_index]["embed"] for st in stages)
    last = any(parts[st.stage_index]["head"] for st in stages)
    for step in (1, 2):
        tracker.set_phase("forward", step)
        with saved_tensor_marking(tracker):
            args = (ids,) if first else ()
            kwargs = {"target": ids, "losses": []} if last else {}
            schedule.step(*args, **kwargs)
        tracker.set_phase("optimizer", step)
        with tracker.answering_scalars():
            optimizer.step()
        tracker.check_now()
        tracker.resolve_peak()
        optimizer.zero_grad(set_to_none=True)
    tracker.set_phase("done")
    facts["sdpa_calls"] = dict(sdpa_state["calls"])
    facts["attn_implementation"] = model.config._attn_implementation
    facts["model_class"] = type(model).__name__
    sdpa_state["calls"].update(flash=0, efficient=0, fallback=0)
    return tracker.report, facts


def _run_torchtune(sc, tracker, facts, sdpa_state):
    """torchtune's single-device recipes' step on its own model (torchtune_run.py):
    logits = model(tokens); loss = loss_fn(logits, labels); del logits; loss.backward()."""
    from . import torchtune_run

    if sc.layout != "single" or sc.precision != "bf16":
        raise NotRunnable("torchtune rows run its single-device recipes in bf16")
    with fake_mode_off():
        model = torchtune_run.build(sc)
    torchtune_run.materialize_fake(model)
    facts["model_class"] = type(model).__name__
    facts["attn_implementation"] = "sdpa"
    facts["recomputed_layers"] = torchtune_run.apply_recompute(model, sc.recompute)
    optimizer = _start_tracking(sc, tracker, model)
    ids = torch.randint(0, model.tok_embeddings.num_embeddings, (sc.micro_batch, sc.seq_len))
    loss_fn, labels = torchtune_run.loss_and_labels(ids)

    def microbatch_loss():
        logits = model(ids)
        return loss_fn(logits, labels) / sc.microbatches

    _two_steps(sc, tracker, optimizer, microbatch_loss)
    facts["sdpa_calls"] = dict(sdpa_state["calls"])
    sdpa_state["calls"].update(flash=0, efficient=0, math=0, fallback=0)
    return tracker.report, facts


def _run_torchtitan(sc, meshes, tracker, facts):
    """torchtitan's model, FSDP2 wrapping, activation checkpointing and loss in its trainer's
    order (torchtitan_run.py), one GPU (FSDP over one rank) or FSDP over dp ranks."""
    from . import torchtitan_run

    if sc.layout not in ("single", "fsdp") or sc.precision != "fsdp-mixed" or sc.method != "full":
        raise NotRunnable("torchtitan rows run full training with FSDP2 mixed precision")
    with fake_mode_off():
        model = torchtitan_run.build(sc)
        positions, masks = torchtitan_run.attention_masks(model, sc.micro_batch, sc.seq_len)
        one_rank = mesh((1,), ("dp",)) if meshes is None else None
    model._apply(lambda t: torch.empty_like(t, device="cpu"))
    if model.enable_weight_tying:  # Decoder.__init__'s tie, which _apply's copies undo
        model.tok_embeddings.weight = model.lm_head.weight
    facts["model_class"] = type(model).__name__
    facts["attn_implementation"] = torchtitan_run.ATTENTION_BACKEND
    facts["recomputed_layers"] = torchtitan_run.apply_recompute(model, sc.recompute)
    torchtitan_run.apply_fsdp(model, meshes if meshes is not None else one_rank, sc.reshard_after_forward)
    layouts._tag_fsdp_buffers(tracker)
    optimizer = _start_tracking(sc, tracker, model)
    ids = torch.randint(0, model.tok_embeddings.num_embeddings, (sc.micro_batch, sc.seq_len))
    loss_fn = torchtitan_run.loss_fn()
    tokens = torch.tensor(float(sc.micro_batch * sc.seq_len * sc.microbatches))

    def microbatch_loss():
        pred = model(ids, positions=positions, attention_masks=masks)
        return loss_fn(pred, ids, tokens)[0]

    _two_steps(sc, tracker, optimizer, microbatch_loss)
    facts["sdpa_calls"] = {}
    return tracker.report, facts
