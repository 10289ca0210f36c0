"""A world of N ranks simulated in one process: PyTorch's fake process group.

`torch.testing._internal.distributed.fake_pg` registers the "fake" backend: every collective
returns at once without touching data, so one process can play rank r of a world of any size
while the real FSDP2 / DTensor / pipelining code decides what to allocate.
"""

from __future__ import annotations

from contextlib import contextmanager

import torch.distributed as dist


@contextmanager
def fake_world(world_size, rank=0):
    from torch.testing._internal.distributed.fake_pg import FakeStore

    if dist.is_initialized():
        dist.destroy_process_group()
    dist.init_process_group("fake", store=FakeStore(), rank=rank, world_size=world_size)
    try:
        yield
    finally:
        dist.destroy_process_group()


def mesh(shape, names):
    from torch.distributed.device_mesh import init_device_mesh

    return init_device_mesh("cpu", tuple(shape), mesh_dim_names=tuple(names))
