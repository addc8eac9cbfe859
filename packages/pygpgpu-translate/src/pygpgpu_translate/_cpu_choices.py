"""What ``@kernel`` does differently on a CPU device (a device whose ``is_cpu`` is set: PoCL,
Intel's CPU runtime), chosen from device facts, never from the backend's name (issue 33, items 4-5).

CPU OpenCL runtimes run a work group as a loop over its work items, which their compiler
vectorizes *across* work items along dimension 0 (PoCL: 8 or 16 AVX lanes). Two GPU habits work
against that:

- Wide kernels (``_wide``: four elements per work item through ``float4``) give each work item
  128-bit operations, which the work-group loop then runs one work item at a time: PoCL's saxpy
  became ``vfmadd`` on xmm registers where the one-element kernel gets ymm ones. On a CPU the
  one-element kernel is translated (``wide=False``, part of the translation's keys).
- The runtime's group pick for a launch that gives no local size: PoCL takes a divisor of the
  global size, so a prime length runs groups of one work item (saxpy of 7,000,021 elements: 9.8
  ms against 2.2 ms in groups of 4096 on a 2-core machine), and for 2-D launches shapes such as
  (512, 8). :func:`cpu_group_shape` gives a run of one row instead: as wide as the device allows
  along dimension 0 (the vectorized, contiguous one), narrowed while there would be fewer than
  ``GROUPS_PER_UNIT`` groups per compute unit to share out (uneven work such as mandelbrot's).
  The domain guard skips the work items that rounding up to whole groups adds. Kernels whose
  groups show (a barrier, a local array, an array sized by the group) keep the runtime's pick.

``gnp.sort`` of long 1-D arrays takes the chunked radix sort of ``array_ops._radix_cpu`` there.

``PYGPGPU_CPU_TUNING=0`` (read at import) keeps the GPU-shaped kernels, the runtime's pick and the
tiled sort on CPUs, to compare (``benchmarks/bench_cpu.py --ab`` flips :data:`ENABLED` in one process).
"""
from __future__ import annotations

import os
from math import prod
from typing import Any

from pygpgpu_core.protocols import option

__all__ = ["ENABLED", "NARROW", "GROUPS_PER_UNIT", "MIN_ROW", "cpu_group_shape", "on_cpu", "narrow_kernels",
           "group_limits"]

GROUPS_PER_UNIT = 8      # groups per compute unit at least, so that uneven work still spreads out
MIN_ROW = 16             # one 512-bit vector of float32: a group narrower than this wastes the vector loop
MAX_ROW = 4096           # PoCL's own pick for long 1-D launches; larger groups gain nothing


def _switched_on() -> bool:
    return os.environ.get("PYGPGPU_CPU_TUNING", "1").strip().lower() not in ("0", "off", "false", "no")


ENABLED = _switched_on()


def on_cpu(device: Any) -> bool:
    """Whether kernels for ``device`` take the CPU choices above (module docstring)."""
    return ENABLED and bool(option(device, "is_cpu"))


# The one-element kernels alone, for benchmarks/bench_cpu.py --ab to time apart from the group shapes
# (on the H200 machine's 16-core Xeon the choices together made saxpy 1.5x slower, the n-body 0.78x).
NARROW = True


def narrow_kernels(device: Any) -> bool:
    """Whether ``@kernel`` translates one-element kernels instead of wide ones for ``device``."""
    return NARROW and on_cpu(device)


def group_limits(device: Any, kernel_group_size: "int | None") -> "tuple[int, int] | None":
    """``(compute units, largest group)`` for :func:`cpu_group_shape` on ``device``, or None where
    the CPU choices do not apply (a GPU, or switched off)."""
    if not on_cpu(device):
        return None
    units = max(int(getattr(device, "compute_units", 1) or 1), 1)
    limit = min(int(kernel_group_size or MAX_ROW), int(getattr(device, "max_work_group_size", MAX_ROW) or MAX_ROW))
    return units, max(limit, 1)


def cpu_group_shape(global_size: "tuple[int, ...]", units: int, max_group: int) -> "tuple[int, ...]":
    """The group shape of a guarded launch of ``global_size`` work items on a CPU with ``units``
    compute units whose groups hold at most ``max_group`` work items: ``(width, 1, ...)``, the
    width a power of two (few distinct shapes: PoCL compiles its work-group loop per shape)."""
    width = 1
    while width * 2 <= min(max_group, MAX_ROW) and width < global_size[0]:
        width *= 2
    total = prod(global_size)
    want = units * GROUPS_PER_UNIT
    while width > MIN_ROW and -(-total // width) < want:
        width //= 2
    return (width,) + (1,) * (len(global_size) - 1)
