import torch
from torch._subclasses.fake_tensor import FakeTensorMode

from vramref.tracker import MemoryTracker, saved_tensor_marking

MIB = 2**20


def test_counts_each_storage_once_and_releases_it():
    tracker = MemoryTracker("cpu")
    with FakeTensorMode(), tracker:
        a = torch.empty(MIB, dtype=torch.uint8)
        view = a[: MIB // 2]  # a view: same storage, no new bytes
        assert tracker.live == MIB
        b = torch.empty(2 * MIB, dtype=torch.uint8)
        assert tracker.live == 3 * MIB
        del b
        assert tracker.live == MIB
        del view, a
        assert tracker.live == 0
    assert tracker.report.peak_bytes == 3 * MIB


def test_in_place_ops_add_nothing_and_peak_records_phase_and_step():
    tracker = MemoryTracker("cpu")
    with FakeTensorMode(), tracker:
        tracker.set_phase("forward", step=1)
        x = torch.zeros(1024, dtype=torch.float32)
        x.add_(1.0)
        assert tracker.live == 4096
        tracker.set_phase("backward", step=2)
        y = x * 2  # noqa: F841 - kept alive for the peak
        tracker.set_phase("optimizer", step=2)
    assert tracker.report.peak_bytes == 8192
    assert (tracker.report.peak_phase, tracker.report.peak_step) == ("backward", 2)


def test_categories_of_a_linear_training_step():
    tracker = MemoryTracker("cpu")
    with FakeTensorMode(), tracker:
        layer = torch.nn.Linear(256, 512, bias=False)  # 128 Ki params, 512 KiB in fp32
        opt = torch.optim.SGD(layer.parameters(), lr=0.1, momentum=0.9)
        tracker.mark_parameters(layer)
        tracker.watch_optimizer(opt)
        tracker.reset_peak()
        x = torch.empty(64, 256)
        for step in (1, 2):
            tracker.set_phase("forward", step)
            with saved_tensor_marking(tracker):
                loss = layer(x).square().sum()
            tracker.set_phase("backward", step)
            loss.backward()
            del loss
            tracker.set_phase("optimizer", step)
            opt.step()
            tracker.check_now()
            # gradients kept (not zeroed): the peak of step 2's optimizer holds all three
        tracker.set_phase("done")
    at = tracker.report.at_peak
    weight = 256 * 512 * 4
    assert at["parameters"] == weight
    assert at["gradients"] == weight
    assert at["optimizer_states"] == weight  # the momentum buffer
    assert tracker.report.peak_bytes == sum(at.values())


def test_backward_peak_counts_a_fresh_gradient_as_gradient():
    tracker = MemoryTracker("cpu")
    with FakeTensorMode(), tracker:
        layer = torch.nn.Linear(1024, 1024, bias=False)
        tracker.mark_parameters(layer)
        tracker.reset_peak()
        tracker.set_phase("forward", 1)
        x = torch.empty(8, 1024)
        with saved_tensor_marking(tracker):
            loss = layer(x).sum()
        tracker.set_phase("backward", 1)
        loss.backward()
        del loss
        tracker.set_phase("optimizer", 1)
    assert tracker.report.peak_phase == "backward"
    assert tracker.report.at_peak["gradients"] == 1024 * 1024 * 4


def test_item_is_answered_only_inside_answering_scalars():
    import pytest
    from torch._subclasses.fake_tensor import DataDependentOutputException

    tracker = MemoryTracker("cpu")
    with FakeTensorMode(), tracker:
        x = torch.ones(4)
        with pytest.raises(DataDependentOutputException):
            x.sum().item()
        with tracker.answering_scalars(2.0):
            assert x.sum().item() == 2.0


def test_storage_resizes_outside_the_dispatcher_are_counted_when_they_happen():
    # FSDP2 frees and re-allocates its unsharded parameters with UntypedStorage.resize_, which
    # is no ATen op: the tracker must see the free at once, not at the next op on that tensor.
    tracker = MemoryTracker("cpu")
    with FakeTensorMode(), tracker:
        gathered = torch.empty(4 * MIB, dtype=torch.uint8)
        assert tracker.live == 4 * MIB
        gathered.untyped_storage().resize_(0)  # FSDP2 free_storage
        assert tracker.live == 0
        tracker.set_phase("optimizer", 1)
        torch.empty(MIB, dtype=torch.uint8)  # an op in a later phase sees the freed bytes gone
        assert tracker.report.phase_peaks["optimizer"] == MIB
        gathered.untyped_storage().resize_(4 * MIB)  # FSDP2 alloc_storage: a new peak at once
        assert tracker.live == 4 * MIB
        assert tracker.report.peak_bytes == 4 * MIB
    # outside the tracker the method is the original again
    assert torch.UntypedStorage.resize_ is not None
    assert getattr(torch.UntypedStorage.resize_, "__qualname__", "").find("MemoryTracker") < 0
