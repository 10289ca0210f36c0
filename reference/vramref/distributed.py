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


@contextmanager
def meshes_outside_fake_mode():
    """FSDP2 over DTensor TP builds a combined DeviceMesh inside `fully_shard`; a mesh reads its
    real rank table (`nonzero`), which fake tensors cannot answer. Mesh construction holds no
    training tensor, so it runs with the fake and tracking modes off."""
    from torch.distributed.device_mesh import DeviceMesh
    from torch.utils._python_dispatch import _disable_current_modes

    original = DeviceMesh.__init__

    def init(self, *args, **kwargs):
        with _disable_current_modes():
            original(self, *args, **kwargs)

    DeviceMesh.__init__ = init
    try:
        yield
    finally:
        DeviceMesh.__init__ = original


def mesh(shape, names):
    from torch.distributed.device_mesh import init_device_mesh

    return init_device_mesh("cpu", tuple(shape), mesh_dim_names=tuple(names))
