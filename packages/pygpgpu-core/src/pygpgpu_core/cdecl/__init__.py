"""C declaration parser for handwritten OpenCL / CUDA / HIP kernel files.

``parse_file(path, dialect)`` returns a :class:`ParsedFile`: every kernel's parameters
(with C types and access: read-only / read-write / local / by value), every struct with
the device layout of the file's language (``dialect``: ``"opencl"``, ``"cuda"`` or ``"hip"``,
described by a :class:`Language` in ``LANGUAGES``), integer (and float) ``#define``/enum constants, and the local
headers reached through ``#include "x.h"`` (for cache invalidation). ``compile_source``
gives the text to hand the compiler: the file unchanged except for inlined local headers.

Only file-scope declarations are interpreted; function bodies are skipped. Preprocessor
lines other than ``#include "..."``, ``#define``/``#undef`` and ``#if 0`` are left to the
compiler.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable

from ._constexpr import NotConstant, evaluate
from ._languages import LANGUAGES, Language, language, register_language
from ._options import file_options, normalise_options, option_defines
from ._parser import CDeclError, KernelDecl, Param, parse_declarations
from ._preprocess import expand_macros, preprocess
from ._source import expand_includes, line_marker, strip_comments
from ._types import CType, Field, Pointer, Scalar, Struct, Vector, builtin_type, c_name, scalar_type, \
    vector_type

__all__ = [
    "CDeclError",
    "ParsedFile",
    "KernelDecl",
    "Param",
    "Scalar",
    "Vector",
    "Struct",
    "Field",
    "Pointer",
    "CType",
    "LANGUAGES",
    "Language",
    "register_language",
    "language",
    "parse_file",
    "parse_source",
    "compile_source",
    "builtin_type",
    "scalar_type",
    "vector_type",
    "c_name",
    "strip_comments",
    "file_options",
    "normalise_options",
    "option_defines",
]

FORMAT = 2
"""Version of the JSON form of ParsedFile (bump when it changes)."""


@dataclass
class ParsedFile:
    path: str
    dialect: str
    kernels: "dict[str, KernelDecl]" = field(default_factory=dict)
    structs: "dict[str, Struct]" = field(default_factory=dict)
    constants: "dict[str, int | float]" = field(default_factory=dict)
    includes: "list[str]" = field(default_factory=list)
    skipped: "dict[str, str]" = field(default_factory=dict)
    broken: "dict[str, str]" = field(default_factory=dict)
    """Kernels whose declaration could not be understood -> ``file:line: reason``."""
    options: "list[str]" = field(default_factory=list)
    """The build options: the file's own (``// pygpgpu: options ...``), then the given ones."""

    # ---- JSON (the metadata cache stores this; no pickle) ---------------------------------
    def to_json(self) -> str:
        struct_ids: dict[int, int] = {}
        structs: list[dict] = []

        def enc(t):
            if t is None:
                return None
            if isinstance(t, Scalar):
                return {"k": "s", "n": t.name}
            if isinstance(t, Vector):
                return {"k": "v", "n": t.base.name, "w": t.n}
            if isinstance(t, Pointer):
                return {"k": "p", "to": enc(t.pointee), "as": t.address_space, "c": t.const}
            if id(t) not in struct_ids:
                fields = [{"n": f.name, "t": enc(f.type), "o": f.offset, "d": list(f.dims)} for f in t.fields]
                struct_ids[id(t)] = len(structs)
                structs.append({"name": t.name, "tag": t.tag, "union": t.union, "size": t.size, "align": t.align,
                                "anon": t.anonymous, "fields": fields})
            return {"k": "t", "i": struct_ids[id(t)]}

        doc = {
            "format": FORMAT,
            "path": self.path,
            "dialect": self.dialect,
            "exports": [[name, enc(s)["i"]] for name, s in self.structs.items()],
            "kernels": [
                {"name": k.name, "prototype": k.prototype, "file": k.file, "line": k.line,
                 "params": [{"name": p.name, "type": enc(p.type), "text": p.text} for p in k.params]}
                for k in self.kernels.values()
            ],
            "constants": self.constants,
            "includes": self.includes,
            "skipped": self.skipped,
            "broken": self.broken,
            "options": self.options,
        }
        doc["structs"] = structs  # after every enc() call
        return json.dumps(doc, indent=1, sort_keys=True)

    @classmethod
    def from_json(cls, text: str) -> "ParsedFile":
        doc = json.loads(text)
        if doc.get("format") != FORMAT:
            raise ValueError("metadata format changed")
        dialect = doc["dialect"]
        built: dict[int, Struct] = {}

        def dec(t):
            if t is None:
                return None
            k = t["k"]
            if k == "s":
                return scalar_type(t["n"], dialect)
            if k == "v":
                return vector_type(t["n"], t["w"], dialect)
            if k == "p":
                return Pointer(dec(t["to"]), t["as"], t["c"])
            i = t["i"]
            if i not in built:
                s = doc["structs"][i]
                struct = Struct(s["name"], [], s["size"], s["align"], s["union"], s["tag"], list(s["anon"]))
                built[i] = struct
                struct.fields = [Field(f["n"], dec(f["t"]), f["o"], tuple(f["d"])) for f in s["fields"]]
            return built[i]

        structs = {name: dec({"k": "t", "i": i}) for name, i in doc["exports"]}
        kernels = {}
        for k in doc["kernels"]:
            params = [Param(p["name"], dec(p["type"]), i, p["text"]) for i, p in enumerate(k["params"])]
            kernels[k["name"]] = KernelDecl(k["name"], params, k["prototype"], k["file"], k["line"])
        return cls(
            path=doc["path"],
            dialect=dialect,
            kernels=kernels,
            structs=structs,
            constants=dict(doc["constants"]),
            includes=list(doc["includes"]),
            skipped=dict(doc["skipped"]),
            broken=dict(doc["broken"]),
            options=list(doc["options"]),
        )


def _constants(pre, dialect: Language) -> "dict[str, int | float]":
    values: dict[str, int | float] = {}
    failed: set[str] = set()

    def lookup(name: str, active=frozenset()):
        if name in values:
            return values[name]
        macro = pre.macros.get(name)
        if macro is None or macro.function_like or name in failed or name in active:
            raise NotConstant(name)
        try:
            value = evaluate(macro.body, lambda n: lookup(n, active | {name}), dialect)
        except (NotConstant, RecursionError, OverflowError, ValueError):
            failed.add(name)
            raise NotConstant(name) from None
        values[name] = value
        return value

    for name in pre.main_defines:
        try:
            lookup(name)
        except NotConstant:
            pass
    return values


def parse_source(text: str, dialect: "str | Language", path: str = "<string>", *,
                 options: "str | Iterable[str] | None" = None, partial: bool = False) -> ParsedFile:
    """Parse kernel source ``text`` in language ``dialect`` (a name of ``LANGUAGES`` or a
    :class:`Language`) as if it were the file ``path`` (includes resolve next to it).

    ``options``: build options given for the file; with the file's own (``// pygpgpu: options``)
    they define macros for ``#if`` (``-DNAME=value``, ``-UNAME``) and are kept in
    ``ParsedFile.options``. A kernel whose signature cannot be understood raises CDeclError, or
    with ``partial=True`` is listed in ``ParsedFile.broken`` while the other kernels parse."""
    lang = language(dialect)          # an unknown name: ValueError listing the languages
    all_options = [*file_options(text), *normalise_options(options)]
    pre = preprocess(path, text, lang, option_defines(all_options))
    constants = _constants(pre, lang)
    function_macros = {name for name, m in pre.macros.items() if m.function_like}
    tokens = expand_macros(pre.tokens, pre.macros)
    table = dict(constants)
    decls = parse_declarations(tokens, lang, function_macros, table)
    if decls.errors and not partial:
        raise decls.errors[0]
    exported = {name: value for name, value in constants.items() if not name.startswith("__")}
    for name, value in decls.enum_constants.items():
        exported.setdefault(name, value)
    return ParsedFile(
        path=str(Path(path).resolve()) if path != "<string>" else path,
        dialect=lang.name,
        kernels=decls.kernels,
        structs=decls.structs,
        constants=exported,
        includes=pre.includes,
        skipped=decls.skipped,
        broken=decls.broken,
        options=all_options,
    )


def parse_file(path: "str | Path", dialect: "str | Language", *, options: "str | Iterable[str] | None" = None,
               partial: bool = False) -> ParsedFile:
    """Parse a kernel file and its local headers (``options``, ``partial``: see
    :func:`parse_source`). Raises CDeclError (with file:line) or OSError."""
    path = Path(path).resolve()
    return parse_source(path.read_text(encoding="utf-8", errors="replace"), dialect, str(path), options=options,
                        partial=partial)


def compile_source(path: "str | Path") -> str:
    """The file's text with local ``#include "x.h"`` headers inlined between ``#line`` markers,
    after a first ``#line 1 "<file>"``: OpenCL builds from a string, which PoCL writes to a
    temporary file of its own, and its messages would name that file instead of yours."""
    path = Path(path).resolve()
    return line_marker(1, str(path)) + "\n" + expand_includes(str(path), path.read_text(encoding="utf-8", errors="replace"))
