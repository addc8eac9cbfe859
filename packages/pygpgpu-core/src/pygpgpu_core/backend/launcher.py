"""The generated warm-path launcher of the pointer-array launch ABI (CUDA, HIP).

A launcher is built once per (kernel, argument kinds): the :class:`~.args.ArgumentLayout`
preallocates the argument bytes and the ``void*[]`` pointing into them, and the generated
function does one ``struct.pack_into`` for all arguments followed by the two driver calls
(make the context current, launch) through function objects without argtypes, then records
the launch on the context (``context._last_launch``: what a later wait polls for and Ctrl-C
names, see ``driver/waits.py``). Nothing else happens per call: no ctypes object is
allocated, no attribute is looked up twice.

What the kernel object provides: ``name``, ``param_sizes``, ``handle`` (a ``c_void_p`` set to
NULL when its program closes, which the launcher sees), ``geometry(global, local)`` and its
``_geometry_cache``, ``ensure_shared(nbytes)``, ``shared_default_limit``, ``float16_arguments``,
``launch_failed(status)``, and ``context`` with ``queue.handle``, ``current_token`` and
``calls.set_current_unchecked`` / ``calls.launch_unchecked``.
"""
from __future__ import annotations

import threading
from typing import Any, Callable, Sequence

from .args import ArgumentLayout, check_param_kinds, explain

__all__ = ["build_launcher"]


def build_launcher(kernel: Any, arg_types: Sequence[Any]) -> Callable[..., None]:
    """Generate ``fn(global_size, local_size, args)`` for ``kernel`` and these argument kinds."""
    layout = ArgumentLayout(arg_types, kernel.name, exact=kernel.param_sizes is not None,
                            float16=getattr(kernel, "float16_arguments", True))
    kinds = layout.kinds
    check_param_kinds(kernel.name, kernel.param_sizes, [k for _, k in layout.params])

    exprs, namespace = [], {}
    for i, kind in layout.params:
        if kind.tag == "buffer":
            exprs.append(f"a{i}.ptr")
        elif kind.convert is not None:
            namespace[f"conv{i}"] = kind.convert
            exprs.append(f"conv{i}(a{i})")
        else:
            exprs.append(f"a{i}")
    ctx = kernel.context
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
    )
    names = ", ".join(f"a{i}" for i in range(len(kinds)))
    unpack = f"        ({names},) = args\n" if kinds else "        if len(args): raise ValueError\n"
    shared = " + ".join(f"a{i}.nbytes" for i in layout.locals) or "0"
    src = (
        "def launch(global_size, local_size, args):\n"
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
        "        try:\n"
        + (f"            pack_into(storage, 0, {', '.join(exprs)})\n" if exprs else "            pass\n")
        # a float32/float16 value past its range: packed as C converts it (+-inf), as on OpenCL
        + ("        except OverflowError:\n            pack_c_float_casts(args)\n" if layout.float_casts else "")
        + "        except Exception as exc:\n"
        "            raise explain(args, exc) from None\n"
        "        if not func:\n"
        "            fail(0)\n"
        "        set_current(ctx_handle)\n"
        "        rc = driver_launch(func, *geom, shared, stream, params, None)\n"
        "    if rc:\n"
        "        fail(rc)\n"
        "    context._last_launch = (NAME, args)\n"
    )
    exec(compile(src, f"<pygpgpu-{ctx.calls.backend} launcher {kernel.name}>", "exec"), namespace)
    launch = namespace["launch"]
    launch.arg_kinds = tuple(kinds)  # type: ignore[attr-defined]
    launch.layout = layout  # type: ignore[attr-defined]  # keeps the argument memory alive with the launcher
    launch.source = src  # type: ignore[attr-defined]
    return launch
