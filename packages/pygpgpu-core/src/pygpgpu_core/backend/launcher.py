"""The generated warm-path launcher of the pointer-array launch ABI (CUDA, HIP).

A launcher is built once per (kernel, argument kinds): the :class:`~.args.ArgumentLayout`
preallocates the argument bytes and the ``void*[]`` pointing into them, and the generated
function does one ``struct.pack_into`` for all arguments followed by the two driver calls
(make the context current, launch) through function objects without argtypes, then records
the launch on the context (``context._last_launch``: what a later wait polls for and Ctrl-C
names, see ``driver/waits.py``). Nothing else happens per call: no ctypes object is
allocated, no attribute is looked up twice.

Where the driver has ``cuLaunchKernelEx`` (CUDA 12.0+; the optional ``launch_ex`` role), the
launch goes through it: the grid, block, shared memory and stream sit in a preallocated
``CUlaunchConfig`` (:class:`LaunchConfig`) refilled only when the geometry is not the object of
the last launch, so the call converts 4 arguments instead of 11 (about 0.4 us of Python less).

``launch.again(global, local, args)`` is the same launch for a caller that passes one args
object again and never mutates it (the configured kernels' memo): while the argument storage and
the configuration still hold that object's packing, only the driver calls run.

What the kernel object provides: ``name``, ``param_sizes``, ``handle`` (a ``c_void_p`` set to
NULL when its program closes, which the launcher sees), ``geometry(global, local)`` and its
``_geometry_cache``, ``ensure_shared(nbytes)``, ``shared_default_limit``, ``float16_arguments``,
``launch_failed(status)``, and ``context`` with ``queue.handle``, ``current_token`` and
``calls.set_current_unchecked`` / ``calls.launch_unchecked``.
"""
from __future__ import annotations

import threading
from ctypes import Structure, byref, c_uint, c_void_p
from typing import Any, Callable, Sequence

from . import native as _native
from .args import ArgumentLayout, check_param_kinds, explain

__all__ = ["build_launcher", "LaunchConfig"]


class LaunchConfig(Structure):
    """``CUlaunchConfig`` of cuda.h (CUDA 12.0+), the first argument of ``cuLaunchKernelEx``."""

    _fields_ = [("gridDimX", c_uint), ("gridDimY", c_uint), ("gridDimZ", c_uint),
                ("blockDimX", c_uint), ("blockDimY", c_uint), ("blockDimZ", c_uint),
                ("sharedMemBytes", c_uint), ("hStream", c_void_p), ("attrs", c_void_p), ("numAttrs", c_uint)]


def _config_filler(config: LaunchConfig, stream: Any, last: list) -> Callable[[tuple, int], None]:
    def fill(geom: tuple, shared: int) -> None:
        (config.gridDimX, config.gridDimY, config.gridDimZ,
         config.blockDimX, config.blockDimY, config.blockDimZ) = geom
        config.sharedMemBytes = shared
        config.hStream = stream.value
        last[0], last[1] = geom, shared
    return fill


def _native_codes(layout: ArgumentLayout) -> "list[str] | None":
    """Per argument, what the native launcher packs ('P': a buffer's ``.ptr``; else the struct
    format character), or None where it packs one of them differently (local memory, vectors,
    records: the Python launcher keeps those)."""
    if layout.locals:
        return None
    codes = []
    for _, kind in layout.params:
        if kind.tag == "buffer":
            codes.append("P")
        elif kind.tag == "scalar" and kind.convert is None and len(kind.fmt) == 1 and kind.fmt in _NATIVE_FORMATS:
            codes.append(kind.fmt)
        else:
            return None
    return codes


_NATIVE_FORMATS = "bBhHiIqQefd?"


def build_launcher(kernel: Any, arg_types: Sequence[Any], native: bool = True) -> Callable[..., None]:
    """Generate ``fn(global_size, local_size, args)`` for ``kernel`` and these argument kinds;
    the native launcher (``backend/native.py``) where it is built and ``native`` allows it."""
    layout = ArgumentLayout(arg_types, kernel.name, exact=kernel.param_sizes is not None,
                            float16=getattr(kernel, "float16_arguments", True))
    kinds = layout.kinds
    check_param_kinds(kernel.name, kernel.param_sizes, [k for _, k in layout.params])

    exprs: list[str] = []
    namespace: dict[str, Any] = {}
    for i, kind in layout.params:
        if kind.tag == "buffer":
            exprs.append(f"a{i}.ptr")
        elif kind.convert is not None:
            namespace[f"conv{i}"] = kind.convert
            exprs.append(f"conv{i}(a{i})")
        else:
            exprs.append(f"a{i}")
    ctx = kernel.context
    launch_ex = getattr(ctx.calls, "launch_ex_unchecked", None)     # cuLaunchKernelEx, where the driver has it
    config = LaunchConfig()
    last_config: list = [None, None]                                  # the geometry and shared bytes in ``config``
    namespace.update(
        pack_into=layout.struct.pack_into,
        storage=layout.storage,
        params=layout.pointers if layout.params else None,
        func=kernel.handle,
        stream=ctx.queue.handle,
        ctx_handle=ctx.current_token,
        set_current=ctx.calls.set_current_unchecked,
        driver_launch=ctx.calls.launch_unchecked,
        geometry_cache=kernel._geometry_cache,
        geometry=kernel.geometry,
        ensure_shared=kernel.ensure_shared,
        explain=lambda args, exc: explain(kernel.name, kinds, args, exc),
        pack_c_float_casts=lambda args: layout.pack(args, c_float_casts=True),
        fail=kernel.launch_failed,
        lock=threading.Lock(),
        LIMIT=kernel.shared_default_limit,
        context=ctx,
        NAME=kernel.name,
        driver_launch_ex=launch_ex,
        config_ref=byref(config),
        LAST=last_config,
        fill_config=_config_filler(config, ctx.queue.handle, last_config),
    )
    if launch_ex is not None:
        changed = "geom is not LAST[0] or shared != LAST[1]" if layout.locals else "geom is not LAST[0]"
        call = (f"        if {changed}:\n"
                "            fill_config(geom, shared)\n"
                "        set_current(ctx_handle)\n"
                "        rc = driver_launch_ex(config_ref, func, params, None)\n")
    else:
        call = ("        set_current(ctx_handle)\n"
                "        rc = driver_launch(func, *geom, shared, stream, params, None)\n")
    names = ", ".join(f"a{i}" for i in range(len(kinds)))
    unpack = f"        ({names},) = args\n" if kinds else "        if len(args): raise ValueError\n"
    shared = " + ".join(f"a{i}.nbytes" for i in layout.locals) or "0"

    def body(name: str, kept: str) -> str:
        """The source of one launch function; ``kept``: the line after a successful pack."""
        return (
            f"def {name}(global_size, local_size, args):\n"
            "    try:\n"
            + unpack
            + "        shared = " + shared + "\n"
            + "    except Exception as exc:\n"
            "        raise explain(args, exc) from None\n"
            "    try:\n"
            "        geom = geometry_cache[global_size, local_size]\n"
            "    except (KeyError, TypeError):\n"
            "        geom = geometry(global_size, local_size)\n"
            "    if geom is None:\n"
            "        return\n"
            + ("    if shared > LIMIT:\n        ensure_shared(shared)\n" if layout.locals else "")
            + "    with lock:\n"
            "        KEPT[0] = None\n"
            "        try:\n"
            + (f"            pack_into(storage, 0, {', '.join(exprs)})\n" if exprs else "            pass\n")
            # a float32/float16 value past its range: packed as C converts it (+-inf), as on OpenCL
            + ("        except OverflowError:\n            pack_c_float_casts(args)\n" if layout.float_casts else "")
            + "        except Exception as exc:\n"
            "            raise explain(args, exc) from None\n"
            + kept
            + "        if not func:\n"
            "            fail(0)\n"
            + call
            + "    if rc:\n"
            "        fail(rc)\n"
            "    context._last_launch = (NAME, args)\n"
        )

    # again(): launch() for a caller that passes the same args object again and never mutates it
    # (the configured kernels' memo, pygpgpu_translate._memo): when the storage and the launch
    # configuration still hold that object's packing (KEPT: args, global, local, geometry), only the
    # driver calls run; otherwise it packs, as launch() does, and keeps the packing.
    alive = "".join(f" and args[{i}].ptr is not None" for i, kind in layout.params if kind.tag == "buffer")
    again_call = ("            rc = driver_launch_ex(config_ref, func, params, None)\n" if launch_ex is not None else
                  "            rc = driver_launch(func, *KEPT[3], 0, stream, params, None)\n")
    again = (
        "def again(global_size, local_size, args):\n"
        "    with lock:\n"
        f"        if args is KEPT[0] and global_size is KEPT[1] and local_size is KEPT[2] and func{alive}:\n"
        "            set_current(ctx_handle)\n"
        + again_call
        + "        else:\n"
        "            rc = -1\n"
        "    if rc:\n"
        "        if rc == -1:\n"
        "            return pack_and_keep(global_size, local_size, args)\n"
        "        fail(rc)\n"
        "    context._last_launch = (NAME, args)\n"
    )
    namespace["KEPT"] = [None, None, None, None]
    src = body("launch", "")
    if not layout.locals:       # (a launch with local memory may change its shared bytes: always packed)
        src += "\n" + body("pack_and_keep", "        KEPT[:] = args, global_size, local_size, geom\n") + "\n" + again
    exec(compile(src, f"<pygpgpu-{ctx.calls.backend} launcher {kernel.name}>", "exec"), namespace)
    launch = namespace["launch"]
    launch.again = namespace.get("again", launch)
    launch.arg_kinds = tuple(kinds)
    launch.layout = layout  # keeps the argument memory alive with the launcher
    launch.config = config  # and the launch configuration cuLaunchKernelEx reads
    launch.source = src
    if not native:
        return launch
    slack = 0 if kernel.param_sizes is not None else len(layout.pointers) - len(layout.params)
    return _native.wrap(launch, kernel, _native_codes(layout), slack, launch_ex)
