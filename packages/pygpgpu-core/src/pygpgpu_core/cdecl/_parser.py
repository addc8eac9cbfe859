"""Top-level declarations of a kernel file: kernels, structs/unions, typedefs, enums.

The parser walks the preprocessed token stream at file scope only. Function bodies and
initialisers are skipped by brace matching, so anything C/C++ allows inside them is fine.
Kernel signatures must parse: an unknown type or a construct the import hook cannot pass
from Python raises :class:`CDeclError` with the file and line.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from ._aggregates import AggregateParser
from ._common import (_ADDRESS_SPACES, _ATTRIBUTE_CALLS, _CONST_QUALIFIERS, _IGNORED_QUALIFIERS, _KERNEL_NOISE,
                      _OPAQUE_TYPES, CDeclError, closing, spelling, split_commas, strip_attributes)
from ._constexpr import NotConstant, evaluate
from ._languages import Language
from ._source import Token
from ._types import TYPE_WORDS, CType, Pointer, Struct, builtin_type

__all__ = ["CDeclError", "Param", "KernelDecl", "Declarations", "parse_declarations"]


@dataclass
class Param:
    name: str
    type: CType
    index: int
    text: str
    """The parameter as written (normalised spacing), e.g. ``__global const float* a``."""

    @property
    def access(self) -> str:
        """``"read"`` (const or __constant pointer: upload only), ``"readwrite"`` (other
        pointers: upload and read back), ``"local"`` (__local pointer) or ``"value"``."""
        t = self.type
        if not isinstance(t, Pointer):
            return "value"
        if t.address_space == "local":
            return "local"
        return "read" if t.const else "readwrite"


@dataclass
class KernelDecl:
    name: str
    params: "list[Param]"
    prototype: str
    file: str
    line: int


@dataclass
class Declarations:
    kernels: "dict[str, KernelDecl]" = field(default_factory=dict)
    structs: "dict[str, Struct]" = field(default_factory=dict)
    """Exported name (typedef name and/or tag) -> layout."""
    enum_constants: "dict[str, int]" = field(default_factory=dict)
    skipped: "dict[str, str]" = field(default_factory=dict)
    """Names seen but not exported, with the reason (shown when a user asks for them)."""
    broken: "dict[str, str]" = field(default_factory=dict)
    """Kernels whose signature could not be understood (an unknown type, a non-void return),
    with the reason: the file's other kernels still import."""
    errors: "list[CDeclError]" = field(default_factory=list)
    """The errors behind ``broken``, in file order (strict parsing raises the first)."""


class _Parser(AggregateParser):
    def __init__(self, tokens: "list[Token]", lang: Language, function_macros: "set[str]", constants: dict):
        self.toks = tokens
        self.lang = lang
        self.function_macros = function_macros
        self.constants = constants  # macro/enum values usable in array extents
        self.out = Declarations()
        self.tags: dict = {}  # "struct X"/"union X"/"enum X" -> Struct | Scalar | ("unsupported", reason)
        self.typedefs: dict = {}  # name -> CType | ("tag", key) | ("unsupported", reason)
        self.anon = 0
        self.pack = 0             # #pragma pack(N) in force: members aligned to at most N (0: none)
        self.pack_stack: "list[int]" = []

    # ---- driver -------------------------------------------------------------------------
    def run(self) -> Declarations:
        toks = self.toks
        scopes: list[str] = []
        i = 0
        n = len(toks)
        while i < n:
            t = toks[i]
            if t.kind == "pragma":
                self._pragma(t)
                i += 1
                continue
            if t.text == "}":
                if scopes:
                    scopes.pop()
                i += 1
                continue
            if t.text == ";":
                i += 1
                continue
            if t.text == "extern" and i + 2 < n and toks[i + 1].text == '"C"' and toks[i + 2].text == "{":
                scopes.append("C")
                i += 3
                continue
            if t.text == "namespace":
                j = i
                while j < n and toks[j].text not in ("{", ";"):
                    j += 1
                if j < n and toks[j].text == "{":
                    scopes.append("ns")
                i = j + 1
                continue
            j, saw_eq = i, False
            while j < n and toks[j].text not in (";", "{", "}"):
                if toks[j].text in ("(", "["):
                    j = closing(toks, j)
                elif toks[j].text == "=":
                    saw_eq = True
                j += 1
            head = toks[i:j]
            if j >= n or toks[j].text == "}":
                i = j
                continue
            if toks[j].text == ";":
                self._declaration(head, scopes)
                i = j + 1
                continue
            # "{": initialiser, aggregate definition, function body or something to skip
            end = closing(toks, j)
            if saw_eq:
                i = self._skip_to_semicolon(end + 1)
            elif self._aggregate_keyword(head) is not None:
                i = self._aggregate_definition(head, j, end)
            elif any(x.text == "(" for x in head):
                self._function(head, scopes)
                i = end + 1
            else:
                i = self._skip_to_semicolon(end + 1)
        return self.out

    def _pragma(self, t: Token) -> None:
        """Apply a ``#pragma pack`` token (see ``_preprocess``) to the packing in force."""
        parts = t.text.split(":")
        if parts[1] == "push":
            self.pack_stack.append(self.pack)
        elif parts[1] == "pop":
            if not self.pack_stack:
                raise CDeclError("#pragma pack(pop) without a matching #pragma pack(push, ...)", t.file, t.line)
            self.pack = self.pack_stack.pop()
            return
        elif parts[1] == "reset":
            self.pack = 0
            return
        if len(parts) > 2:
            self.pack = int(parts[2])

    def _skip_to_semicolon(self, i: int) -> int:
        while i < len(self.toks) and self.toks[i].text != ";":
            if self.toks[i].text in ("{", "(", "["):
                i = closing(self.toks, i)
            i += 1
        return i + 1

    # ---- kernels ------------------------------------------------------------------------
    def _is_kernel(self, head: "list[Token]") -> bool:
        # only the specifiers count: "void blur(__global const float* kernel)" is not a kernel
        words = self.lang.kernel_words
        if any(t.text in words and n.text == "(" for t, n in zip(head, head[1:])):
            return True           # __kernel_exec(64, float4) void k(...): a kernel word called like an attribute
        toks, _ = strip_attributes(head, self.function_macros)
        cut = next((k for k, t in enumerate(toks) if t.text == "("), len(toks))
        return any(t.text in words for t in toks[:cut])

    def _function(self, head: "list[Token]", scopes: "list[str]") -> None:
        if not self._is_kernel(head):
            return
        if head[0].text == "template":
            # headers full of template kernels (CUB-style) must still import: refuse on use
            name = self._template_name(head)
            if name:
                self.out.skipped[name] = (
                    f"{head[0].file}:{head[0].line}: template kernels are not supported by the import hook; add an "
                    "extern \"C\" __global__ wrapper that calls the instantiation you need")
            return
        if self.lang.kernels_need_extern_c:
            extern_c = "C" in scopes or any(
                a.text == "extern" and b.text == '"C"' for a, b in zip(head, head[1:]))
            if not extern_c:
                name = self._function_name(head)
                if name:
                    self.out.skipped[name] = (
                        f"{head[0].file}:{head[0].line}: kernel {name!r} is __global__ without extern \"C\" "
                        "(its symbol name is C++-mangled); declare it extern \"C\" __global__ to import it")
                return
        try:
            kernel = self._kernel_signature(head)
        except CDeclError as exc:
            name = self._function_name(head)
            if not name:
                raise
            self.out.kernels.pop(name, None)
            reason = f"{exc.file}:{exc.line}: {exc.message}"
            if exc.unsupported:   # understood, but not callable from Python (images, T**)
                self.out.skipped[name] = reason
            else:                 # not understood: only this kernel is lost
                self.out.broken[name] = reason
                self.out.errors.append(exc)
            return
        self.out.skipped.pop(kernel.name, None)
        self.out.broken.pop(kernel.name, None)
        self.out.kernels[kernel.name] = kernel

    def _template_name(self, head: "list[Token]") -> "str | None":
        depth = 0
        for k, t in enumerate(head):  # skip "template <...>" (which may hold parentheses)
            if t.text == "<":
                depth += 1
            elif t.text == ">":
                depth -= 1
                if depth == 0:
                    return self._function_name(head[k + 1:])
        return None

    def _function_name(self, head: "list[Token]") -> "str | None":
        for a, b in zip(head, head[1:]):
            if b.text == "(" and a.kind == "id" and a.text not in _ATTRIBUTE_CALLS:
                return a.text
        return None

    def _kernel_signature(self, head: "list[Token]") -> KernelDecl:
        where = head[0]
        toks, _ = strip_attributes(head, self.function_macros)
        open_at = next((k for k, t in enumerate(toks) if t.text == "("), None)
        if open_at is None or open_at == 0 or toks[open_at - 1].kind != "id":
            raise CDeclError("cannot find the kernel's name and parameter list", where.file, where.line)
        name_tok = toks[open_at - 1]
        close_at = closing(toks, open_at)
        ret = [t for t in toks[:open_at - 1] if t.text not in _KERNEL_NOISE and t.text != '"C"']
        if [t.text for t in ret] != ["void"]:
            got = " ".join(t.text for t in ret) or "nothing"
            raise CDeclError(f"kernel {name_tok.text!r} must return void (found {got!r})", name_tok.file, name_tok.line)
        if close_at != len(toks) - 1:
            extra = toks[close_at + 1]
            raise CDeclError(f"unexpected {extra.text!r} after the parameter list of kernel {name_tok.text!r}",
                             extra.file, extra.line)
        groups = split_commas(toks[open_at + 1:close_at])
        params: list[Param] = []
        if not (len(groups) == 1 and [t.text for t in groups[0]] in ([], ["void"])):
            for index, group in enumerate(groups):
                if not group:
                    raise CDeclError(f"empty parameter {index + 1} in kernel {name_tok.text!r}",
                                     name_tok.file, name_tok.line)
                params.append(self._param(group, index, name_tok.text))
        proto_head = [t for t in head if t.text not in ("extern", '"C"')]
        proto_head, _ = strip_attributes(proto_head, self.function_macros)
        prototype = spelling(proto_head[:proto_head.index(name_tok)]) + " " + name_tok.text + "(" + \
            ", ".join(p.text for p in params) + ")"
        return KernelDecl(name_tok.text, params, prototype, name_tok.file, name_tok.line)

    def _param(self, group: "list[Token]", index: int, kernel: str) -> Param:
        toks, _ = strip_attributes(group, self.function_macros)
        spec = self._specifier(toks, f"parameter {index + 1} of kernel {kernel!r}", allow_array=True)
        base, stars, name, addr, const, dims = spec
        first = toks[0] if toks else group[0]
        if stars > 1:
            raise CDeclError(f"parameter {name or index + 1!r} of kernel {kernel!r}: pointer-to-pointer parameters "
                             "cannot be passed from Python", first.file, first.line, unsupported=True)
        if stars or dims:
            if addr == "private":
                raise CDeclError(f"parameter {name!r} of kernel {kernel!r}: a __private pointer cannot be a kernel "
                                 "argument; use __global", first.file, first.line)
            space = addr or "global"  # CUDA/HIP pointers; OpenCL 2.0 generic pointers behave the same here
            ctype: CType = Pointer(base, space, const or space == "constant")
        else:
            if base is None:
                raise CDeclError(f"parameter {index + 1} of kernel {kernel!r} has type void", first.file, first.line)
            if addr in ("global", "local", "constant"):
                raise CDeclError(f"parameter {name!r} of kernel {kernel!r}: an address-space qualifier needs a "
                                 "pointer", first.file, first.line)
            ctype = base
        return Param(name or f"arg{index}", ctype, index, spelling(toks))

    def _specifier(self, toks: "list[Token]", what: str, allow_array: bool):
        """(base type | None for void, pointer depth, name, address space, pointee const, dims)."""
        words: list[str] = []
        named: "CType | None" = None
        have_named = False
        stars = 0
        name = None
        addr = None
        const = False
        dims: list[int] = []
        i = 0
        while i < len(toks):
            t = toks[i]
            x = t.text
            if x in _ADDRESS_SPACES:
                addr = _ADDRESS_SPACES[x]
            elif x in _CONST_QUALIFIERS:
                if stars == 0:
                    const = True
            elif x in _IGNORED_QUALIFIERS:
                pass
            elif x in ("struct", "union", "enum"):
                if i + 1 >= len(toks) or toks[i + 1].kind != "id":
                    raise CDeclError(f"{what}: expected a name after {x!r}", t.file, t.line)
                named = self._resolve_tag(x, toks[i + 1], what)
                have_named = True
                i += 1
            elif x in TYPE_WORDS and not have_named and name is None:
                words.append(x)
            elif x == "*":
                stars += 1
            elif x == "&":
                raise CDeclError(f"{what}: C++ references cannot be passed from Python; use a pointer", t.file, t.line,
                                 unsupported=True)
            elif x == "[":
                end = closing(toks, i)
                inner = toks[i + 1:end]
                if inner:
                    try:
                        dims.append(int(evaluate(inner, self._lookup, self.lang)))
                    except NotConstant:
                        raise CDeclError(f"{what}: array extent {spelling(inner)!r} is not a constant",
                                         t.file, t.line) from None
                else:
                    dims.append(0)
                i = end
            elif t.kind == "id":
                if words or have_named:
                    if name is not None:
                        raise CDeclError(f"{what}: unexpected {x!r}", t.file, t.line)
                    name = x
                else:
                    named = self._resolve_name(t, what)
                    have_named = True
            else:
                raise CDeclError(f"{what}: unexpected {x!r}", t.file, t.line)
            i += 1
        base: CType | None
        if words:
            if words == ["void"]:
                base = None
            else:
                if self.lang.long_long_reserved and words.count("long") > 1:
                    raise _opencl_long_long(words, toks, what)
                base = builtin_type(words, self.lang)
                if base is None:
                    t = toks[0]
                    raise CDeclError(f"{what}: unknown type {' '.join(words)!r}", t.file, t.line)
        elif have_named:
            base = named
        else:
            t = toks[0] if toks else Token("", "", 0)
            raise CDeclError(f"{what}: no type found", t.file, t.line)
        if dims and not allow_array and 0 in dims:
            raise CDeclError(f"{what}: flexible array members are not supported", toks[0].file, toks[0].line)
        return base, stars, name, addr, const, dims

    def _lookup(self, name: str):
        if name in self.constants:
            return self.constants[name]
        raise NotConstant(name)

    def _resolve_tag(self, keyword: str, tok: Token, what: str) -> CType:
        entry = self.tags.get(f"{keyword} {tok.text}")
        if entry is None:
            raise CDeclError(f"{what}: {keyword} {tok.text} is not defined in this file or its includes",
                             tok.file, tok.line)
        if isinstance(entry, tuple):
            raise CDeclError(f"{what}: {keyword} {tok.text} cannot be passed: {entry[1]}", tok.file, tok.line)
        return entry

    def _resolve_name(self, tok: Token, what: str) -> CType:
        builtin = builtin_type([tok.text], self.lang)
        if builtin is not None:
            return builtin
        entry = self.typedefs.get(tok.text)
        if entry is None and self.lang.tags_are_type_names:     # C++: struct S names type S
            entry = self.tags.get(f"struct {tok.text}") or self.tags.get(f"union {tok.text}") or \
                self.tags.get(f"enum {tok.text}")
        if isinstance(entry, tuple) and entry[0] == "tag":
            entry = self.tags.get(entry[1], ("unsupported", f"{entry[1]} is declared but never defined"))
        if entry is None and tok.text in _OPAQUE_TYPES:
            raise CDeclError(f"{what}: {tok.text} arguments are not supported by the import hook", tok.file, tok.line,
                             unsupported=True)
        if entry is None:
            raise CDeclError(f"{what}: unknown type {tok.text!r}", tok.file, tok.line)
        if isinstance(entry, tuple):
            raise CDeclError(f"{what}: type {tok.text!r} cannot be passed: {entry[1]}", tok.file, tok.line)
        return entry

    # ---- typedefs, enums and plain declarations --------------------------------------------


def parse_declarations(tokens: "list[Token]", lang: Language, function_macros: "set[str]",
                       constants: "dict[str, int | float]") -> Declarations:
    """Kernels, structs and enums declared at file scope in ``tokens`` (already macro-expanded)."""
    return _Parser(tokens, lang, function_macros, constants).run()


def _opencl_long_long(words: "list[str]", toks: "list[Token]", what: str) -> CDeclError:
    """``long long`` in OpenCL C is not C's 64-bit integer: the spec reserves it for a 128-bit
    type, and drivers disagree (PoCL takes 8 bytes, NVIDIA rejects an 8-byte argument), so the
    argument layout cannot be known. OpenCL C's ``long``/``ulong`` are 64 bits everywhere."""
    t = next(tok for tok in toks if tok.text == "long")
    fix = "ulong" if "unsigned" in words else "long"
    return CDeclError(f"{what}: {' '.join(words)!r} is not a 64-bit integer in OpenCL C (the spec reserves "
                      f"'long long' for 128 bits and drivers disagree on its size); write {fix!r}, which is "
                      "64 bits in OpenCL C", t.file, t.line)
