"""One training scenario the harness runs, and the same scenario in vramplan's vocabulary."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

PRECISIONS = {
    # name: (parameter dtype, autocast bf16, FSDP2 MixedPrecisionPolicy bf16/fp32)
    "fp32": ("fp32", False, False),
    "bf16": ("bf16", False, False),
    "amp-bf16": ("fp32", True, False),
    "fsdp-mixed": ("fp32", False, True),
}
OPTIMIZERS = ("adamw-foreach", "adamw-fused", "sgd", "sgd-momentum", "adafactor")
LAYOUTS = ("single", "ddp", "fsdp", "hsdp", "tp", "fsdp+tp", "pp", "cp")


@dataclass
class Scenario:
    preset: str
    num_layers: int
    seq_len: int = 4096
    micro_batch: int = 1
    microbatches: int = 1  # gradient-accumulation steps (or pipeline microbatches)
    layout: str = "single"
    world: int = 1
    rank: int = 0
    dp: int = 1
    tp: int = 1
    pp: int = 1
    cp: int = 1
    vpp: int = 1
    schedule: str = ""
    reshard_after_forward: bool = True
    sequence_parallel: bool = True
    recompute: str = "none"  # none | full | selective-op
    recompute_every: int = 1
    precision: str = "bf16"
    optimizer: str = "adamw-foreach"
    method: str = "full"  # full | lora | qlora | frozen
    lora_rank: int = 16
    lora_targets: str = "q,v"
    freeze_embeddings: bool = False
    freeze_first_layers: int = 0
    # transformers | torchtune (its builders, loss and loop) | torchtitan (its model, FSDP, loss)
    model_code: str = "transformers"
    note: str = ""
    tags: list = field(default_factory=list)

    def id(self):
        parts = [
            self.preset,
            *([self.model_code] if self.model_code != "transformers" else []),
            f"L{self.num_layers}",
            f"s{self.seq_len}",
            f"b{self.micro_batch}x{self.microbatches}",
            self.layout,
            f"w{self.world}r{self.rank}",
        ]
        if self.tp > 1:
            parts.append(f"tp{self.tp}" + ("sp" if self.sequence_parallel else ""))
        if self.pp > 1:
            parts.append(f"pp{self.pp}v{self.vpp}{self.schedule}")
        if self.cp > 1:
            parts.append(f"cp{self.cp}")
        if self.layout in ("fsdp", "hsdp", "fsdp+tp") and not self.reshard_after_forward:
            parts.append("noreshard")
        rc = self.recompute if self.recompute_every == 1 else f"{self.recompute}{self.recompute_every}"
        parts += [rc, self.precision, self.optimizer, self.method]
        if self.method in ("lora", "qlora"):
            parts.append(f"r{self.lora_rank}-{self.lora_targets.replace(',', '')}")
        if self.method == "frozen":
            parts.append(f"fe{int(self.freeze_embeddings)}-fl{self.freeze_first_layers}")
        return "/".join(parts)

    def as_dict(self):
        return asdict(self)
