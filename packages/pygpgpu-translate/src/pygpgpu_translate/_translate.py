"""One specialization's translation: builder -> analyses -> emitter, plus the on-disk source cache.

The disk entry is keyed by the kernel's source, the signature, the dialect and the package
version; it stores a manifest of every helper source and global constant the translation
read, which is re-checked before the entry is trusted (DESIGN §6).
"""
from __future__ import annotations

import json
import os
import sys
import time
import types as _pytypes
from dataclasses import dataclass

from pygpgpu_core.cache import DiskCache, cache_key

from ._access import access_word, analyze_function
from ._builder import ProgramBuilder
from ._entry import build_kernel
from ._dialects import dialect_for
from ._emit import emit_program
from ._source import function_source
from ._state import debug_enabled, log, stats
from ._types import Scalar

__all__ = ["Translation", "translate", "stats", "log"]

_disk = DiskCache("translate")
_TRANSLATOR_VERSION = "1"


@dataclass
class Translation:
    name: str
    source: str
    dialect: str
    layout: list           # ("buffer", name) ("shape", name, k, dtype) ("scalar", name, dtype) ("vcomp", ...) ("bound", k, dtype)
    access: dict           # Python param name -> "read" | "write" | "readwrite" | "unused"
    covers: list           # [array, row width]: stored unconditionally at the domain index (0: element)
    domain_src: str
    domain_kind: str
    domain_ndim: int
    uses_barrier: bool
    features: list
    deps: list             # (module, name, kind, fingerprint)

    refs: list = None      # (globals dict, name, value) read by the translation: not stored on disk

    def to_json(self) -> str:
        d = {k: v for k, v in self.__dict__.items() if k != "refs"}
        d["layout"] = [[str(x) if not isinstance(x, (int, str)) else x for x in item] for item in self.layout]
        return json.dumps(d)

    @classmethod
    def from_json(cls, text: str) -> "Translation":
        import numpy as np
        d = json.loads(text)
        layout = []
        for item in d["layout"]:
            kind = item[0]
            if kind in ("shape", "vcomp"):
                layout.append((kind, item[1], int(item[2]), np.dtype(item[3])))
            elif kind == "scalar":
                layout.append((kind, item[1], np.dtype(item[2])))
            elif kind == "bound":
                layout.append((kind, int(item[1]), np.dtype(item[2])))
            else:
                layout.append(tuple(item))
        d["layout"] = layout
        return cls(**d)


def _fingerprint(value):
    if isinstance(value, _pytypes.FunctionType):
        try:
            return "func", function_source(value).digest
        except Exception:
            return "func", repr(value.__code__)
    if isinstance(value, _pytypes.ModuleType):
        return "module", value.__name__
    if isinstance(value, (bool, int, float)) or type(value).__module__ == "numpy":
        return "const", f"{type(value).__name__}:{value!r}"
    if isinstance(value, type):
        return "class", f"{value.__module__}.{value.__qualname__}"
    name = getattr(value, "__qualname__", None) or getattr(value, "__name__", None) or "?"
    return "object", f"{type(value).__module__}.{type(value).__qualname__}:{getattr(value, '__module__', '')}.{name}"


def _deps(prog: ProgramBuilder) -> list:
    out = []
    for (gid, name), (g, _n, value) in sorted(prog.global_refs.items(), key=lambda kv: (str(kv[1][0].get("__name__")), kv[0][1])):
        kind, fp = _fingerprint(value)
        out.append([g.get("__name__", "?"), name, kind, fp])
    return out


def deps_valid(deps) -> bool:
    for module, name, kind, fp in deps:
        mod = sys.modules.get(module)
        if mod is None:
            return False
        g = mod.__dict__
        if name not in g:
            return False
        if list(_fingerprint(g[name])) != [kind, fp]:
            return False
    return True


def translate(func, specs, sig_key, dialect_name: str, default_float: Scalar, index_bits: int,
              self_obj=None, use_disk=True) -> Translation:
    src = function_source(func)
    key = None
    if use_disk:
        key = cache_key("translate", _TRANSLATOR_VERSION, src.filename, src.text, repr(sig_key), dialect_name,
                        default_float.name, index_bits,
                        f"{type(self_obj).__module__}.{type(self_obj).__qualname__}" if self_obj is not None else "")
        blob = _disk.get(key, ".json")
        if blob is not None:
            try:
                t = Translation.from_json(blob.decode())
                if deps_valid(t.deps):
                    t.refs = [(sys.modules[m].__dict__, n, sys.modules[m].__dict__[n]) for m, n, _k, _f in t.deps]
                    stats["source_cache_hits"] += 1
                    if debug_enabled():
                        log.warning("pygpgpu: %s: generated source from the disk cache (%s)", t.name, dialect_name)
                    return t
            except (ValueError, KeyError, TypeError):
                pass
    t0 = time.perf_counter()
    dialect = dialect_for(dialect_name)
    prog = ProgramBuilder(dialect, default_float, index_bits, src.name)
    kir = build_kernel(prog, func, specs, self_obj)
    helpers = list(prog.helpers.values())
    for h in helpers:
        analyze_function(h)
    analyze_function(kir.function)
    # read/write per Python-level parameter
    access = {}
    for p in kir.function.params:
        if p.root:
            access[p.root] = access_word(kir.function.access.get(p.name))
    features = set(prog.features)
    prelude = _prelude(dialect_name, prog)
    header = f"{src.name} from {os.path.basename(src.filename)}:{src.tree.lineno}, generated by pygpgpu for {dialect_name}"
    text = emit_program(dialect, default_float, kir.function, helpers, prog.support, features, header, prelude)
    dom = kir.domain
    t = Translation(src.name, text, dialect_name, kir.layout, access, sorted([k, v] for k, v in dom.covers.items()) if dom else [],
                    kir.domain_src, dom.kind if dom else "", dom.ndim if dom else 0, kir.uses_barrier,
                    sorted(features), _deps(prog))
    t.refs = [(g, n, v) for (g, n, v) in prog.global_refs.values()]
    stats["translations"] += 1
    if debug_enabled():
        log.warning("pygpgpu: translated %s for %s in %.1f ms", src.name, dialect_name, (time.perf_counter() - t0) * 1e3)
    if key is not None:
        _disk.put(key, t.to_json().encode(), ".json")
    return t


def _prelude(dialect_name, prog) -> str:
    if not prog.prelude_needed:
        return ""
    from .prelude import prelude_source
    return prelude_source(dialect_name, sorted(prog.prelude_needed))
