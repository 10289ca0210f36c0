"""Pipeline parallelism with `torch.distributed.pipelining` over Hugging Face decoder layers.

Each pipeline stage is a module holding the real HF submodules of its part (the token embedding
on the first stage, the final norm, LM head and HF's loss on the last), split as torchtitan's
`generate_llm_fqn_per_model_part` splits: the embedding and the norm + LM head count as one
layer each, and the remainder of (layers + 2) / stages goes to the first stages. The stage's
forward calls the HF decoder layers the way the HF model's forward does (rotary embeddings once
per stage, no mask: SDPA's causal flag). Only this rank's stages are materialised.
"""

from __future__ import annotations

import torch

from .models import decoder_layers


def split_units(num_layers, num_stages):
    """[(first_layer, end_layer, has_embedding, has_head)] per stage, torchtitan's balanced split."""
    units = ["embed"] + list(range(num_layers)) + ["head"]
    base, extra = divmod(len(units), num_stages)
    out, pos = [], 0
    for s in range(num_stages):
        n = base + (1 if s < extra else 0)
        part = units[pos : pos + n]
        pos += n
        layers = [u for u in part if isinstance(u, int)]
        first = layers[0] if layers else (0 if s == 0 else None)
        out.append(
            {
                "layers": layers,
                "embed": "embed" in part,
                "head": "head" in part,
            }
        )
        del first
    return out


class StageModule(torch.nn.Module):
    def __init__(self, model, part):
        super().__init__()
        base = model.get_decoder()
        self.embed = base.embed_tokens if part["embed"] else None
        all_layers = decoder_layers(model)
        self.layers = torch.nn.ModuleList([all_layers[i] for i in part["layers"]])
        self.rotary_emb = getattr(base, "rotary_emb", None)
        self.norm = base.norm if part["head"] else None
        self.lm_head = model.lm_head if part["head"] else None

    def forward(self, x):
        h = self.embed(x) if self.embed is not None else x
        if self.layers:
            positions = torch.arange(h.shape[1], device=h.device).unsqueeze(0)
            pe = self.rotary_emb(h, positions) if self.rotary_emb is not None else None
            for layer in self.layers:
                out = layer(h, attention_mask=None, position_ids=positions, position_embeddings=pe)
                h = out[0] if isinstance(out, tuple) else out
        if self.lm_head is not None:
            h = self.lm_head(self.norm(h))
        return h


def build_stages(model, sc, group, hidden_size, dtype):
    """This rank's PipelineStage objects (vpp of them, looped placement: rank r holds stages
    r, r + pp, ...), with static shapes so no metadata has to travel through the fake group."""
    from torch.distributed.pipelining import PipelineStage

    num_stages = sc.pp * sc.vpp
    parts = split_units(sc.num_layers, num_stages)
    mb, s = sc.micro_batch, sc.seq_len
    stages, modules = [], []
    for v in range(sc.vpp):
        index = sc.rank + v * sc.pp
        part = parts[index]
        module = StageModule(model, part)
        hidden = torch.empty(mb, s, hidden_size, dtype=dtype)
        inp = torch.empty(mb, s, dtype=torch.long) if part["embed"] else hidden
        out = torch.empty(mb, s, model.config.vocab_size, dtype=dtype) if part["head"] else hidden
        stages.append(
            PipelineStage(
                module,
                index,
                num_stages,
                torch.device("cpu"),
                input_args=inp,
                output_args=out,
                output_grads=None if part["head"] else hidden,
                input_grads=None if part["embed"] else hidden,
                group=group,
            )
        )
        modules.append(module)
    return stages, modules, parts


def make_schedule(sc, stages, loss_fn):
    from torch.distributed.pipelining import Schedule1F1B, ScheduleGPipe, ScheduleInterleaved1F1B

    if sc.schedule == "interleaved":
        return ScheduleInterleaved1F1B(stages, n_microbatches=sc.microbatches, loss_fn=loss_fn)
    cls = {"1f1b": Schedule1F1B, "gpipe": ScheduleGPipe}[sc.schedule]
    return cls(stages[0], n_microbatches=sc.microbatches, loss_fn=loss_fn)


def track_phases(stages, tracker):
    """Forward and backward chunks set the tracker's phase (they interleave under 1F1B)."""
    for stage in stages:
        for name, phase in (("forward_one_chunk", "forward"), ("backward_one_chunk", "backward")):
            original = getattr(stage, name)

            def wrapped(*args, _original=original, _phase=phase, **kwargs):
                tracker.set_phase(_phase)
                return _original(*args, **kwargs)

            setattr(stage, name, wrapped)
