"""Call plans: everything a warm call needs, decided once per (kernel, device, signature).

A :class:`CallPlan` is built complete by its constructor from the translation, the compiled
program and the call's signature tokens, and is not changed afterwards (setting one of its
facts raises): it owns the steps of a warm call in order, tokens (its key) -> host checks ->
staging of numpy arrays -> packing (generated from the translation's argument layout,
:func:`layout_codes`) -> the backend launcher -> the memo (``_memo``, also generated once per plan).
Running it does no translation, hashing or ctypes allocation of its own
(docs/architecture.md#the-launch-path).
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Literal

import numpy as np
from pygpgpu_core.backend.fastpath import compile_source
from pygpgpu_core.protocols import option

from ._domain import build_function as compile_domain
from ._cpu_choices import cpu_group_shape, group_limits
from ._aliases import numpy_aliases
from ._launch_checks import (LOCAL_SIZE_POSITIONS, NARROW_MAX_WORK, WideIndexNeeded, automatic_local_size, check_group_limit,
                             check_int_ranges, extent_checker, group_limit, guard_checker, int_range_checks,
                             launched_items, missing_dimension, partial_launch, reached, with_local_size)
from ._signature import base_view, is_device_array

if TYPE_CHECKING:
    from pygpgpu_core.gnp._staging import SmallBatchCache
    from pygpgpu_core.protocols import Buffer

__all__ = ["CallPlan", "LaunchPlan"]

# what may be set on a plan after its constructor: caches filled on first use, and the two
# entry points a test or benchmark replaces (monkeypatch.setattr(plan, "run", ...))
_SETTABLE = frozenset({"guard_check", "small_cache", "run", "launcher"})


class CallPlan:
    """One (kernel, device, signature, index width): see the module docstring. ``tokens``: the
    signature tokens aligned with the call values (a method's ``self`` is None); ``bits``: the
    index width; ``n_call_params``: how many values are the kernel's own parameters (self
    attributes and captured arrays follow them); ``log_launches``: wrap the launcher in the
    debug log (decided on the cold path, for the plan's life)."""

    def __init__(self, translation, program, kernel_handle, device, *, names, func, tokens, bits,
                 n_call_params, build_options=(), log_launches=False):
        self.t = translation
        self.program = program
        self.build_options = build_options
        self.device = device
        self.context = device.context()
        self.zero_copy = bool(getattr(device, "host_unified_memory", False))
        self.param_names = names                          # Python names in call order (incl. "self.x")
        self.position = {n: i for i, n in enumerate(names)}
        self._n_call_params = n_call_params
        self.tokens = tuple(tokens)
        self.domain_fn = compile_domain(translation.domain_plan, func)   # from the kernel's own source
        # a launch needs every dimension the kernel's own gpu.get_*(d) calls read; a bracket launch
        # smaller than what a gid-style kernel guards against (if i < a.size) warns (_guards)
        self.work_dims = translation.work_dims
        self.func = func
        self.guard_check = None
        self.narrow = bits == 32                          # 32-bit ids: a larger domain needs the 64-bit plan
        layout = translation.layout
        # the argument layout, read once: the backend's argument kinds and the plan's packing codes
        # gpu.local_array(gpu.get_local_size(d), ...): the size is among the values' last 7 (with_local_size)
        self.local_sized = any(item[0] == "local" and item[1] in LOCAL_SIZE_POSITIONS for item in layout)
        arg_types, self.pack = layout_codes(layout, {**LOCAL_SIZE_POSITIONS, **self.position})
        launcher = kernel_handle.launcher(arg_types)
        if log_launches:
            from pygpgpu_core.logs import logged_launcher
            launcher = logged_launcher(launcher, translation.name, device.selector)
        self.launcher = launcher
        from pygpgpu_core.gnp import DeviceArray, stage_numpy     # device arrays load with the first plan
        from ._signature import register_device_array_type
        register_device_array_type(DeviceArray)
        self.device_array_type = DeviceArray
        self.stage_numpy = stage_numpy
        from pygpgpu_core.gnp import _staging
        from pygpgpu_core.gnp._staging import SyncOnce
        # launches whose numpy arguments are all small share one block per call (None: not yet
        # probed whether this backend's buffers have views; False: they do not)
        self.staging = _staging
        self.small_cache: SmallBatchCache | Literal[False] | None = None
        # host-visible pool memory is filled and read with memcpy after a context synchronize:
        # one wait before the launch and one after cover all of its arguments
        self.sync_once = SyncOnce
        self.kernel_handle = kernel_handle
        self.arrays = []                                  # (position, name, reads, writes, covered)
        self.streamed = frozenset(translation.streamed)   # arrays each work item touches once
        self.lanes = translation.lanes                    # elements per work item (_wide)
        covers = {name: row for name, row in translation.covers}
        for item in layout:
            if item[0] == "buffer":
                word = translation.access.get(item[1], "readwrite")
                reads = word in ("read", "readwrite")
                writes = word in ("write", "readwrite")
                self.arrays.append((self.position[item[1]], item[1], reads, writes, covers.get(item[1])))
        # positions of the arrays the kernel writes: a read-only gnp array there is refused (read_only)
        self.written = frozenset(pos for pos, _n, _r, writes, _c in self.arrays if writes)
        self.global_from_domain = translation.domain_ndim > 0
        # a magic loop's dimensions: a bracket work size with more runs the body once per extra work item
        self.loop_ndim = translation.domain_ndim if translation.domain_kind not in ("", "work_size") else 0
        # numpy row arrays the kernel reads as aligned vectors are staged on that boundary (row loads,
        # _row_loads, rely on it on every dialect, beside CUDA/HIP's assume_aligned)
        self.align = {pos: tok[4] for pos, tok in enumerate(self.tokens)
                      if isinstance(tok, tuple) and tok[0] == "a" and len(tok) > 4 and tok[4]}
        self.vector_arrays = [pos for pos, tok in enumerate(self.tokens) if isinstance(tok, tuple) and tok[0] == "av"]
        # arrays in non-native byte order go through _run_swapped
        self.swapped = tuple(pos for pos, tok in enumerate(self.tokens)
                             if isinstance(tok, tuple) and tok[0] in ("a", "av") and not tok[1].isnative)
        # host checks before a launch (_launch_checks): array extents the domain indexes, Python ints
        # that must fit the types they meet, 32-bit ids (narrow), and the group size the kernel's
        # local arrays imply when the call gives none
        self.extent_check = (extent_checker(translation.extents, self.position, translation.name,
                                            getattr(getattr(func, "__code__", None), "co_filename", ""),
                                            translation.domain_ndim)
                             if translation.extents else None)
        self.int_checks = int_range_checks(translation.int_meets or (), self.position, self.tokens)
        self.group_limit = group_limit(translation)
        self.auto_local = automatic_local_size(translation, option(kernel_handle, "work_group_size")
                                               or option(kernel_handle, "max_threads"))
        # the group shape of a launch whose work size comes from the domain and gives no local
        # size, where the backend wants one chosen (OpenCL GPUs: Device.guarded_local_size); the
        # kernel's domain guard skips the work items that rounding up to whole groups adds
        pick = option(self.device, "guarded_local_size")
        self.guarded_local = (pick(translation.domain_ndim, option(kernel_handle, "work_group_size") or 1)
                              if pick is not None and self.auto_local is None and translation.domain_ndim else None)
        # CPUs: a row-shaped group sized per launch (_cpu_choices), where the backend chose none and
        # the kernel's groups do not show (no barrier, local array or group-sized array)
        self.cpu_groups = (group_limits(self.device, option(kernel_handle, "work_group_size"))
                           if self.guarded_local is None and self.auto_local is None and translation.domain_ndim
                           and not (self.local_sized or translation.uses_barrier or translation.local_shapes)
                           else None)
        self._extra_state()
        # _packed(values, None, domain) unrolled for this layout: the warm path with resident arrays
        self._resident_packer = _unrolled_packer(self)
        # no byte-swapped arrays: calls go straight to _run (unless a subclass has its own run)
        if not self.swapped and type(self).run is CallPlan.run:
            self.run = self._run          # type: ignore[method-assign]  # an instance attribute, per plan
        # the memo's generated hit/keep pair, or False where the plan cannot be memoized (_memo)
        from ._memo import build_memo
        self._memo_hit = build_memo(self, func)
        self._sealed = True

    def _extra_state(self) -> None:
        """What a subclass adds before the plan is sealed (CheckedLaunchPlan: its error buffer)."""

    def __setattr__(self, name, value):
        if name not in _SETTABLE and self.__dict__.get("_sealed"):
            raise AttributeError(f"a CallPlan is built complete by its constructor; {name!r} cannot be set "
                                 "afterwards (build another plan)")
        object.__setattr__(self, name, value)

    def run(self, values, global_size, local_size):
        if self.swapped:
            return self._run_swapped(values, global_size, local_size)
        return self._run(values, global_size, local_size)

    def _run(self, values, global_size, local_size):
        if self.int_checks:
            check_int_ranges(self.int_checks, values, self.t.name)
        if self.vector_arrays:
            values = list(values)
            for pos in self.vector_arrays:
                if type(values[pos]) is np.ndarray and values[pos].dtype.fields is not None:
                    values[pos] = base_view(values[pos])
        domain_fn = self.domain_fn
        if domain_fn is None:
            domain = None
        elif len(values) == self._n_call_params:
            domain = domain_fn(*values)
        else:                  # a method kernel: self attributes follow the parameters
            domain = domain_fn(*values[: self._n_call_params])
        if global_size is None:
            if domain is None:
                raise ValueError(
                    f"kernel {self.t.name!r} has no iteration domain, so its work size cannot be derived. Give one: "
                    f"a magic loop (for i in range(x.shape[0]): ...), gpu.work_size(x) in the kernel, or a bracket "
                    f"work size: {self.t.name}[(total, local)](...) or {self.t.name}[total](...)")
            global_size = domain if len(domain) == 1 else tuple(reversed(domain))
            if self.narrow:
                for g in global_size:
                    if g > NARROW_MAX_WORK:
                        raise WideIndexNeeded()
            if self.lanes > 1:         # a wide kernel (_wide): each work item handles `lanes` elements
                global_size = (-(-global_size[0] // self.lanes),)
            derived = True
        else:
            derived = False
            if self.loop_ndim and len(global_size) > self.loop_ndim:
                self._too_many_dimensions(global_size)
        if len(global_size) < self.work_dims:
            raise missing_dimension(self.t.name, self.work_dims, global_size, local_size, derived)
        if self.t.guards and not derived:
            self._check_guards(values, global_size, local_size)
        if 0 in global_size:
            return
        if local_size is None:
            if self.auto_local is not None:
                local_size = self._automatic_local(global_size, domain)
            elif derived and self.guarded_local is not None and len(self.guarded_local) == len(global_size):
                local_size = self.guarded_local
            elif derived and self.cpu_groups is not None:
                local_size = cpu_group_shape(global_size, *self.cpu_groups)
        elif len(local_size) != len(global_size):
            if len(local_size) > len(global_size):
                raise ValueError(f"kernel {self.t.name!r}: local size {local_size} has more dimensions than the "
                                 f"work size {global_size}")
            local_size = tuple(local_size) + (1,) * (len(global_size) - len(local_size))
        if self.group_limit is not None and local_size is not None:
            check_group_limit(self.group_limit, local_size, self.t.name)
        if self.local_sized:            # gpu.local_array(gpu.get_local_size(d), ...)
            values = with_local_size(values, local_size, self.t.name)
        # ``whole``: the domain when this launch reaches all of it (only then may an array the kernel
        # writes at every domain index skip its upload); a smaller bracket work size reaches part
        whole = reach = domain
        if domain is not None and not derived:
            reach = reached(domain, global_size, local_size)
            if reach != domain:
                whole = None
                self._warn_partial(domain, reach, global_size, local_size)
        if self.extent_check is not None and reach is not None:
            self.extent_check(values, reach)
        if self.lanes > 1 and not derived and reach is not None:
            # a bracket work size on a wide kernel (which has a domain): the elements it reaches,
            # `lanes` per work item
            domain = reach
            global_size = (-(-reach[0] // self.lanes),) + tuple(global_size[1:])
            if not global_size[0]:
                return
        packed = self._resident_packer(values, domain)
        if packed is not None:      # every array is resident on this device: nothing to stage or release
            self.launcher(global_size, local_size, packed)
            return global_size, local_size, packed      # what a configured kernel's memo keeps (_memo)
        # a numpy array given to several parameters is staged once (_aliases)
        rows, same = numpy_aliases(self.arrays, values, self.t.name)
        if self.small_cache is not False and self._run_small(values, global_size, local_size, domain, whole,
                                                             rows, same):
            return
        buffers = {}
        staged = []
        sync = self.sync_once(self.context)
        try:
            for pos, name, reads, writes, covered in rows:
                a = values[pos]
                if type(a) is np.ndarray:
                    a = self._checked_numpy(a, name, writes)
                    st = self.stage_numpy(a, self.context, read=reads, write=writes,
                                          overwrite=self._covers(a, covered, whole),
                                          align=self.align.get(pos), sync=sync)
                    staged.append(st)
                    buf = st.buffer
                else:
                    buf = self._device_buffer(a, name, writes)
                buffers[pos] = buf
            if same:               # a numpy array passed to several parameters: one device copy
                for pos, rep in same.items():
                    buffers[pos] = buffers[rep]
            self.launcher(global_size, local_size, self._packed(values, buffers, domain))
            done, staged = staged, []
            sync = self.sync_once(self.context)
            for st in done:
                st.finish(sync)
        finally:
            for st in staged:      # an error before the launch: release without reading back
                st._download = False
                st.finish()

    def _run_small(self, values, global_size, local_size, domain, whole, rows, same) -> bool:
        """Launch with every numpy argument in one SmallBatch (one upload, one download, one
        wait); False, having done nothing, when some numpy argument is too large for that.
        ``rows, same``: the call's array rows and shared numpy arguments (_aliases.numpy_aliases)."""
        staging = self.staging
        cache = self.small_cache
        if cache is None:
            cache = self.small_cache = (staging.SmallBatchCache(self.context)
                                        if staging.batch_supported(self.context) else False)
        if cache is False:              # this backend's buffers have no views
            return False
        limit = staging.SMALL_ARRAY_MAX
        key, ups, downs, slots = [], [], [], []
        buffers = {}
        total = 0
        streamed = True
        for pos, name, reads, writes, covered in rows:
            a = values[pos]
            if type(a) is np.ndarray:
                if a.nbytes > limit:
                    return False
                streamed = streamed and name in self.streamed
                a = self._checked_numpy(a, name, writes, contiguous=False)
                total += a.nbytes
                group = staging.access_group(reads, writes, self._covers(a, covered, whole))
                key.append((a.nbytes, group))
                ups.append(a if group <= staging.BOTH else None)
                downs.append(a if staging.BOTH <= group <= staging.DOWNLOAD else None)
                slots.append(pos)
            else:
                buffers[pos] = self._device_buffer(a, name, writes)
        if not key or total > staging.SMALL_BATCH_MAX:
            return False
        batch = cache.take(tuple(key), max(self.align.values(), default=1),
                           staging.STREAMED_MAPPED_MAX if streamed else None)
        try:
            batch.upload(ups)
            views = batch.views
            for i, pos in enumerate(slots):
                buffers[pos] = views[i]
            for pos, rep in (same or {}).items():
                buffers[pos] = buffers[rep]
            self.launcher(global_size, local_size, self._packed(values, buffers, domain))
            batch.download(downs)
        finally:
            cache.give(batch)
        return True

    def _checked_numpy(self, a, name, writes, contiguous=True):
        """``a`` as the kernel may receive it (a 1-element stand-in for an empty array), or a
        ValueError saying how to fix a written array the launch cannot copy back into."""
        if writes:
            if not a.flags.c_contiguous:
                raise ValueError(f"argument {name!r} of kernel {self.t.name!r} is written but not "
                                 "C-contiguous; pass np.ascontiguousarray(...) and use that array")
            if not a.flags.writeable:
                raise ValueError(f"argument {name!r} of kernel {self.t.name!r} is written by the kernel "
                                 "but the array is read-only; pass a writable array")
        elif contiguous and not a.flags.c_contiguous:
            a = np.ascontiguousarray(a)
        if a.nbytes == 0:
            a = np.zeros(1, a.dtype)
        return a

    def _check_guards(self, values, global_size, local_size):
        check = self.guard_check
        if check is None:
            check = self.guard_check = guard_checker(self.t.guards, self.func, self.t.name,
                                                     self._n_call_params or len(values))
        check(values, global_size, local_size)

    def _warn_partial(self, domain, reach, global_size, local_size):
        """A bracket work size that reaches part of the domain: legitimate when meant, but the
        usual cause is Numba's or Warp's launch spelling, so it is never silent."""
        from pygpgpu_core.logs import warn
        from ._domain import render_plan
        texts = render_plan(self.t.domain_plan, self.func).split(", ") if self.t.domain_plan else []
        for k, (n, r) in enumerate(zip(domain, reach)):
            if r < n:
                d = len(domain) - 1 - k           # domain dim k is work dimension nd-1-k
                what = f"the {self.t.domain_kind} domain's {texts[k] if k < len(texts) else f'dimension {k}'}"
                warn(partial_launch(self.t.name, what, n, d, launched_items(global_size, local_size, d),
                                    global_size, local_size))
                return

    def _too_many_dimensions(self, global_size):
        raise ValueError(
            f"kernel {self.t.name!r} loops over a {self.loop_ndim}-D domain, but the bracket work size "
            f"{global_size} has {len(global_size)} dimensions: the work items of the extra dimensions would each "
            f"run the loop body again. Give a work size of at most {self.loop_ndim} dimension(s), or index with "
            f"gpu.get_global_id(d) under gpu.work_size(...)")

    def _automatic_local(self, global_size, domain):
        """The group size the kernel's local arrays imply (a call without a local size)."""
        local = self.auto_local
        if isinstance(local, str):
            raise ValueError(local)
        if len(local) != len(global_size):
            raise ValueError(f"kernel {self.t.name!r}: its local arrays have {len(local)} dimension(s), which implies "
                             f"groups of shape {local}, but the work size {global_size} has {len(global_size)}; give "
                             f"an explicit local size: {self.t.name}[(total, local)](...)")
        if domain is None and any(g % n for g, n in zip(global_size, local)):
            # no domain guards the work items past the end that rounding up to whole groups adds
            raise ValueError(f"kernel {self.t.name!r}: the work size {global_size} is not a multiple of the group "
                             f"size {local} its local arrays imply; pass a multiple, or an explicit local size "
                             f"({self.t.name}[(total, local)](...)) and guard the extra work items")
        return local

    def _run_swapped(self, values, global_size, local_size):
        """A launch with arrays in non-native byte order ('>f4' on x86): the kernel sees native
        copies, and what it writes is copied back into the caller's arrays in their byte order."""
        values = list(values)
        back = []
        writes = {pos: w for pos, _n, _r, w, _c in self.arrays}
        copies: dict = {}                 # id(array) -> its native copy: one per array (k(x, x), _aliases)
        for pos in self.swapped:
            a = values[pos]
            if isinstance(a, np.ndarray) and not a.dtype.isnative:
                if writes.get(pos) and not a.flags.writeable:
                    self._checked_numpy(a, self.param_names[pos], True)     # raises: read-only output
                native = copies.get(id(a))
                if native is None:
                    native = copies[id(a)] = np.ascontiguousarray(a, a.dtype.newbyteorder("="))
                values[pos] = native
                if writes.get(pos):
                    back.append((a, native))
        self._run(values, global_size, local_size)
        for a, native in back:
            a[...] = native

    @staticmethod
    def _covers(a, covered, domain):
        """Whether the kernel provably writes every element of ``a`` (then nothing is uploaded)."""
        return covered is not None and domain is not None and (
            a.shape == tuple(domain) if not covered
            else a.shape[:-1] == tuple(domain) and a.shape[-1] == covered)   # whole rows

    def read_only(self, pos):
        """The ValueError for a read-only gnp array at ``pos``, a parameter the kernel writes."""
        raise ValueError(f"argument {self.param_names[pos]!r} of kernel {self.t.name!r} is written by the kernel "
                         "but the device array is read-only (flags.writeable is False); pass a writable array, "
                         "e.g. a.copy()")

    def _device_buffer(self, a, name, writes=False):
        if is_device_array(a):
            if writes and getattr(a, "_readonly", False):
                self.read_only(self.position[name])
            if a.device is not self.device:
                raise ValueError(f"argument {name!r} of kernel {self.t.name!r} lives on {a.device.selector}, "
                                 f"but the kernel runs on {self.device.selector}; copy it there first")
            return a.buffer
        raise TypeError(f"argument {name!r} of kernel {self.t.name!r} must be an array")

    def _packed(self, values, buffers, domain):
        """The launch arguments: array arguments from ``buffers`` (position -> buffer), or with
        ``buffers`` None from the gnp arrays themselves (None if one is not resident here)."""
        da, dev = self.device_array_type, self.device
        packed = []
        for code, pos, extra in self.pack:
            if code == PACK_BUFFER:
                if buffers is not None:
                    packed.append(buffers[pos])
                    continue
                a = values[pos]
                if type(a) is not da or a.device is not dev:
                    return None
                if a._readonly and pos in self.written:
                    self.read_only(pos)
                packed.append(a.buffer)
            elif code == PACK_SHAPE:
                packed.append(values[pos].shape[extra])
            elif code == PACK_SCALAR:
                v = values[pos]
                t = type(v)
                # Python numbers go as they are (the launcher converts them), numpy scalars of the
                # parameter's own type too; others are converted here (np.float64 to a float32 parameter)
                packed.append(v if t is float or t is int or t is bool or t is extra else extra(v))
            elif code == PACK_ERRBUF:
                packed.append(self.error_buffer)     # the debug mode's error buffer (_bounds_host)
            elif code == PACK_LOCAL:
                packed.append(_launch_local(values[pos], extra, self.t.name))
            elif code == PACK_VCOMP:
                packed.append(extra[3].type(_component(values[pos], extra[2])))
            else:                                    # PACK_BOUND: a domain bound
                packed.append(domain[pos])
        return packed

    error_buffer: Buffer | None = None      # the debug mode's (CheckedLaunchPlan)


LaunchPlan = CallPlan       # the name it had before issue 33


def _launch_local(count, itemsize: int, name: str):
    """The local memory of ``gpu.local_array(n, dtype)`` for ``n = count`` elements."""
    from pygpgpu_core.protocols import LocalMemory
    n = int(count)
    if n <= 0:
        raise ValueError(f"kernel {name!r}: gpu.local_array sized by an argument needs a positive element count, "
                         f"got {count!r}")
    return LocalMemory(n * itemsize)


def _component(v, k):
    a = np.asarray(v)
    if a.dtype.kind == "c":            # a complex scalar travels as its real and imaginary parts
        return a.real if k == 0 else a.imag
    return a[k]


# How each item of the translation's argument layout (_entry: ("buffer", name), ("shape", name, k,
# dtype), ("scalar", name, dtype), ("vcomp", name, k, dtype), ("bound", k, dtype), ("local", name,
# dtype), ("errbuf", ...)) is packed: read once, by layout_codes, into the backend's argument kinds
# and these codes, from which the plan's packers and the memo are generated.
PACK_BUFFER, PACK_SHAPE, PACK_SCALAR, PACK_VCOMP, PACK_BOUND, PACK_ERRBUF, PACK_LOCAL = range(7)


def layout_codes(layout, position):
    """``(arg_types, pack)`` of a translation's argument layout: per C argument the kind the
    backend's launcher packs (``"buffer"``, ``"local"`` or a numpy dtype, backend/args.py) and
    ``(code, position, extra)``: where its value comes from (the call value at ``position``; a
    bound's domain dimension) and what the code needs (a shape's axis, a scalar's numpy type, a
    vector component's item, a local array's item size)."""
    arg_types, pack = [], []
    for item in layout:
        kind = item[0]
        pos = position.get(item[1]) if kind != "bound" else item[1]
        if kind in ("buffer", "errbuf"):
            arg_types.append("buffer")
        elif kind == "local":
            arg_types.append("local")
        else:
            arg_types.append(item[-1])
        if kind == "buffer":
            pack.append((PACK_BUFFER, pos, None))
        elif kind == "shape":
            pack.append((PACK_SHAPE, pos, item[2]))
        elif kind == "scalar":
            pack.append((PACK_SCALAR, pos, item[2].type))
        elif kind == "vcomp":
            pack.append((PACK_VCOMP, pos, item))
        elif kind == "errbuf":
            pack.append((PACK_ERRBUF, None, None))
        elif kind == "local":          # gpu.local_array(n, dtype): n elements of the launch's local memory
            pack.append((PACK_LOCAL, pos, item[2].itemsize))
        else:
            pack.append((PACK_BOUND, item[1], None))
    return arg_types, pack


def _unrolled_packer(plan):
    """The resident packer of ``plan`` (see LaunchPlan._resident_packer) as generated Python."""
    env = {"DA": plan.device_array_type, "DEV": plan.device, "P": plan, "_component": _component}
    lines = ["def pack(values, domain):"]
    names = []
    for i, (code, pos, extra) in enumerate(plan.pack):
        x = f"x{i}"
        if code == PACK_BUFFER:
            lines += [f"    {x} = values[{int(pos)}]",
                      f"    if type({x}) is not DA or {x}.device is not DEV:",
                      "        return None"]
            if pos in plan.written:      # refused before the launch (LaunchPlan.read_only)
                lines += [f"    if {x}._readonly:", f"        P.read_only({int(pos)})"]
            lines.append(f"    {x} = {x}.buffer")
        elif code == PACK_SHAPE:
            lines.append(f"    {x} = values[{int(pos)}].shape[{int(extra)}]")
        elif code == PACK_SCALAR:
            env[f"T{i}"] = extra
            lines += [f"    {x} = values[{int(pos)}]",
                      f"    t = type({x})",
                      f"    if not (t is float or t is int or t is bool or t is T{i}):",
                      f"        {x} = T{i}({x})"]
        elif code == PACK_BOUND:
            lines.append(f"    {x} = domain[{int(pos)}]")
        elif code == PACK_ERRBUF:
            lines.append(f"    {x} = P.error_buffer")
        elif code == PACK_LOCAL:
            env["_launch_local"] = _launch_local
            lines.append(f"    {x} = _launch_local(values[{int(pos)}], {int(extra)}, P.t.name)")
        else:                            # PACK_VCOMP
            env[f"E{i}"] = extra[3].type
            lines.append(f"    {x} = E{i}(_component(values[{int(pos)}], {int(extra[2])}))")
        names.append(x)
    lines.append(f"    return [{', '.join(names)}]")
    return compile_source("\n".join(lines), f"<pygpgpu packer of {plan.t.name}>", env)["pack"]
