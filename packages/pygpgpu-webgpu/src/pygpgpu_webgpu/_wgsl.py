"""What the runtime must know of a WGSL module without compiling it: its resource bindings
(``@group(g) @binding(b) var<...> name: T;``), its compute entry points with their
``@workgroup_size``, and which bindings each entry point reaches.

WebGPU binds memory to a pipeline by (group, binding), not by argument position, so a kernel's
parameters are the bindings its entry point uses, in (group, binding) order. "Uses" is the
bindings named in the entry function or in any function it calls, found by names: a
superset at worst (a local that shadows a binding's name), which an explicit bind group layout
allows, so the pipeline always validates.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

__all__ = ["Binding", "EntryPoint", "WGSLModule", "WGSLDeclError", "scan", "SCALAR_DTYPES"]


class WGSLDeclError(ValueError):
    """A declaration the runtime cannot turn into a kernel parameter (names the line)."""


# WGSL scalar and vector types a uniform binding may hold, as numpy dtypes and widths
SCALAR_DTYPES: "dict[str, np.dtype]" = {"f32": np.dtype(np.float32), "i32": np.dtype(np.int32), "u32": np.dtype(np.uint32),
                 "f16": np.dtype(np.float16)}
_VECTOR_SHORT = {"f": "f32", "i": "i32", "u": "u32", "h": "f16"}

_COMMENT = re.compile(r"//[^\n]*|/\*.*?\*/", re.S)
_BINDING = re.compile(
    r"@group\s*\(\s*(\d+)\s*\)\s*@binding\s*\(\s*(\d+)\s*\)\s*"
    r"|@binding\s*\(\s*(\d+)\s*\)\s*@group\s*\(\s*(\d+)\s*\)\s*")
_VAR = re.compile(r"var\s*(?:<\s*([a-z_]+)\s*(?:,\s*([a-z_]+)\s*)?>)?\s*([A-Za-z_][A-Za-z0-9_]*)\s*:\s*([^;=]+);")
_FN = re.compile(r"\bfn\s+([A-Za-z_][A-Za-z0-9_]*)\s*\(")
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_COMPUTE = re.compile(r"@compute\b")
_WORKGROUP = re.compile(r"@workgroup_size\s*\(([^)]*)\)")


@dataclass(frozen=True)
class Binding:
    group: int
    binding: int
    name: str
    space: str          # "storage" or "uniform"
    access: str         # "read", "read_write" (storage) or "read" (uniform)
    type: str           # the WGSL type text: "array<f32>", "u32", "Params"
    line: int

    @property
    def key(self) -> "tuple[int, int]":
        return (self.group, self.binding)

    @property
    def dtype(self) -> "np.dtype | None":
        """The numpy dtype of a scalar or vector uniform (what a Python number is packed as);
        None for anything else (an array, a struct: pass a buffer or bytes)."""
        return uniform_dtype(self.type)

    @property
    def element(self) -> "np.dtype | None":
        """The element dtype of a storage ``array<T>`` (or ``array<atomic<T>>``) binding (None for
        other types: structs, nested arrays)."""
        m = re.fullmatch(r"array\s*<\s*(?:atomic\s*<\s*(i32|u32)\s*>|([a-z0-9<>]+?))\s*(?:,\s*\d+\s*)?>", self.type)
        return uniform_dtype(m.group(1) or m.group(2)) if m else None


def uniform_dtype(text: str) -> "np.dtype | None":
    text = text.strip()
    if text in SCALAR_DTYPES:
        return SCALAR_DTYPES[text]
    m = re.fullmatch(r"vec([234])\s*<\s*(f32|i32|u32|f16)\s*>|vec([234])([fiuh])", text)
    if m is None:
        return None
    width = int(m.group(1) or m.group(3))
    base = SCALAR_DTYPES[m.group(2) or _VECTOR_SHORT[m.group(4)]]
    return np.dtype((base, (width,)))


@dataclass(frozen=True)
class EntryPoint:
    name: str
    workgroup_size: "tuple[int, ...] | None"   # None: given by an override expression the scanner cannot read
    params: "tuple[Binding, ...]"
    line: int


@dataclass(frozen=True)
class WGSLModule:
    bindings: "tuple[Binding, ...]"
    entry_points: "dict[str, EntryPoint]"


def _line_of(text: str, pos: int) -> int:
    return text.count("\n", 0, pos) + 1


def _blank_comments(text: str) -> str:
    """Comments replaced by spaces of the same length, so positions (and lines) stay true."""
    return _COMMENT.sub(lambda m: re.sub(r"[^\n]", " ", m.group(0)), text)


def _body_end(text: str, start: int) -> int:
    """The index after the ``}`` matching the first ``{`` at or after ``start``."""
    depth = 0
    for k in range(text.index("{", start), len(text)):
        ch = text[k]
        depth += (ch == "{") - (ch == "}")
        if depth == 0:
            return k + 1
    return len(text)


def _workgroup(text: str, constants: "dict[str, int]") -> "tuple[int, ...] | None":
    sizes = []
    for part in text.split(","):
        part = part.strip()
        if not part:
            continue
        value = part.rstrip("ui")
        if value.isdigit():
            sizes.append(int(value))
        elif part in constants:
            sizes.append(constants[part])
        else:
            return None
    return tuple(sizes)


def scan(source: str, path: str = "<wgsl>") -> WGSLModule:
    """The bindings and compute entry points of WGSL ``source``."""
    text = _blank_comments(source)
    bindings: list[Binding] = []
    for m in _BINDING.finditer(text):
        group = int(m.group(1) if m.group(1) is not None else m.group(4))
        binding = int(m.group(2) if m.group(2) is not None else m.group(3))
        v = _VAR.match(text, m.end())
        line = _line_of(text, m.start())
        if v is None:
            continue          # a texture or sampler binding: not something a compute kernel here takes
        space, access, name, type_text = v.group(1) or "", v.group(2) or "", v.group(3), " ".join(v.group(4).split())
        if space not in ("storage", "uniform"):
            raise WGSLDeclError(f"{path}:{line}: binding {name!r} is var<{space}>; kernels take var<storage> "
                                "buffers and var<uniform> values")
        access = access or "read"
        bindings.append(Binding(group, binding, name, space, access, type_text, line))
    seen: dict[tuple[int, int], Binding] = {}
    for b in bindings:
        if b.key in seen:
            raise WGSLDeclError(f"{path}:{b.line}: {b.name!r} and {seen[b.key].name!r} (line {seen[b.key].line}) "
                                f"both use @group({b.group}) @binding({b.binding})")
        seen[b.key] = b
    constants = {m.group(1): int(m.group(2)) for m in
                 re.finditer(r"\bconst\s+([A-Za-z_]\w*)\s*(?::\s*[a-z0-9]+\s*)?=\s*(\d+)[ui]?\s*;", text)}
    functions: dict[str, tuple[int, int, int]] = {}          # name -> (attribute start, body start, end)
    for m in _FN.finditer(text):
        end = _body_end(text, m.end())
        functions[m.group(1)] = (m.start(), m.end(), end)
    names = {b.name for b in bindings}
    by_name = {b.name: b for b in bindings}
    uses = {}
    for fn, (_, start, end) in functions.items():
        idents = set(_IDENT.findall(text, start, end))
        uses[fn] = idents
    entries: dict[str, EntryPoint] = {}
    for fn, (start, _, _) in functions.items():
        prev_end = max((e for s, _, e in functions.values() if e <= start), default=0)
        attrs = text[prev_end:start]
        attrs = attrs[attrs.rfind(";") + 1:]
        if not _COMPUTE.search(attrs):
            continue
        wg = _WORKGROUP.search(attrs)
        size = _workgroup(wg.group(1), constants) if wg else None
        reached, todo = set(), [fn]
        while todo:
            f = todo.pop()
            if f in reached:
                continue
            reached.add(f)
            todo.extend(g for g in uses[f] if g in functions)
        used = set().union(*(uses[f] for f in reached)) & names
        params = tuple(sorted((by_name[n] for n in used), key=lambda b: b.key))
        entries[fn] = EntryPoint(fn, size, params, _line_of(text, start))
    return WGSLModule(tuple(sorted(bindings, key=lambda b: b.key)), entries)
