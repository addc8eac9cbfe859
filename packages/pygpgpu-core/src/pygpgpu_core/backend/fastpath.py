"""The one generator of a backend's warm launch function (docs/architecture.md#the-launch-path).

``launch(global_size, local_size, args)`` is generated once per (kernel, argument kinds), from
the kinds as :func:`.args.normalize_kind` reads them (the one reading of a kind, shared by every
backend). Its shape is the same for every backend and is written only here: the arguments are
unpacked by name (a wrong count or a bad argument raises the backend's error), what must be
known before the kernel's lock is computed (the geometry), then under the lock each argument is
packed and the kernel launched, and what follows the lock runs (the launch's status, the
context's last launch). A backend supplies, as a :class:`LaunchRecipe`, only what is its own:
how each argument kind is packed (``pack_arg``, and ``pack`` around the pieces: OpenCL sets each
argument that changed with ``clSetKernelArg``, CUDA and HIP fill one argument block with one
``struct.pack_into``) and the launch of (handle, geometry, packed).

:func:`compile_source` is the one ``exec`` of the launch path's generated code: the backends'
launchers and the translator's packers and memo (``pygpgpu_translate._launch``, ``_memo``)
compile through it, so each function keeps its text (``fn.source``) and a file name that says
whose it is in a traceback.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

from .args import ArgKind

__all__ = ["LaunchRecipe", "compile_source", "generate"]


@dataclass
class LaunchRecipe:
    """What a backend supplies to :func:`generate`. Lines are given without their indentation.

    ``label``: the code's file name (``<pygpgpu-opencl launcher vecadd>``); ``env``: the names
    the lines read; ``kinds``: one ArgKind per argument (``a0``, ``a1``... in the lines);
    ``pack_arg(i, kind)``: the piece that packs ``a{i}`` (a statement or an expression; None:
    nothing, e.g. local memory on CUDA); ``pack(pieces)``: the lines under the lock that pack
    them all; ``launch``: the lines under the lock after packing (the driver call);
    ``enter``: lines before the arguments are unpacked; ``unpacked``: lines after unpacking,
    whose errors are the arguments' (``unpack_errors`` caught, ``unpack_failed`` run with the
    exception as ``exc``); ``before_lock``: lines between unpacking and the lock (the geometry);
    ``after``: lines after the lock; ``variants``: more functions of the same shape, by name,
    with other ``launch`` lines; ``extra``: more source compiled in the same namespace."""

    label: str
    env: "dict[str, Any]"
    kinds: Sequence[ArgKind]
    pack_arg: "Callable[[int, ArgKind], str | None]"
    pack: "Callable[[list[str]], list[str]]"
    launch: "list[str]"
    enter: "list[str]" = field(default_factory=list)
    unpacked: "list[str]" = field(default_factory=list)
    unpack_errors: str = "TypeError, ValueError"
    unpack_failed: str = "raise ValueError from None"
    before_lock: "list[str]" = field(default_factory=list)
    after: "list[str]" = field(default_factory=list)
    variants: "dict[str, list[str]]" = field(default_factory=dict)
    extra: str = ""


def _indent(lines: "Sequence[str]", depth: int) -> "list[str]":
    pad = " " * (4 * depth)
    return [pad + line for line in lines]


def _function(recipe: LaunchRecipe, name: str, launch: "list[str]", pieces: "list[str]") -> "list[str]":
    n = len(recipe.kinds)
    unpack = (f"({', '.join(f'a{i}' for i in range(n))},) = args" if n else "if len(args): raise ValueError")
    return ([f"def {name}(global_size, local_size, args):"]
            + _indent(recipe.enter, 1)
            + ["    try:"] + _indent([unpack] + recipe.unpacked, 2)
            + [f"    except ({recipe.unpack_errors}) as exc:"] + _indent([recipe.unpack_failed], 2)
            + _indent(recipe.before_lock, 1)
            + ["    with lock:"] + _indent(recipe.pack(pieces) + launch, 2)
            + _indent(recipe.after, 1))


def generate(recipe: LaunchRecipe) -> Callable[..., None]:
    """``launch(global_size, local_size, args)`` for ``recipe`` (the env must hold ``lock``);
    its ``variants`` and the functions of ``extra`` are attributes of it by name, and
    ``launch.source`` is the generated text."""
    pieces = [p for p in (recipe.pack_arg(i, kind) for i, kind in enumerate(recipe.kinds)) if p is not None]
    parts = ["\n".join(_function(recipe, "launch", recipe.launch, pieces))]
    parts += ["\n".join(_function(recipe, name, lines, pieces)) for name, lines in recipe.variants.items()]
    if recipe.extra:
        parts.append(recipe.extra)
    src = "\n\n".join(parts) + "\n"
    namespace = compile_source(src, recipe.label, recipe.env)
    launch = namespace["launch"]
    for name, value in namespace.items():
        if name != "launch" and callable(value) and getattr(value, "__code__", None) is not None \
                and value.__code__.co_filename == recipe.label:
            setattr(launch, name, value)
    launch.source = src
    return launch


def compile_source(src: str, label: str, env: "dict[str, Any]") -> "dict[str, Any]":
    """Run generated ``src`` (named ``label`` in tracebacks) with the globals ``env``; returns
    the namespace, ``env`` itself, holding what it defined. The one ``exec`` of the launch
    path's generated code."""
    exec(compile(src, label, "exec"), env)
    return env
