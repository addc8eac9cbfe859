"""Token-level helpers shared by the kernel-signature and the struct/typedef parsers."""
from __future__ import annotations

from ._constexpr import NotConstant, evaluate
from ._source import Token

__all__ = ["CDeclError", "closing", "strip_attributes", "spelling", "split_commas"]


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


_ADDRESS_SPACES = {
    "__global": "global", "global": "global", "__local": "local", "local": "local",
    "__constant": "constant", "constant": "constant", "__private": "private", "private": "private",
    "__generic": "global", "generic": "global",
}
_CONST_QUALIFIERS = frozenset({"const", "__const", "__const__"})
"""``const`` and the spellings clang and GCC accept for it (``__const`` in older OpenCL samples)."""
_IGNORED_QUALIFIERS = frozenset({"volatile", "__volatile", "__volatile__", "restrict", "__restrict", "__restrict__",
                                 "register", "__device__", "__shared__", "__managed__", "__constant__", "static",
                                 "mutable", "__unused", "__grid_constant__",
                                 # OpenCL access qualifiers: only images and pipes take them, and those types are
                                 # refused by name (_OPAQUE_TYPES), so the kernel is left out saying why
                                 "__read_only", "read_only", "__write_only", "write_only", "__read_write",
                                 "read_write"})
_ATTRIBUTE_CALLS = frozenset({"__attribute__", "__launch_bounds__", "__declspec", "__align__", "alignas",
                              "_Alignas", "__cluster_dims__", "__maxnreg__",
                              # OpenCL C's __kernel_exec(X, typen): __kernel with two attributes
                              "__kernel_exec", "kernel_exec"})
_OPAQUE_TYPES = frozenset({"image1d_t", "image2d_t", "image3d_t", "image1d_array_t", "image2d_array_t",
                           "image1d_buffer_t", "image2d_depth_t", "image2d_array_depth_t", "sampler_t", "event_t",
                           "queue_t", "clk_event_t", "reserve_id_t", "pipe", "cudaTextureObject_t",
                           "cudaSurfaceObject_t", "hipTextureObject_t", "hipSurfaceObject_t"})
_KERNEL_NOISE = frozenset({"__kernel", "kernel", "__global__", "extern", "static", "inline", "__inline__",
                           "__inline", "__forceinline__", "__noinline__", "__host__", "__device__"})


def closing(tokens: "list[Token]", i: int) -> int:
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


def strip_attributes(tokens: "list[Token]", function_macros: "set[str]") -> "tuple[list[Token], dict]":
    """Remove ``__attribute__((...))``, ``__launch_bounds__(...)``, ``[[...]]`` and calls of
    function-like macros; return the rest and the alignment facts found (aligned/packed)."""
    out = []
    facts: dict = {}
    i = 0
    while i < len(tokens):
        t = tokens[i]
        nxt = tokens[i + 1].text if i + 1 < len(tokens) else None
        if (t.text in _ATTRIBUTE_CALLS or (t.kind == "id" and t.text in function_macros)) and nxt == "(":
            end = closing(tokens, i + 1)
            _alignment_facts(t.text, tokens[i + 2:end], facts)
            i = end + 1
            continue
        if t.text == "[" and nxt == "[":
            i = closing(tokens, i) + 1
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
                end = k + 1 + closing(inner[k + 1:], 0)
                try:
                    n = int(evaluate(inner[k + 2:end], _no_lookup))
                except NotConstant:
                    n = 16
            else:
                n = 16  # GCC's "largest useful alignment"; rare in kernel files
            facts["aligned"] = max(facts.get("aligned", 1), n)


def _no_lookup(name: str):
    raise NotConstant(name)


def spelling(tokens: "list[Token]") -> str:
    text = ""
    for t in tokens:
        if t.text in (",", ")", "]", "*") or text.endswith(("(", "[")) or not text:
            text += t.text
        else:
            text += " " + t.text
    return text.replace("*", "* ").replace("*  ", "* ").replace("* )", "*)").replace("* ,", "*,").strip()


def split_commas(tokens: "list[Token]") -> "list[list[Token]]":
    """Split at top-level commas (not inside (), [] or <>)."""
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
