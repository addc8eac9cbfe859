"""Checks a launch makes on the host before anything runs, so that no call gives a silently wrong
result: which part of the domain a launch reaches, the extents of arrays every work item indexes,
Python ints that do not fit the type they meet, the group size a kernel's local arrays imply, and
work sizes that need 64-bit work-item ids.

Everything here is decided once per launch plan; what a warm call pays is a few integer compares.
"""
from __future__ import annotations

import os

import numpy as np

__all__ = [
    "NARROW_MAX_WORK",
    "WideIndexNeeded",
    "automatic_local_size",
    "check_int_ranges",
    "extent_checker",
    "guard_checker",
    "int_range_checks",
    "missing_dimension",
    "needs_wide_ids",
    "partial_launch",
    "reached",
]

# Work sizes (per dimension) above this get 64-bit work-item ids: rounding a size up to whole
# work groups (at most 65536 items here) must still leave every id below 2**31.
NARROW_MAX_WORK = 2**31 - 2**16


class WideIndexNeeded(Exception):
    """Raised by a 32-bit plan whose domain turned out too large for 32-bit ids (before anything
    runs); the kernel builds the 64-bit plan and launches that instead."""


def needs_wide_ids(global_size) -> bool:
    """Whether a (bracket) work size needs 64-bit work-item ids."""
    return global_size is not None and max(global_size) > NARROW_MAX_WORK


def reached(domain, global_size, local_size) -> tuple:
    """How many indices of each domain dimension (C order: ``domain[0]`` is the outermost) a
    launch of ``global_size`` work items reaches: the work size is rounded up to whole groups
    when ``local_size`` is given (OpenCL and CUDA both launch whole groups), and dimensions the
    work size does not have reach one index."""
    nd = len(domain)
    if nd == 1:                              # the common case, short: a warm bracket call pays this
        g = global_size[0]
        if local_size is not None:
            g = -(-g // local_size[0]) * local_size[0]
        return domain if g >= domain[0] else (g,)
    out = []
    for k in range(nd):
        d = nd - 1 - k                       # domain dim k is work dimension nd-1-k
        if d < len(global_size):
            g = global_size[d]
            if local_size is not None and d < len(local_size) and local_size[d]:
                g = -(-g // local_size[d]) * local_size[d]
        else:
            g = 1
        out.append(min(domain[k], g))
    return tuple(out)


def _bracket_text(kernel: str, global_size, local_size) -> str:
    g = global_size[0] if len(global_size) == 1 else tuple(global_size)
    if local_size is None:
        return f"{kernel}[{g!r}]" if len(global_size) == 1 else f"{kernel}[({g!r}, None)]"
    lo = local_size[0] if len(local_size) == 1 else tuple(local_size)
    return f"{kernel}[({g!r}, {lo!r})]"


def _conventions(kernel: str, global_size, local_size) -> str:
    """How Numba's and Warp's launch spellings read here (a bracket is OpenCL's (total, per group))."""
    if local_size is not None and len(global_size) == len(local_size) == 1 and local_size[0] > 1:
        blocks, threads = global_size[0], local_size[0]
        numba = (f"Numba's {kernel}[{blocks}, {threads}] ({blocks} blocks of {threads} threads) is "
                 f"{kernel}[({blocks * threads}, {threads})] here")
    else:
        numba = "Numba's k[blocks, threads] is k[(blocks * threads, threads)] here"
    if len(global_size) == 1 and local_size is not None and len(local_size) == 1 and local_size[0] > 1:
        warp = (f"Warp's wp.launch(k, dim=({global_size[0]}, {local_size[0]})) (a 2-D launch) is "
                f"{kernel}[(({global_size[0]}, {local_size[0]}), None)] here")
    else:
        warp = "Warp's wp.launch(k, dim=(h, w)) (a 2-D launch) is k[((h, w), None)] here"
    return (f"A bracket work size here is OpenCL's convention, k[(total work items, work items per group)]: "
            f"{numba}, and {warp} (docs/coming-from.md)")


def missing_dimension(kernel: str, work_dims: int, global_size, local_size, derived: bool) -> ValueError:
    """The error for a launch with fewer dimensions than the kernel's gpu.get_*(d) calls read:
    every work item would read id 0 there and process a fraction of the data."""
    d = work_dims - 1
    how = ("its domain (gpu.work_size) has" if derived
           else f"the launch {_bracket_text(kernel, global_size, local_size)} has")
    return ValueError(
        f"kernel {kernel!r} reads work-item dimension {d} (gpu.get_global_id({d}) or another gpu.get_*({d})), but "
        f"{how} {len(global_size)} dimension(s): that id would be 0 in every work item and only a fraction of the "
        f"data would be processed. Give a {work_dims}-D work size, e.g. {kernel}[((h, w), None)] or "
        f"{kernel}[((h, w), (lh, lw))]. {_conventions(kernel, global_size, local_size)}")


def partial_launch(kernel: str, what: str, extent: int, d: int, launched: int, global_size, local_size) -> str:
    """The warning text for a bracket launch that reaches ``launched`` of the ``extent`` indices
    of dimension ``d`` the kernel guards (``what``: the guard or domain as written)."""
    return (f"kernel {kernel!r} covers {what} = {extent} in work-item dimension {d}, but the launch "
            f"{_bracket_text(kernel, global_size, local_size)} runs only {launched} work item(s) there: "
            f"{extent - launched} would not be processed. {_conventions(kernel, global_size, local_size)}. "
            f"If only a part is meant, silence this with warnings.filterwarnings('ignore', "
            f"category=pygpgpu.PyGPGPUWarning)")


def launched_items(global_size, local_size, d: int) -> int:
    """Work items a launch runs in dimension ``d`` (rounded up to whole groups where the local
    size is given; a dimension the work size does not have runs one)."""
    if d >= len(global_size):
        return 1
    g = global_size[d]
    if local_size is not None and d < len(local_size) and local_size[d]:
        g = -(-g // local_size[d]) * local_size[d]
    return g


def guard_checker(guards, func, kernel: str, nparams: int):
    """``check(values, global_size, local_size)`` warning where a bracket launch runs fewer work
    items than a gid-style kernel's ``if i < E`` guard expects (``guards``: ``[[d, plan]]``, _guards)."""
    from ._domain import build_function, render_plan
    from pygpgpu_core.logs import warn
    fns = [(d, build_function(plan, func), render_plan(plan, func)) for d, plan in guards]

    def check(values, global_size, local_size):
        for d, fn, text in fns:
            try:
                extent = int(fn(*values[:nparams])[0])
            except Exception:        # an extent the host cannot evaluate from these arguments: not checked
                continue
            launched = launched_items(global_size, local_size, d)
            if launched < extent:
                warn(partial_launch(kernel, f"gpu.get_global_id({d}) < {text}", extent, d, launched,
                                    global_size, local_size))
    return check


def _shape_text(shape) -> str:
    return "(" + ", ".join(str(n) for n in shape) + ("," if len(shape) == 1 else "") + ")"


def extent_checker(extents, position, kernel: str, filename: str, ndim: int):
    """``check(values, reach)`` for the arrays every work item indexes at its own domain index
    (``out[i] = x[i]``, ``extents``: ``[name, line]``): their extents must cover the part of the
    domain the launch reaches, or the kernel would read past their end (garbage) or write past it
    (heap corruption). Python would raise IndexError; the check raises ValueError naming the
    arrays, their shapes and the kernel line, before anything runs. For 1-D domains (the common
    case) a warm call pays one attribute read and one compare per array."""
    checks = tuple((position[name], name, line) for name, line in extents if name in position)
    positions = tuple(pos for pos, _n, _l in checks)

    def fail(values, reach):
        _extent_error(checks, values, reach, kernel, filename)

    def check_1d(values, reach):
        n = reach[0]
        for pos in positions:
            if values[pos].shape[0] < n:
                fail(values, reach)

    def check_nd(values, reach):
        for pos in positions:
            shape = values[pos].shape
            for k, n in enumerate(reach):
                if shape[k] < n:
                    fail(values, reach)

    return check_1d if ndim == 1 else check_nd


def _extent_error(checks, values, reach, kernel, filename):
    short = []
    listing = []
    for pos, name, line in checks:
        shape = tuple(values[pos].shape)
        listing.append(f"{name} {_shape_text(shape)}")
        if any(shape[k] < n for k, n in enumerate(reach)):
            short.append((name, shape, line))
    name, shape, line = short[0]
    where = f"{os.path.basename(filename)}:{line}" if filename else f"line {line}"
    names = ", ".join(repr(s[0]) for s in short)
    raise ValueError(
        f"kernel {kernel!r} ({where}): every work item indexes {names} at its own index, but the launch "
        f"covers indices {_shape_text(reach)} and {name!r} has shape {_shape_text(shape)} (array shapes: "
        f"{', '.join(listing)}). The kernel would read or write past the end of {names}; pass arrays at "
        f"least as large as the loop's domain, or guard the access (if i < x.shape[0]: ...)")


def int_range_checks(meets, position, tokens) -> tuple:
    """``(position, name, lo, hi, types)`` for each Python-int argument the kernel converts to a
    narrower integer type (``int8_data[i] + c``, ``out_int32[i] = c``): numpy raises OverflowError
    when such a value does not fit that type, and so does the launch. ``meets`` lists
    ``[name, dtype name]`` from the translation; ``tokens`` are the call's argument tokens aligned
    with ``position`` (Python ints are "i", "l" and "L"; numpy scalars are converted as numpy
    converts them and are not checked)."""
    ranges: dict = {}
    for name, dtype in meets:
        pos = position.get(name)
        if pos is None or pos >= len(tokens) or tokens[pos] not in ("i", "l", "L"):
            continue
        info = np.iinfo(np.dtype(dtype))
        lo, hi, types = ranges.get(name, (None, None, []))
        lo = int(info.min) if lo is None else max(lo, int(info.min))
        hi = int(info.max) if hi is None else min(hi, int(info.max))
        ranges[name] = (lo, hi, types + [np.dtype(dtype).name])
    return tuple((position[name], name, lo, hi, tuple(types)) for name, (lo, hi, types) in ranges.items())


def check_int_ranges(checks, values, kernel: str) -> None:
    for pos, name, lo, hi, types in checks:
        v = values[pos]
        if not lo <= v <= hi:
            bad = [t for t in types if not np.iinfo(t).min <= v <= np.iinfo(t).max]
            raise OverflowError(
                f"argument {name!r} of kernel {kernel!r}: Python integer {v} out of bounds for {bad[0]} (the kernel "
                f"converts it to {' and '.join(sorted(set(types)))} where it meets values of that type, as numpy does "
                f"in arithmetic, which raises this error too); pass a value in {lo}..{hi}, or use wider arrays")


def group_limit(t) -> int | None:
    """The most work items per group the kernel can run with: its dialect's subgroup emulation
    holds one scratch slot per work item (OpenCL), else no limit of the kernel's own."""
    if "subgroups" not in (t.features or ()):
        return None
    from ._dialects import dialect_for
    return dialect_for(t.dialect).subgroup_group_limit


def check_group_limit(limit: int, local_size, name: str) -> None:
    group = 1
    for n in local_size:
        group *= n
    if group > limit:
        raise ValueError(f"kernel {name!r} uses subgroup operations, which on this backend are emulated in local "
                         f"memory for at most {limit} work items per group, but the local size {tuple(local_size)} "
                         f"has {group}; give a smaller local size: {name}[(total, {limit})](...)")


def automatic_local_size(t, max_group: int | None):
    """The group size a launch without an explicit local size must use, from what the kernel
    assumes: None when it declares no local arrays and no barriers (the runtime picks), a tuple
    in work-dimension order (the reversed shape of its local arrays), or a string saying why an
    explicit local size is needed (raised as ValueError when such a launch happens).

    A kernel that sizes ``gpu.local_array(256, ...)`` and synchronizes assumes groups of 256;
    a runtime free to pick (PoCL picked 4096) would silently break it."""
    shapes = {tuple(s) for s in (t.local_shapes or ())}
    name = t.name
    ask = f"give one: {name}[(total, local)](...)"
    if not shapes and "subgroups" in (t.features or ()) and not t.uses_barrier:
        # whole subgroups, as a CUDA launch of 256 threads has: 8 warps, 4 wavefronts, 8 runs of 32
        return {1: (256,), 2: (32, 8), 3: (8, 8, 4)}.get(t.domain_ndim, (256,))
    if not shapes:
        if t.uses_barrier:
            fixed = " of a fixed shape" if any(item[0] == "local" for item in (t.layout or ())) else ""
            return (f"kernel {name!r} synchronizes with gpu.barrier() but declares no gpu.local_array{fixed}, so the "
                    f"group size it assumes is unknown and it needs an explicit local size; {ask}")
        return None
    if len(shapes) > 1:
        listed = ", ".join(_shape_text(s) for s in sorted(shapes))
        return (f"kernel {name!r} declares local arrays of different shapes ({listed}), so the group size it "
                f"assumes is unknown and it needs an explicit local size; {ask}")
    shape = next(iter(shapes))
    local = tuple(reversed(shape))
    group = 1
    for n in local:
        group *= n
    if max_group is not None and group > max_group:
        return (f"kernel {name!r} declares gpu.local_array{_shape_text(shape)}, which implies groups of {group} work "
                f"items, but it can run at most {max_group} per group on this device; {ask} with a local size that "
                "fits, and size the local array to match")
    return local


# The layout's size names of gpu.local_array(gpu.get_local_size(d), dtype) and of products of
# distinct dimensions' sizes (gpu.get_local_size(0) * gpu.get_local_size(1): a 2-D group's work
# items): not parameters but the launch's group shape (LaunchPlan appends the 7 products to the
# call's values, with_local_size, and the layout reads them at LOCAL_SIZE_POSITIONS)
_DIM_SETS = ((0,), (1,), (2,), (0, 1), (0, 2), (1, 2), (0, 1, 2))


def local_size_item(dims) -> str:
    """The layout's size name of the product of the group's sizes along ``dims`` (distinct, sorted)."""
    return " * ".join(f"gpu.get_local_size({d})" for d in dims)


LOCAL_SIZE_POSITIONS = {local_size_item(ds): k - len(_DIM_SETS) for k, ds in enumerate(_DIM_SETS)}


def with_local_size(values, local_size, name: str) -> tuple:
    """``values`` followed by the products of the launch's local size over each set of dimensions
    (``LOCAL_SIZE_POSITIONS``: the last 7 values)."""
    if local_size is None:
        raise ValueError(f"kernel {name!r} sizes a gpu.local_array by gpu.get_local_size(), so it needs the local "
                         f"size at the call: {name}[(total, local)](...)")
    sizes = (*local_size, *(1,) * (3 - len(local_size)))
    products = []
    for dims in _DIM_SETS:
        n = 1
        for d in dims:
            n *= sizes[d]
        products.append(n)
    return (*values, *products)
