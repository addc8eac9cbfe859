"""Struct, union, enum and typedef definitions at file scope, with C layout rules.

Offsets follow C (as clang lays them out): each member aligned to its type's alignment (1 when
the struct or the member is ``packed``, raised by the member's ``aligned(N)``, and at most N
under ``#pragma pack(N)``, which overrides ``aligned`` on members), the struct aligned to its
strictest member (raised by its own ``aligned(N)``) and padded to a multiple of it. Sizes and
alignments of scalars and vectors come from the file's language (``_languages``, ``_types``). Tests check these
layouts against the device compiler (``sizeof``/``offsetof`` probe kernels).
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ._common import CDeclError, closing, split_commas, strip_attributes
from ._constexpr import NotConstant, evaluate
from ._languages import Language
from ._source import Token
from ._types import CType, Field, Pointer, Struct, scalar_type

if TYPE_CHECKING:
    from ._parser import Declarations

__all__ = ["AggregateParser"]


class AggregateParser:
    """Mixin of the declaration parser (``_parser._Parser``), whose state it shares: ``toks``,
    ``lang``, ``function_macros``, ``constants``, ``out``, ``tags``, ``typedefs``, ``anon``, and
    ``_specifier``, ``_skip_to_semicolon``, ``_is_kernel``, ``_function`` for kernel prototypes."""

    toks: list[Token]
    lang: Language
    function_macros: set[str]
    constants: dict
    out: Declarations
    tags: dict
    typedefs: dict
    anon: int
    pack: int

    if TYPE_CHECKING:  # defined by _parser._Parser
        def _specifier(self, toks: list[Token], what: str, allow_array: bool) -> Any: ...
        def _skip_to_semicolon(self, i: int) -> int: ...
        def _is_kernel(self, head: list[Token]) -> bool: ...
        def _function(self, head: list[Token], scopes: list[str]) -> None: ...
        def _lookup(self, name: str) -> Any: ...

    def _declaration(self, head: "list[Token]", scopes) -> None:
        if not head:
            return
        if self._is_kernel(head) and any(t.text == "(" for t in head) and head[0].text != "typedef":
            self._function(head, scopes)  # a kernel prototype
            return
        if head[0].text != "typedef":
            return
        toks, _ = strip_attributes(head[1:], self.function_macros)
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
        toks, _ = strip_attributes(head, self.function_macros)
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
        toks, facts = strip_attributes(head, self.function_macros)
        keyword = self._aggregate_keyword(head) or "struct"
        if keyword == "class":
            return self._skip_to_semicolon(close_at + 1)
        kw_at = next(k for k, t in enumerate(toks) if t.text == keyword)
        tag_tok = toks[kw_at + 1] if kw_at + 1 < len(toks) and toks[kw_at + 1].kind == "id" else None
        is_typedef = toks[0].text == "typedef"
        body = self.toks[open_at + 1:close_at]
        # declarators after "}" up to ";"
        end = self._skip_to_semicolon(close_at + 1)
        tail, tail_facts = strip_attributes(self.toks[close_at + 1:end - 1], self.function_macros)
        if not self.lang.attributes_after_brace:
            tail_facts = {}   # NVRTC ignores attributes after "}" (warning 1835: "does not apply here")
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
        for group in split_commas(tail):
            if len(group) == 1 and group[0].kind == "id":  # skip "*PName" pointer aliases
                names.append(group[0].text)
        return names

    def _enum(self, body: "list[Token]", tag_tok: "Token | None", is_typedef: bool, tail: "list[Token]") -> None:
        value = -1
        for group in split_commas(body):
            if not group:
                continue
            name = group[0].text
            if len(group) > 2 and group[1].text == "=":
                try:
                    value = int(evaluate(group[2:], self._lookup, self.lang))
                except NotConstant:
                    return  # an enum we cannot evaluate: export none of it rather than wrong values
            else:
                value += 1
            self.constants[name] = value
            self.out.enum_constants[name] = value
        int_type = scalar_type("int", self.lang)
        if tag_tok is not None:
            self.tags[f"enum {tag_tok.text}"] = int_type
        if is_typedef:
            for name in self._declarator_names(tail):
                self.typedefs[name] = int_type

    def _layout(self, keyword: str, tag: str, body: "list[Token]", facts: dict, where: Token) -> Struct:
        """Member offsets with C rules and the language's type sizes/alignments."""
        union = keyword == "union"
        packed = facts.get("packed", False)
        for t in body:
            if t.kind == "pragma":
                raise CDeclError("#pragma pack inside a struct or union definition is not supported; put it "
                                 "before the definition", t.file, t.line)
        struct = Struct(name=tag, union=union, tag=tag)
        offset = 0
        size = 0
        align = 1
        i = 0
        while i < len(body):
            j = i
            while j < len(body) and body[j].text not in (";", "{"):
                if body[j].text in ("(", "["):
                    j = closing(body, j)
                j += 1
            if j >= len(body):
                if body[i:]:
                    raise CDeclError("missing ';' after a member", body[i].file, body[i].line)
                break
            if body[j].text == "{":  # nested struct/union definition used as a member type
                close = closing(body, j)
                inner_toks, inner_facts = strip_attributes(body[i:j], self.function_macros)
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
                tail, _ = strip_attributes(body[close + 1:semi], self.function_macros)
                declarators = split_commas(tail) if tail else [[]]
                for decl in declarators:
                    dname, ddims = self._member_declarator(decl, where)
                    if dname is None:
                        self.anon += 1
                        dname = f"_anon{self.anon}"
                        struct.anonymous.append(dname)
                    offset, size, align = self._place(struct, dname, nested, ddims, offset, size, align, packed,
                                                      {}, self.pack)
                i = semi + 1
                continue
            member, member_facts = strip_attributes(body[i:j], self.function_macros)
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
            groups = split_commas(member)
            base, stars, name, addr, const, dims = self._specifier(groups[0], f"member of {keyword} {tag or '<anonymous>'}",
                                                                   allow_array=False)
            declared = [(base, stars, name, dims)]
            for extra in groups[1:]:
                s = sum(1 for t in extra if t.text == "*")
                dname, ddims = self._member_declarator([t for t in extra if t.text != "*"], member[0])
                declared.append((base, s, dname, ddims))
            for mbase, mstars, mname, mdims in declared:
                if mname is None:
                    raise CDeclError("a member needs a name", member[0].file, member[0].line)
                if mstars:
                    mtype: CType = Pointer(mbase, addr or "global", const)
                elif mbase is None:
                    raise CDeclError(f"member {mname!r} has type void", member[0].file, member[0].line)
                else:
                    mtype = mbase
                offset, size, align = self._place(struct, mname, mtype, mdims, offset, size, align, packed,
                                                  member_facts, self.pack)
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
                end = closing(decl, k)
                try:
                    dims.append(int(evaluate(decl[k + 1:end], self._lookup, self.lang)))
                except NotConstant:
                    raise CDeclError("array extent is not a constant", t.file, t.line) from None
                k = end
            elif t.text != "*":
                raise CDeclError(f"unexpected {t.text!r} in a member declarator", t.file, t.line)
            k += 1
        return name, dims

    @staticmethod
    def _place(struct: Struct, name: str, mtype: CType, dims, offset: int, size: int, align: int, packed: bool,
               facts: dict, pack: int = 0):
        count = 1
        for d in dims:
            count *= d
        malign = 1 if packed or facts.get("packed") else mtype.align
        if "aligned" in facts:
            malign = max(malign, facts["aligned"])
        if pack:                          # #pragma pack(N) caps members, their aligned() included
            malign = min(malign, pack)
        if struct.union:
            struct.fields.append(Field(name, mtype, 0, tuple(dims)))
            return offset, max(size, mtype.size * count), max(align, malign)
        offset = (offset + malign - 1) // malign * malign
        struct.fields.append(Field(name, mtype, offset, tuple(dims)))
        return offset + mtype.size * count, size, max(align, malign)
