"""Build options of a kernel file: the in-file line that declares them, and the macros they define.

A kernel file may carry its own options on comment lines of its main file (not its headers)::

    // pygpgpu: options -DBLOCK=16 -DREAL=double

They come first; options given at import (``load(path, options=[...])``) follow, so a later
``-D`` of the same name wins, as on a compiler command line. Both go to the device compiler
and are part of the compiled binary's cache key. The ``-D``/``-U`` among them (also NVRTC's
``--define-macro=``/``--undefine-macro=`` and the two-word ``-D NAME`` forms) are applied by the
declaration parser too, so ``#if``/``#ifdef`` select the declarations the compiler will see.
(OpenCL compilers take ``-D`` but refuse ``-U``; NVRTC and hiprtc take both.)
"""
from __future__ import annotations

import re
import shlex
from typing import Iterable

__all__ = ["file_options", "option_defines", "normalise_options"]

_FILE_OPTIONS_RE = re.compile(r"^[ \t]*//[ \t]*pygpgpu:[ \t]*options\b(.*)$", re.M)

_DEFINE_FLAGS = ("-D", "--define-macro")
_UNDEFINE_FLAGS = ("-U", "--undefine-macro")


def normalise_options(options: "str | Iterable[str] | None") -> "tuple[str, ...]":
    """Options as a tuple of strings: a string is split as a shell would (``"-DA=1 -DB"``)."""
    if options is None:
        return ()
    if isinstance(options, str):
        return tuple(shlex.split(options))
    out = tuple(options)
    for o in out:
        if not isinstance(o, str):
            raise TypeError(f"build options must be strings, got {o!r} ({type(o).__name__}); "
                            "e.g. options=['-DBLOCK=16']")
    return out


def file_options(text: str) -> "list[str]":
    """The options declared by ``// pygpgpu: options ...`` lines of ``text``, in order."""
    found: list[str] = []
    for m in _FILE_OPTIONS_RE.finditer(text):
        found.extend(shlex.split(m.group(1)))
    return found


def option_defines(options: "Iterable[str]") -> "list[tuple[str, str | None]]":
    """``(name, body)`` for each macro the options define (``-DN`` is ``N`` defined as ``1``, as
    compilers do) and ``(name, None)`` for each they undefine, in command-line order."""
    out: "list[tuple[str, str | None]]" = []
    items = list(options)
    i = 0
    while i < len(items):
        opt = items[i]
        i += 1
        for flags, undefine in ((_DEFINE_FLAGS, False), (_UNDEFINE_FLAGS, True)):
            arg = _argument(opt, flags)
            if arg is None:
                continue
            if arg == "" and i < len(items):          # "-D NAME=1": the value is the next word
                arg = items[i]
                i += 1
            name, eq, body = arg.partition("=")
            name = name.strip()
            if name.isidentifier():
                out.append((name, None) if undefine else (name, body if eq else "1"))
            break
    return out


def _argument(opt: str, flags: "tuple[str, ...]") -> "str | None":
    """What follows a define/undefine flag in ``opt`` ("" when the flag stands alone), else None."""
    short, long_ = flags
    if opt.startswith(long_):
        rest = opt[len(long_):]
        return rest[1:] if rest.startswith("=") else (rest if rest == "" else None)
    if opt.startswith(short):
        return opt[len(short):]
    return None
