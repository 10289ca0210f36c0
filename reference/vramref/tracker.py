"""Live-tensor accounting at the dispatcher: the bytes `torch.cuda.max_memory_allocated` counts.

Every tensor an ATen op returns is recorded by its *untyped storage*, so views and in-place
results are counted once, and a storage is dropped when Python frees it (weakref callback).
Storages that change size in place are re-measured when they change: FSDP2 frees and
re-allocates its unsharded parameters with `UntypedStorage.resize_`, which is no ATen op and so
never reaches the dispatcher; while the tracker is active that method reports each resize to it
(without this, every unsharded parameter would stay counted from its first all-gather until the
next explicit `check_now`). Other in-place size changes are re-measured after every op that
touched them. Tensor subclasses (DTensor,
torchao's NF4Tensor) are flattened to the plain tensors that hold their bytes.

At each new peak the live storages are split into categories. The invariant: a storage is
counted in exactly one category, decided in this order:
  parameters  - a storage of a model parameter, sharded or unsharded (`mark_parameters`,
                and storages created while the caller says parameters are being gathered)
  gradients   - the storage of a parameter's `.grad`, or created while gradients are reduced
  optimizer_states - a storage held in `optimizer.state`
  activations - created during a forward and still alive (saved for backward, or kept by the
                pipeline / the loss)
  temporaries - everything else (backward and optimizer-step intermediates, forward scratch
                while the forward runs)
"""

from __future__ import annotations

import weakref
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import NamedTuple

import torch
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_flatten

CATEGORIES = ("parameters", "gradients", "optimizer_states", "activations", "temporaries")


def plain_tensors(t):
    """The plain tensors that own the bytes of `t` (recursing through wrapper subclasses)."""
    if not isinstance(t, torch.Tensor):
        return []
    if type(t) is not torch.Tensor and hasattr(t, "__tensor_flatten__"):
        inner_names, _ = t.__tensor_flatten__()
        out = []
        for name in inner_names:
            out.extend(plain_tensors(getattr(t, name)))
        return out
    return [t]


def storage_of(t):
    try:
        return t.untyped_storage()
    except (RuntimeError, NotImplementedError):
        return None


class _Record(NamedTuple):
    """Immutable, so a peak snapshot is a plain dict copy; changes replace the record."""

    serial: int  # unique per storage over the run (ids of freed storages are reused)
    nbytes: int
    origin: str  # phase name at creation: forward / backward / optimizer / setup
    tag: str | None  # forced category (parameters, gradients) or None


@dataclass
class PeakReport:
    peak_bytes: int = 0
    peak_phase: str = ""
    peak_step: int = 0
    phase_peaks: dict = field(default_factory=dict)
    at_peak: dict = field(default_factory=dict)


class MemoryTracker(TorchDispatchMode):
    """Counts live storages; the caller sets `phase` and `step` as training proceeds."""

    def __init__(self, device_type="cuda"):
        super().__init__()
        self.device_type = device_type
        self._records: dict[int, _Record] = {}
        self._refs: dict[int, weakref.ref] = {}
        self.live = 0
        self.phase = "setup"
        self.step = 0
        self.forced_tag: str | None = None
        self.report = PeakReport()
        self._grad_owners: list = []
        self._optimizers: list = []
        self._saved: set[int] = set()
        self._pending = None
        self._serial = 0
        self.scalar_answer = None
        self._storage_resize = None  # the original UntypedStorage.resize_ while active

    def __enter__(self):
        self._watch_storage_resizes()
        return super().__enter__()

    def __exit__(self, *exc):
        try:
            return super().__exit__(*exc)
        finally:
            self._unwatch_storage_resizes()

    def _watch_storage_resizes(self):
        if self._storage_resize is not None:
            return
        original = self._storage_resize = torch.UntypedStorage.resize_
        tracker = self

        def resize_(storage, size):
            out = original(storage, size)
            tracker._storage_resized(storage)
            return out

        torch.UntypedStorage.resize_ = resize_

    def _unwatch_storage_resizes(self):
        if self._storage_resize is not None:
            torch.UntypedStorage.resize_ = self._storage_resize
            self._storage_resize = None

    def _storage_resized(self, st):
        k = self._key(st)
        rec = self._records.get(k)
        if rec is not None:
            self._resize(k, rec, st.nbytes())
            self._check_peak()

    # --- registration -------------------------------------------------------------------
    def _key(self, st):
        return id(st)

    def track(self, t, tag=None):
        for p in plain_tensors(t):
            if p.device.type != self.device_type:
                continue  # host tensors (RNG state, CPU scalars) are not device memory
            st = storage_of(p)
            if st is None:
                continue
            k = self._key(st)
            rec = self._records.get(k)
            if rec is None:
                n = st.nbytes()
                self._serial += 1
                self._records[k] = _Record(self._serial, n, self.phase, tag or self.forced_tag)
                self._refs[k] = weakref.ref(st, self._make_release(k))
                self.live += n
            else:
                if tag and rec.tag is None:
                    rec = self._records[k] = rec._replace(tag=tag)
                self._resize(k, rec, st.nbytes())

    def _make_release(self, k):
        def release(_ref):
            rec = self._records.pop(k, None)
            self._refs.pop(k, None)
            self._saved.discard(k)
            if rec is not None:
                self.live -= rec.nbytes

        return release

    def mark_parameters(self, module):
        for p in module.parameters():
            self.track(p, tag="parameters")
        for b in module.buffers():
            self.track(b, tag="parameters")
        self._grad_owners.extend(module.parameters())

    def watch_optimizer(self, optimizer):
        self._optimizers.append(optimizer)

    def mark_saved(self, t):
        for p in plain_tensors(t):
            st = storage_of(p)
            if st is not None:
                self._saved.add(self._key(st))

    @contextmanager
    def tagging(self, tag):
        """Storages created inside are forced into `tag` (e.g. FSDP's all-gathered params)."""
        prev, self.forced_tag = self.forced_tag, tag
        try:
            yield
        finally:
            self.forced_tag = prev

    @contextmanager
    def answering_scalars(self, value=1.0):
        """Inside, `.item()` of a fake tensor returns `value`. Fake tensors hold no values;
        torch.optim.Adafactor reads its step count and RMS norms with `.item()` to compute
        Python step sizes, which change the update's values but not what is allocated."""
        prev, self.scalar_answer = self.scalar_answer, value
        try:
            yield
        finally:
            self.scalar_answer = prev

    def reset_peak(self):
        """Forget peaks so far (model construction and initialisation are not training)."""
        self.report = PeakReport()
        self._pending = None

    def set_phase(self, phase, step=None):
        if phase != self.phase:
            self.resolve_peak()
        self.phase = phase
        if step is not None:
            self.step = step

    # --- dispatch -----------------------------------------------------------------------
    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        if func is torch.ops.aten._local_scalar_dense.default and self.scalar_answer is not None:
            return self.scalar_answer  # a Python number: allocates nothing on the device
        out = func(*args, **(kwargs or {}))
        flat_out, _ = tree_flatten(out)
        for t in flat_out:
            if isinstance(t, torch.Tensor):
                self.track(t)
        # in-place resizes (FSDP2 storage resize_, optimizer lazy state) change sizes
        flat_in, _ = tree_flatten((args, kwargs))
        for t in flat_in:
            if isinstance(t, torch.Tensor):
                self._refresh(t)
        self._check_peak()
        return out

    def _refresh(self, t):
        for p in plain_tensors(t):
            st = storage_of(p)
            if st is None:
                continue
            k = self._key(st)
            rec = self._records.get(k)
            if rec is not None:
                self._resize(k, rec, st.nbytes())

    def _resize(self, k, rec, n):
        if n != rec.nbytes:
            self.live += n - rec.nbytes
            self._records[k] = rec._replace(nbytes=n)

    def _check_peak(self):
        key = f"{self.phase}"
        phase_peaks = self.report.phase_peaks
        if self.live > phase_peaks.get(key, 0):
            phase_peaks[key] = self.live
        if self.live > self.report.peak_bytes:
            self.report.peak_bytes = self.live
            self.report.peak_phase = self.phase
            self.report.peak_step = self.step
            # The split is decided later (`resolve_peak`): a gradient is computed before
            # autograd stores it in `.grad`, so a backward peak is split once `.grad` is set.
            # The snapshot is two shallow copies, cheap enough for every new peak.
            self._pending = (dict(self._records), set(self._saved), self.phase)

    def resolve_peak(self):
        """Splits the pending peak snapshot into categories with the gradients and optimizer
        states as they are now. Called at every phase change and before `zero_grad`."""
        if self._pending is not None:
            records, saved, phase = self._pending
            self.report.at_peak = self._categorize(records, saved, phase)
            self._pending = None

    def check_now(self):
        """Refresh every record (for memory changed outside ops) and test for a new peak."""
        for k, ref in list(self._refs.items()):
            st = ref()
            if st is not None:
                self._resize(k, self._records[k], st.nbytes())
        self._check_peak()

    # --- categories ---------------------------------------------------------------------
    def _storage_keys(self, tensors):
        keys = set()
        for t in tensors:
            for p in plain_tensors(t):
                st = storage_of(p)
                if st is not None:
                    keys.add(self._key(st))
        return keys

    def categorize(self):
        return self._categorize(self._records, self._saved, self.phase)

    def _serials(self, tensors):
        """Serials of the storages of `tensors` as tracked now."""
        out = set()
        for k in self._storage_keys(tensors):
            rec = self._records.get(k)
            if rec is not None:
                out.add(rec.serial)
        return out

    def _categorize(self, records, saved, phase):
        grads = self._serials(p.grad for p in self._grad_owners if p.grad is not None)
        states = self._serials(
            v for opt in self._optimizers for s in opt.state.values() for v in s.values() if isinstance(v, torch.Tensor)
        )
        out = dict.fromkeys(CATEGORIES, 0)
        for k, rec in records.items():
            if rec.tag == "parameters":
                cat = "parameters"
            elif rec.serial in grads or rec.tag == "gradients":
                cat = "gradients"
            elif rec.serial in states:
                cat = "optimizer_states"
            elif rec.origin == "forward" and (k in saved or phase != "forward"):
                cat = "activations"
            else:
                cat = "temporaries"
            out[cat] += rec.nbytes
        return out


@contextmanager
def saved_tensor_marking(tracker: MemoryTracker):
    """Marks every tensor autograd saves for backward, so forward scratch is told apart."""

    def pack(t):
        tracker.mark_saved(t)
        return t

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        yield
