"""Top-level declarations of a kernel file: kernels, structs/unions, typedefs, enums.

The parser walks the preprocessed token stream at file scope only. Function bodies and
initialisers are skipped by brace matching, so anything C/C++ allows inside them is fine.
Kernel signatures must parse: an unknown type or a construct the import hook cannot pass
from Python raises :class:`CDeclError` with the file and line.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from ._constexpr import NotConstant, evaluate
from ._source import Token
from ._types import TYPE_WORDS, CType, Field, Pointer, Struct, builtin_type, scalar_type

__all__ = ["CDeclError", "Param", "KernelDecl", "Declarations", "parse_declarations"]


class CDeclError(ValueError):
    """A declaration the parser cannot understand; ``file`` and ``line`` say where."""

    def __init__(self, message: str, file: str = "", line: int = 0, unsupported: bool = False):
        self.message = message
        self.file = file
        self.line = line
        self.unsupported = unsupported
        """The declaration was understood but cannot be called from Python (images, T**):
        the kernel is left out of the module instead of failing the import."""
        where = f"{file}:{line}: " if file else ""
        super().__init__(where + message)


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


_ADDRESS_SPACES = {
    "__global": "global", "global": "global", "__local": "local", "local": "local",
    "__constant": "constant", "constant": "constant", "__private": "private", "private": "private",
    "__generic": "global", "generic": "global",
}
_IGNORED_QUALIFIERS = frozenset({"volatile", "restrict", "__restrict", "__restrict__", "register", "__device__",
                                 "__shared__", "__managed__", "__constant__", "static", "mutable", "__unused"})
_IMAGE_QUALIFIERS = frozenset({"__read_only", "read_only", "__write_only", "write_only", "__read_write", "read_write"})
_ATTRIBUTE_CALLS = frozenset({"__attribute__", "__launch_bounds__", "__declspec", "__align__", "alignas",
                              "_Alignas", "__cluster_dims__", "__maxnreg__"})
_OPAQUE_TYPES = frozenset({"image1d_t", "image2d_t", "image3d_t", "image1d_array_t", "image2d_array_t",
                           "image1d_buffer_t", "image2d_depth_t", "image2d_array_depth_t", "sampler_t", "event_t",
                           "queue_t", "clk_event_t", "reserve_id_t", "pipe", "cudaTextureObject_t",
                           "cudaSurfaceObject_t", "hipTextureObject_t", "hipSurfaceObject_t"})
_KERNEL_NOISE = frozenset({"__kernel", "kernel", "__global__", "extern", "static", "inline", "__inline__",
                           "__inline", "__forceinline__", "__noinline__", "__host__", "__device__"})


def _closing(tokens: "list[Token]", i: int) -> int:
    """Index of the bracket closing the one at ``tokens[i]``."""
    opening = tokens[i].text
    closing = {"(": ")", "[": "]", "{": "}"}[opening]
    depth = 0
    for j in range(i, len(tokens)):
        t = tokens[j].text
        if t == opening:
            depth += 1
        elif t == closing:
            depth -= 1
            if depth == 0:
                return j
    raise CDeclError(f"unbalanced {opening!r}", tokens[i].file, tokens[i].line)


def _strip_attributes(tokens: "list[Token]", function_macros: "set[str]") -> "tuple[list[Token], dict]":
    """Remove ``__attribute__((...))``, ``__launch_bounds__(...)``, ``[[...]]`` and calls of
    function-like macros; return the rest and the alignment facts found (aligned/packed)."""
    out = []
    facts: dict = {}
    i = 0
    while i < len(tokens):
        t = tokens[i]
        nxt = tokens[i + 1].text if i + 1 < len(tokens) else None
        if (t.text in _ATTRIBUTE_CALLS or (t.kind == "id" and t.text in function_macros)) and nxt == "(":
            end = _closing(tokens, i + 1)
            _alignment_facts(t.text, tokens[i + 2:end], facts)
            i = end + 1
            continue
        if t.text == "[" and nxt == "[":
            i = _closing(tokens, i) + 1
            continue
        out.append(t)
        i += 1
    return out, facts


def _alignment_facts(name: str, inner: "list[Token]", facts: dict) -> None:
    texts = [t.text for t in inner]
    if name in ("__align__", "alignas", "_Alignas"):
        try:
            facts["aligned"] = max(facts.get("aligned", 1), int(evaluate(inner, _no_lookup)))
        except NotConstant:
            pass
        return
    for k, word in enumerate(texts):
        if word in ("packed", "__packed__"):
            facts["packed"] = True
        elif word in ("aligned", "__aligned__", "align"):
            if k + 1 < len(texts) and texts[k + 1] == "(":
                end = k + 1 + _closing(inner[k + 1:], 0)
                try:
                    n = int(evaluate(inner[k + 2:end], _no_lookup))
                except NotConstant:
                    n = 16
            else:
                n = 16  # GCC's "largest useful alignment"; rare in kernel files
            facts["aligned"] = max(facts.get("aligned", 1), n)


def _no_lookup(name: str):
    raise NotConstant(name)


def _spelling(tokens: "list[Token]") -> str:
    text = ""
    for t in tokens:
        if t.text in (",", ")", "]", "*") or text.endswith(("(", "[")) or not text:
            text += t.text
        else:
            text += " " + t.text
    return text.replace("*", "* ").replace("*  ", "* ").replace("* )", "*)").replace("* ,", "*,").strip()


class _Parser:
    def __init__(self, tokens: "list[Token]", dialect: str, function_macros: "set[str]", constants: dict):
        self.toks = tokens
        self.dialect = dialect
        self.function_macros = function_macros
        self.constants = constants  # macro/enum values usable in array extents
        self.out = Declarations()
        self.tags: dict = {}  # "struct X"/"union X"/"enum X" -> Struct | Scalar | ("unsupported", reason)
        self.typedefs: dict = {}  # name -> CType | ("tag", key) | ("unsupported", reason)
        self.anon = 0

    # ---- driver -------------------------------------------------------------------------
    def run(self) -> Declarations:
        toks = self.toks
        scopes: list[str] = []
        i = 0
        n = len(toks)
        while i < n:
            t = toks[i]
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
                    j = _closing(toks, j)
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
            end = _closing(toks, j)
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

    def _skip_to_semicolon(self, i: int) -> int:
        while i < len(self.toks) and self.toks[i].text != ";":
            if self.toks[i].text in ("{", "(", "["):
                i = _closing(self.toks, i)
            i += 1
        return i + 1

    # ---- kernels ------------------------------------------------------------------------
    def _is_kernel(self, head: "list[Token]") -> bool:
        # only the specifiers count: "void blur(__global const float* kernel)" is not a kernel
        toks, _ = _strip_attributes(head, self.function_macros)
        cut = next((k for k, t in enumerate(toks) if t.text == "("), len(toks))
        words = {t.text for t in toks[:cut]}
        if self.dialect == "opencl":
            return "__kernel" in words or "kernel" in words
        return "__global__" in words

    def _function(self, head: "list[Token]", scopes: "list[str]") -> None:
        if not self._is_kernel(head):
            return
        if head[0].text == "template":
            raise CDeclError(
                "template kernels are not supported by the import hook; add an extern \"C\" __global__ "
                "wrapper that calls one instantiation", head[0].file, head[0].line)
        if self.dialect != "opencl":
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
            if not exc.unsupported or not name:
                raise
            self.out.skipped[name] = f"{exc.file}:{exc.line}: {exc.message}"
            self.out.kernels.pop(name, None)
            return
        self.out.skipped.pop(kernel.name, None)
        self.out.kernels[kernel.name] = kernel

    def _function_name(self, head: "list[Token]") -> "str | None":
        for a, b in zip(head, head[1:]):
            if b.text == "(" and a.kind == "id" and a.text not in _ATTRIBUTE_CALLS:
                return a.text
        return None

    def _kernel_signature(self, head: "list[Token]") -> KernelDecl:
        where = head[0]
        toks, _ = _strip_attributes(head, self.function_macros)
        open_at = next((k for k, t in enumerate(toks) if t.text == "("), None)
        if open_at is None or open_at == 0 or toks[open_at - 1].kind != "id":
            raise CDeclError("cannot find the kernel's name and parameter list", where.file, where.line)
        name_tok = toks[open_at - 1]
        close_at = _closing(toks, open_at)
        ret = [t for t in toks[:open_at - 1] if t.text not in _KERNEL_NOISE and t.text != '"C"']
        if [t.text for t in ret] != ["void"]:
            got = " ".join(t.text for t in ret) or "nothing"
            raise CDeclError(f"kernel {name_tok.text!r} must return void (found {got!r})", name_tok.file, name_tok.line)
        if close_at != len(toks) - 1:
            extra = toks[close_at + 1]
            raise CDeclError(f"unexpected {extra.text!r} after the parameter list of kernel {name_tok.text!r}",
                             extra.file, extra.line)
        groups = self._split_commas(toks[open_at + 1:close_at])
        params: list[Param] = []
        if not (len(groups) == 1 and [t.text for t in groups[0]] in ([], ["void"])):
            for index, group in enumerate(groups):
                if not group:
                    raise CDeclError(f"empty parameter {index + 1} in kernel {name_tok.text!r}",
                                     name_tok.file, name_tok.line)
                params.append(self._param(group, index, name_tok.text))
        proto_head = [t for t in head if t.text not in ("extern", '"C"')]
        proto_head, _ = _strip_attributes(proto_head, self.function_macros)
        prototype = _spelling(proto_head[:proto_head.index(name_tok)]) + " " + name_tok.text + "(" + \
            ", ".join(p.text for p in params) + ")"
        return KernelDecl(name_tok.text, params, prototype, name_tok.file, name_tok.line)

    @staticmethod
    def _split_commas(tokens: "list[Token]") -> "list[list[Token]]":
        groups: list[list[Token]] = [[]]
        depth = 0
        for t in tokens:
            if t.text in ("(", "[", "<"):
                depth += 1
            elif t.text in (")", "]", ">"):
                depth -= 1
            if t.text == "," and depth == 0:
                groups.append([])
            else:
                groups[-1].append(t)
        return groups

    def _param(self, group: "list[Token]", index: int, kernel: str) -> Param:
        toks, _ = _strip_attributes(group, self.function_macros)
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
        return Param(name or f"arg{index}", ctype, index, _spelling(toks))

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
            elif x == "const":
                if stars == 0:
                    const = True
            elif x in _IGNORED_QUALIFIERS:
                pass
            elif x in _IMAGE_QUALIFIERS:
                raise CDeclError(f"{what}: image/pipe arguments are not supported by the import hook", t.file, t.line,
                                 unsupported=True)
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
                end = _closing(toks, i)
                inner = toks[i + 1:end]
                if inner:
                    try:
                        dims.append(int(evaluate(inner, self._lookup, self.dialect)))
                    except NotConstant:
                        raise CDeclError(f"{what}: array extent {_spelling(inner)!r} is not a constant",
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
        if words:
            if words == ["void"]:
                base = None
            else:
                base = builtin_type(words, self.dialect)
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
        builtin = builtin_type([tok.text], self.dialect)
        if builtin is not None:
            return builtin
        entry = self.typedefs.get(tok.text)
        if entry is None and self.dialect != "opencl":
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
    def _declaration(self, head: "list[Token]", scopes) -> None:
        if not head:
            return
        if self._is_kernel(head) and any(t.text == "(" for t in head) and head[0].text != "typedef":
            self._function(head, scopes)  # a kernel prototype
            return
        if head[0].text != "typedef":
            return
        toks, _ = _strip_attributes(head[1:], self.function_macros)
        if any(t.text == "(" for t in toks) or not toks:
            return  # function-pointer typedefs are of no use from Python
        alias = toks[-1]
        if alias.kind != "id":
            return
        spec = toks[:-1]
        if len(spec) == 2 and spec[0].text in ("struct", "union", "enum"):
            key = f"{spec[0].text} {spec[1].text}"
            target = self.tags.get(key)
            if isinstance(target, Struct) and not target.name:
                target.name = alias.text
            self.typedefs[alias.text] = target if target is not None else ("tag", key)
            self._export(alias.text, key)
            return
        try:
            base, stars, _, _, _, dims = self._specifier(spec + [alias], f"typedef {alias.text}", allow_array=False)
        except CDeclError as exc:
            self.typedefs[alias.text] = ("unsupported", exc.message)
            return
        if stars or dims or base is None:
            self.typedefs[alias.text] = ("unsupported", "pointer, array and void typedefs cannot be passed by value")
            return
        self.typedefs[alias.text] = base
        if isinstance(base, Struct):
            self.out.structs.setdefault(alias.text, base)

    def _export(self, name: str, key: str) -> None:
        target = self.tags.get(key)
        if isinstance(target, Struct):
            self.out.structs[name] = target
        elif isinstance(target, tuple):
            self.out.skipped[name] = target[1]

    # ---- struct / union / enum definitions ------------------------------------------------
    def _aggregate_keyword(self, head: "list[Token]") -> "str | None":
        """``struct``/``union``/``enum`` when ``head {`` opens a type definition; ``class`` for C++
        classes, templates and derived structs (skipped); None otherwise (functions)."""
        toks, _ = _strip_attributes(head, self.function_macros)
        texts = [t.text for t in toks]
        if "(" in texts:
            return None
        if texts and texts[0] == "template":
            return "class"
        for k, x in enumerate(texts):
            if x in ("struct", "union", "enum", "class"):
                return "class" if x == "class" or ":" in texts[k + 1:] else x
        return None

    def _aggregate_definition(self, head: "list[Token]", open_at: int, close_at: int) -> int:
        toks, facts = _strip_attributes(head, self.function_macros)
        keyword = self._aggregate_keyword(head) or "struct"
        if keyword == "class":
            return self._skip_to_semicolon(close_at + 1)
        kw_at = next(k for k, t in enumerate(toks) if t.text == keyword)
        tag_tok = toks[kw_at + 1] if kw_at + 1 < len(toks) and toks[kw_at + 1].kind == "id" else None
        is_typedef = toks[0].text == "typedef"
        body = self.toks[open_at + 1:close_at]
        # declarators after "}" up to ";"
        end = self._skip_to_semicolon(close_at + 1)
        tail, tail_facts = _strip_attributes(self.toks[close_at + 1:end - 1], self.function_macros)
        for fact, value in tail_facts.items():  # "} __attribute__((aligned(16))) Name;"
            facts[fact] = max(value, facts.get(fact, 0)) if fact == "aligned" else value
        if keyword == "enum":
            self._enum(body, tag_tok, is_typedef, tail)
            return end
        where = tag_tok or head[0]
        tag = tag_tok.text if tag_tok else ""
        try:
            struct = self._layout(keyword, tag, body, facts, where)
        except CDeclError as exc:
            reason = f"{exc.file}:{exc.line}: {exc.message}"
            if tag:
                self.tags[f"{keyword} {tag}"] = ("unsupported", reason)
                self.out.skipped[tag] = reason
            if is_typedef:
                for name in self._declarator_names(tail):
                    self.typedefs[name] = ("unsupported", reason)
                    self.out.skipped[name] = reason
            return end
        if tag:
            key = f"{keyword} {tag}"
            self.tags[key] = struct
            self.out.structs[tag] = struct
            for alias, target in list(self.typedefs.items()):  # "typedef struct X Y;" seen before X's body
                if target == ("tag", key):
                    self.typedefs[alias] = struct
                    self.out.structs[alias] = struct
                    if struct.name == tag:
                        struct.name = alias
        if is_typedef:
            for name in self._declarator_names(tail):
                if not struct.name or struct.name == tag:
                    struct.name = name
                self.typedefs[name] = struct
                self.out.structs[name] = struct
        return end

    @staticmethod
    def _declarator_names(tail: "list[Token]") -> "list[str]":
        names = []
        for group in _Parser._split_commas(tail):
            if len(group) == 1 and group[0].kind == "id":  # skip "*PName" pointer aliases
                names.append(group[0].text)
        return names

    def _enum(self, body: "list[Token]", tag_tok: "Token | None", is_typedef: bool, tail: "list[Token]") -> None:
        value = -1
        for group in self._split_commas(body):
            if not group:
                continue
            name = group[0].text
            if len(group) > 2 and group[1].text == "=":
                try:
                    value = int(evaluate(group[2:], self._lookup, self.dialect))
                except NotConstant:
                    return  # an enum we cannot evaluate: export none of it rather than wrong values
            else:
                value += 1
            self.constants[name] = value
            self.out.enum_constants[name] = value
        int_type = scalar_type("int", self.dialect)
        if tag_tok is not None:
            self.tags[f"enum {tag_tok.text}"] = int_type
        if is_typedef:
            for name in self._declarator_names(tail):
                self.typedefs[name] = int_type

    def _layout(self, keyword: str, tag: str, body: "list[Token]", facts: dict, where: Token) -> Struct:
        """Member offsets with C rules and the dialect's type sizes/alignments."""
        union = keyword == "union"
        packed = facts.get("packed", False)
        struct = Struct(name=tag, union=union, tag=tag)
        offset = 0
        size = 0
        align = 1
        i = 0
        while i < len(body):
            j = i
            while j < len(body) and body[j].text not in (";", "{"):
                if body[j].text in ("(", "["):
                    j = _closing(body, j)
                j += 1
            if j >= len(body):
                if body[i:]:
                    raise CDeclError("missing ';' after a member", body[i].file, body[i].line)
                break
            if body[j].text == "{":  # nested struct/union definition used as a member type
                close = _closing(body, j)
                inner_toks, inner_facts = _strip_attributes(body[i:j], self.function_macros)
                kw = next((t.text for t in inner_toks if t.text in ("struct", "union")), None)
                if kw is None:
                    raise CDeclError("unsupported member definition", body[i].file, body[i].line)
                inner_tag = next((inner_toks[k + 1].text for k, t in enumerate(inner_toks)
                                  if t.text == kw and k + 1 < len(inner_toks)), "")
                nested = self._layout(kw, inner_tag, body[j + 1:close], inner_facts, body[i])
                if inner_tag:
                    self.tags[f"{kw} {inner_tag}"] = nested
                semi = close + 1
                while semi < len(body) and body[semi].text != ";":
                    semi += 1
                tail, _ = _strip_attributes(body[close + 1:semi], self.function_macros)
                declarators = self._split_commas(tail) if tail else [[]]
                for decl in declarators:
                    dname, ddims = self._member_declarator(decl, where)
                    if dname is None:
                        self.anon += 1
                        dname = f"_anon{self.anon}"
                        struct.anonymous.append(dname)
                    offset, size, align = self._place(struct, dname, nested, ddims, offset, size, align, packed, {})
                i = semi + 1
                continue
            member, member_facts = _strip_attributes(body[i:j], self.function_macros)
            i = j + 1
            if not member:
                continue
            if member[0].text in ("static_assert", "_Static_assert"):
                continue
            if any(t.text == ":" for t in member):
                raise CDeclError("bit-fields have no portable layout and are not supported", member[0].file,
                                 member[0].line)
            if any(t.text == "(" for t in member):
                raise CDeclError("member functions and function pointers are not supported", member[0].file,
                                 member[0].line)
            groups = self._split_commas(member)
            base, stars, name, addr, const, dims = self._specifier(groups[0], f"member of {keyword} {tag or '<anonymous>'}",
                                                                   allow_array=False)
            declarators = [(base, stars, name, dims)]
            for extra in groups[1:]:
                s = sum(1 for t in extra if t.text == "*")
                dname, ddims = self._member_declarator([t for t in extra if t.text != "*"], member[0])
                declarators.append((base, s, dname, ddims))
            for mbase, mstars, mname, mdims in declarators:
                if mname is None:
                    raise CDeclError("a member needs a name", member[0].file, member[0].line)
                if mstars:
                    mtype: CType = Pointer(mbase, addr or "global", const)
                elif mbase is None:
                    raise CDeclError(f"member {mname!r} has type void", member[0].file, member[0].line)
                else:
                    mtype = mbase
                offset, size, align = self._place(struct, mname, mtype, mdims, offset, size, align, packed,
                                                  member_facts)
        if "aligned" in facts:
            align = max(align, facts["aligned"])
        total = size if union else offset
        struct.size = (total + align - 1) // align * align
        struct.align = align
        if struct.size == 0:
            raise CDeclError(f"{keyword} {tag or '<anonymous>'} has no members", where.file, where.line)
        return struct

    def _member_declarator(self, decl: "list[Token]", where: Token):
        name = None
        dims: list[int] = []
        k = 0
        while k < len(decl):
            t = decl[k]
            if t.kind == "id" and name is None:
                name = t.text
            elif t.text == "[":
                end = _closing(decl, k)
                try:
                    dims.append(int(evaluate(decl[k + 1:end], self._lookup, self.dialect)))
                except NotConstant:
                    raise CDeclError("array extent is not a constant", t.file, t.line) from None
                k = end
            elif t.text != "*":
                raise CDeclError(f"unexpected {t.text!r} in a member declarator", t.file, t.line)
            k += 1
        return name, dims

    @staticmethod
    def _place(struct: Struct, name: str, mtype: CType, dims, offset: int, size: int, align: int, packed: bool,
               facts: dict):
        count = 1
        for d in dims:
            count *= d
        malign = 1 if packed else mtype.align
        if "aligned" in facts:
            malign = max(malign, facts["aligned"])
        if struct.union:
            struct.fields.append(Field(name, mtype, 0, tuple(dims)))
            return offset, max(size, mtype.size * count), max(align, malign)
        offset = (offset + malign - 1) // malign * malign
        struct.fields.append(Field(name, mtype, offset, tuple(dims)))
        return offset + mtype.size * count, size, max(align, malign)


def parse_declarations(tokens: "list[Token]", dialect: str, function_macros: "set[str]",
                       constants: "dict[str, int | float]") -> Declarations:
    """Kernels, structs and enums declared at file scope in ``tokens`` (already macro-expanded)."""
    return _Parser(tokens, dialect, function_macros, constants).run()

