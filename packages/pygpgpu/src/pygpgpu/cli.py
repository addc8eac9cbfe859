"""The ``pygpgpu`` command (also ``python -m pygpgpu``).

    pygpgpu [info] [--json]     versions, backends, devices, cache, PYGPGPU_* settings
    pygpgpu devices             one line per device
    pygpgpu cache info|clear [NAMESPACE]
                                what the on-disk cache holds / delete its entries
    pygpgpu inspect FILE.py:KERNEL --backend cuda --types "float32[:], float32[:], float32"
                                print the source generated for those argument types
"""
from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
from typing import Any, Sequence

__all__ = ["main", "parse_types"]

_VECTOR_BASES = {"char": "int8", "uchar": "uint8", "short": "int16", "ushort": "uint16", "int": "int32",
                 "uint": "uint32", "long": "int64", "ulong": "uint64", "float": "float32", "double": "float64"}
_VECTOR_WIDTHS = (2, 3, 4, 8, 16)


def _split_top_level(text: str) -> list[str]:
    """``"float32[:, :], int32"`` -> ``["float32[:, :]", "int32"]`` (commas inside [] stay)."""
    parts, depth, current = [], 0, ""
    for ch in text:
        if ch == "[":
            depth += 1
        elif ch == "]":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append(current)
            current = ""
        else:
            current += ch
    parts.append(current)
    return [p.strip() for p in parts]


def _vector(name: str) -> "tuple[str, int] | None":
    for base, dtype in _VECTOR_BASES.items():
        for width in _VECTOR_WIDTHS:
            if name == f"{base}{width}":
                return dtype, width
    return None


def _example_value(spec: str) -> Any:
    """A value of the type ``spec`` names: ``float32[:, :]`` a 2-D float32 array, ``float4[:]`` an
    (n, 4) float32 array (a row per vector), ``int32`` a numpy scalar, ``float`` / ``int`` /
    ``bool`` a Python number (weak, as a literal would be)."""
    import numpy as np

    if spec in ("float", "int", "bool"):
        return {"float": 1.0, "int": 1, "bool": True}[spec]
    name, _, dims = spec.partition("[")
    name = name.strip()
    vector = _vector(name)
    if vector is None:
        try:
            dtype = np.dtype(name)
        except TypeError:
            raise ValueError(f"unknown type {name!r} in {spec!r}: use a numpy dtype name (float32, int64, "
                             "uint8...), a vector type (float4, int2...), or float / int / bool") from None
        if dtype.kind not in "biuf":
            raise ValueError(f"type {name!r} in {spec!r} is not a number type a kernel can take")
    if not dims:
        if vector is not None:
            return np.zeros(vector[1], dtype=vector[0])   # one vector value
        return dtype.type(1)
    if not dims.endswith("]") or set(dims[:-1].replace(" ", "")) - {":", ","}:
        raise ValueError(f"array type {spec!r}: write the dimensions as [:], [:, :] or [:, :, :]")
    ndim = dims.count(":")
    if not 1 <= ndim <= 3:
        raise ValueError(f"array type {spec!r}: kernels take arrays of 1 to 3 dimensions")
    if vector is not None:
        return np.zeros((5,) * ndim + (vector[1],), dtype=vector[0])
    return np.zeros((5,) * ndim, dtype=dtype)   # 5: no vector width, so no row specialization


def parse_types(text: str) -> list[Any]:
    """Example arguments for the comma-separated types of ``pygpgpu inspect --types``."""
    specs = _split_top_level(text)
    if any(not s for s in specs):
        raise ValueError(f"--types {text!r}: empty entry; separate the types with commas")
    return [_example_value(s) for s in specs]


def _load_kernel(target: str) -> Any:
    """``path/to/file.py:name`` (``name`` may be dotted: ``Class.method``) -> the kernel object."""
    import importlib.util
    import os

    from pygpgpu_translate import ConfiguredKernel, KernelFunction

    path, sep, name = target.rpartition(":")
    if not sep or not path or not name:
        raise ValueError(f"{target!r}: write FILE.py:KERNEL, e.g. examples/01_saxpy.py:saxpy")
    if not os.path.isfile(path):
        raise ValueError(f"{path!r} is not a file")
    folder = os.path.dirname(os.path.abspath(path))
    module_name = "_pygpgpu_inspect_" + os.path.splitext(os.path.basename(path))[0].replace("-", "_")
    spec = importlib.util.spec_from_file_location(module_name, path)
    if spec is None or spec.loader is None:
        raise ValueError(f"{path!r} cannot be imported as Python")
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module          # inspect.getsource finds the file through it
    sys.path.insert(0, folder)                 # the file's own imports, as `python FILE.py` would
    with contextlib.redirect_stdout(sys.stderr):  # its prints must not mix with the source we print
        spec.loader.exec_module(module)        # runs module level code; `if __name__ == "__main__"` does not
    obj: Any = module
    for part in name.split("."):
        if not hasattr(obj, part):
            raise ValueError(f"{path} has no {name!r}")
        obj = getattr(obj, part)
    if isinstance(obj, ConfiguredKernel) and obj._bound_self is not None:
        return obj                             # instance.method: self is that instance
    if not isinstance(obj, KernelFunction):
        raise ValueError(f"{name!r} in {path} is not an @kernel function (its type is {type(obj).__name__})")
    if obj._is_method:
        raise ValueError(f"{name!r} in {path} is a kernel method: its self.* attributes come from an instance, "
                         "which --types cannot describe; name an instance made at module level instead, e.g. "
                         f"{path}:model.{name.rsplit('.', 1)[-1]}")
    return obj


def _param_names(kernel: Any) -> "list[str]":
    """The parameters --types describes (a bound kernel method's self is its instance)."""
    bound = getattr(kernel, "_bound_self", None) is not None
    names = list(kernel._kf._param_names if bound else kernel._param_names)
    return names[1:] if bound else names


def _cmd_info(args: argparse.Namespace) -> int:
    from ._info import diagnostics, format_report

    info = diagnostics()
    print(json.dumps(info, indent=2) if args.json else format_report(info))
    return 0


def _cmd_devices(args: argparse.Namespace) -> int:
    from pygpgpu_core import registry

    from ._info import device_facts, device_summary

    rows = [device_facts(registry.get_device(s)) for s in registry.available_devices()]
    for row in rows:
        print(device_summary(row))
    if not rows:
        reasons = "; ".join(f"{n}: {r}" for n, r in registry.diagnostics().items()) or "no backend is installed"
        print(f"no devices ({reasons})", file=sys.stderr)
        return 1
    return 0


def _cmd_cache(args: argparse.Namespace) -> int:
    # pygpgpu.cache_info() / clear_cache(): only the library's own entries are counted and deleted
    from pygpgpu_core.cache import cache_dir, cache_info, clear_cache

    from ._info import cache_report, cache_summary, human_size

    if args.action == "clear":
        root = cache_dir()      # CacheUnavailable (an OSError) says why there is no cache to clear
        before = cache_info()
        freed = clear_cache(args.namespace)
        removed = before["entries"] - cache_info()["entries"]
        what = f"the {args.namespace} entries" if args.namespace else "every entry"
        print(f"removed {max(removed, 0)} entries ({human_size(freed)}) from {root}: {what}")
        return 0
    if args.namespace is not None:
        raise ValueError("cache info takes no namespace: it lists them all")
    info = cache_report()
    if args.json:
        print(json.dumps(info, indent=2))
        return 0
    print(cache_summary(info))
    for name, part in info["namespaces"].items():
        print(f"  {name:<14} {human_size(part['bytes']):>10} in {part['entries']} entries")
    return 0


def _cmd_build_native(args: argparse.Namespace) -> int:
    from pygpgpu_core.backend import native

    if args.remove:
        removed = native.remove()
        for path in removed:
            print(f"removed {path}")
        if not removed:
            print(f"nothing to remove: no built launcher in {native.SOURCE.parent}")
        return 0
    path = native.build(compiler=args.cc)
    print(f"built {path}: warm launches in new processes go through it "
          "(PYGPGPU_NATIVE=0 turns it off; pygpgpu build-native --remove deletes it, pip uninstall does not)")
    return 0


def _cmd_inspect(args: argparse.Namespace) -> int:
    kernel = _load_kernel(args.target)
    values = parse_types(args.types)
    names = _param_names(kernel)
    if len(values) != len(names):
        raise ValueError(f"{args.target.rpartition(':')[2]} takes {len(names)} arguments ({', '.join(names)}); "
                         f"--types gives {len(values)}")
    if args.backend is not None:
        from pygpgpu_core import registry
        from pygpgpu_core.selector import canonical_backend

        known = registry.known_backend_names()
        if canonical_backend(args.backend.split(":")[0]) not in known:
            raise ValueError(f"--backend {args.backend!r} names no backend; use one of {', '.join(sorted(known))} "
                             f"(aliases {', '.join(registry.alias_words())})")
    result = kernel.inspect(*values, backend=args.backend)
    print(result.source)
    return 0


def _parser() -> argparse.ArgumentParser:
    from pygpgpu_core._version import __version__

    parser = argparse.ArgumentParser(prog="pygpgpu", description="PyGPGPU: installation report, devices, "
                                     "cache and generated sources. Without a command: info.")
    parser.add_argument("--version", action="version", version=f"pygpgpu {__version__}")
    sub = parser.add_subparsers(dest="command")
    info = sub.add_parser("info", help="versions, backends with libraries and devices, cache, PYGPGPU_* settings")
    info.add_argument("--json", action="store_true", help="print the report as JSON")
    info.set_defaults(func=_cmd_info)
    devices = sub.add_parser("devices", help="one line per device")
    devices.set_defaults(func=_cmd_devices)
    cache = sub.add_parser("cache", help="the on-disk cache of generated sources and binaries")
    cache.add_argument("action", choices=("info", "clear"), nargs="?", default="info")
    cache.add_argument("namespace", nargs="?", default=None,
                       help="clear only this part: translate, kernel_files or a backend's (opencl, cuda, hip, "
                            "a plug-in's name)")
    cache.add_argument("--json", action="store_true", help="cache info as JSON")
    cache.set_defaults(func=_cmd_cache)
    build_native = sub.add_parser("build-native", help="compile the optional C launcher (faster warm launches; "
                                  "needs a C compiler and Python's headers)")
    build_native.add_argument("--cc", default=None, help="the C compiler (default: $CC, then Python's own)")
    build_native.add_argument("--remove", action="store_true",
                              help="delete the built launcher instead (do this before pip uninstall pygpgpu-core, "
                                   "which leaves it behind)")
    build_native.set_defaults(func=_cmd_build_native)
    inspect = sub.add_parser("inspect", help="print the source generated for a kernel and argument types")
    inspect.add_argument("target", metavar="FILE.py:KERNEL")
    inspect.add_argument("--types", required=True,
                         help='argument types, e.g. "float32[:], float32[:], float32" ([:, :] for 2-D, '
                              "float4[:] for vector rows, float/int for Python numbers)")
    inspect.add_argument("--backend", default=None,
                         help="backend or device whose dialect to print (opencl, cuda, hip or a plug-in's name; "
                              "no device needed)")
    inspect.set_defaults(func=_cmd_inspect)
    return parser


def main(argv: "Sequence[str] | None" = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or (argv[0].startswith("-") and argv[0] not in ("-h", "--help", "--version")):
        argv.insert(0, "info")      # the default command, with its options (pygpgpu --json)
    args = _parser().parse_args(argv)
    from pygpgpu_core.errors import GPGPUError

    try:
        return args.func(args)
    except BrokenPipeError:
        # The reader left (``pygpgpu inspect ... | head``): stop quietly, as other commands do.
        # stdout goes to devnull so that flushing it at exit does not fail a second time.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1
    except (GPGPUError, ValueError, SyntaxError, TypeError, OSError) as exc:   # OSError: an unusable cache folder
        print(f"pygpgpu {args.command}: error: {exc}", file=sys.stderr)
        return 2
