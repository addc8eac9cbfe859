"""The typed IR: what the builder produces, the analyses read and the emitter prints.

Expressions carry their final type; every Python-semantics difference has already been
lowered (floor division, power, min/max, casts), so printing is a straight walk.
"""
from __future__ import annotations

import copy
from dataclasses import dataclass, field, fields, is_dataclass
from typing import Any, Callable

__all__ = [
    "Expr", "Const", "Var", "Raw", "Bin", "Un", "Cast", "Call", "MathCall", "WorkItem", "Barrier", "MemFence",
    "Printf", "PrintfConversion", "Ternary", "Load", "VecCtor", "Swizzle",
    "ArrayRef", "Stmt", "Assign", "Store", "ExprStmt", "If", "While", "For", "Break", "Continue",
    "Return", "LocalArrayDecl", "Function", "Param", "operands", "WideLoad", "WideStore", "rebuilt",
]


class Expr:
    type: Any


_OPERAND_FIELDS = ("a", "b", "cond", "index")


def operands(e) -> list:
    """The direct sub-expressions of ``e`` (its ``a``, ``b``, ``cond``, ``index`` and ``args``): the
    analyses walk every node through this, so a new node with those fields needs no walker of its own."""
    out = [sub for sub in (getattr(e, f, None) for f in _OPERAND_FIELDS) if isinstance(sub, Expr)]
    out.extend(sub for sub in getattr(e, "args", ()) or () if isinstance(sub, Expr))
    return out


def rebuilt(node, child: Callable[[Any], Any]):
    """``node`` with ``child`` applied to each of its expression, statement and list fields (a
    list: to each item), copied only where something changed: the rewriting passes' walk. Array
    references and non-IR values come back as they are; the copy keeps attributes beyond the
    fields (a Call's helper)."""
    if isinstance(node, list):
        new = [child(x) for x in node]
        return node if all(a is b for a, b in zip(new, node)) else new
    if not isinstance(node, (Expr, Stmt)) or isinstance(node, ArrayRef) or not is_dataclass(node):
        return node
    changed = {}
    for f in fields(node):
        value = getattr(node, f.name)
        if isinstance(value, (Expr, Stmt, list)):
            new = child(value)
            if new is not value:
                changed[f.name] = new
    if not changed:
        return node
    out = copy.copy(node)
    for name, value in changed.items():
        setattr(out, name, value)
    return out


@dataclass
class Const(Expr):
    value: Any
    type: Any


@dataclass
class Var(Expr):
    name: str          # C name
    type: Any


@dataclass
class Raw(Expr):
    """Text printed as it is, with a known type ("?" while types are unknown)."""
    text: str
    type: Any
    non_negative: bool = False


@dataclass
class WorkItem(Expr):
    """``gpu.get_<what>(dim)``: global_id, local_id, group_id, global_size, local_size, num_groups;
    the dialect spells it (``get_global_id(0)``, ``threadIdx.x``). Never negative."""
    what: str
    dim: int
    type: Any
    non_negative = True


@dataclass
class Barrier(Expr):
    """``gpu.barrier(flags)``: ``fence`` is "local", "global" or "both"."""
    fence: str
    type: Any


@dataclass
class MemFence(Expr):
    """``gpu.mem_fence(flags)``."""
    fence: str
    type: Any


@dataclass
class Bin(Expr):
    op: str            # C operator
    a: Expr
    b: Expr
    type: Any


@dataclass
class Un(Expr):
    op: str
    a: Expr
    type: Any


@dataclass
class Cast(Expr):
    a: Expr
    type: Any


@dataclass
class Call(Expr):
    fn: str            # C function name: a prelude piece or a helper (``.helper``: named when emitted)
    args: list
    type: Any
    helper: Any = field(default=None, compare=False, repr=False)      # the helper's Function, if one
    atomic_root: str | None = field(default=None, compare=False, repr=False)   # the array an atomic updates


@dataclass
class MathCall(Expr):
    """Math function ``name`` (``sqrt``, ``fmin``, ``isnan``...; with ``fast``: ``gpu.rsqrt`` and
    ``gpu.native_*``) computed in float type ``at``; the dialect names it (``sqrtf`` on CUDA)."""
    name: str
    args: list
    type: Any
    at: Any
    fast: bool = False


@dataclass(frozen=True)
class PrintfConversion:
    """One conversion of a ``Printf`` format: ``spec`` is ``%`` with flags, width and precision
    (``"%-8.3"``), ``conv`` the conversion (``"d"``, ``"x"``, ``"lg"``); ``int64``: the argument
    is a 64-bit integer, so the dialect's length modifier goes between them (``%ld`` in OpenCL
    C, ``%lld`` in CUDA)."""
    spec: str
    conv: str
    int64: bool = False


@dataclass
class Printf(Expr):
    """``print(...)``: one device printf. ``format`` holds, in order, literal text (``str``, printed
    as it is) and ``PrintfConversion``s, one per item of ``args``; the dialect names the function
    and spells the format string."""
    format: list
    args: list
    type: Any


@dataclass
class Ternary(Expr):
    cond: Expr
    a: Expr
    b: Expr
    type: Any


@dataclass
class ArrayRef(Expr):
    """A whole array: a kernel pointer parameter (``root``) or a local/shared array."""
    root: str          # kernel parameter / local array name this pointer derives from
    cname: str         # C name of the pointer in the current function
    shape: list        # one Expr per dim
    type: Any          # ArrayType


@dataclass
class Load(Expr):
    array: ArrayRef
    index: Expr        # flat element index
    type: Any
    member: str = ""   # C member path of a record element's field (".f_pos[2]"), see _records


@dataclass
class WideLoad(Expr):
    """``type.width`` consecutive elements of ``array`` from ``index`` on, as one vector access (one
    128-bit load for 4 floats): the address is aligned to the vector's size, which the code
    around it checks (``_wide``); the dialect spells the access."""
    array: ArrayRef
    index: Expr        # flat element index of the first element; with ``in_vectors``, the vector's number
    type: Any          # Vector of the array's element type
    in_vectors: bool = False   # ``index`` counts vectors: the row ``index`` of an (n, width) array


@dataclass
class VecCtor(Expr):
    args: list         # scalars (already of the base type)
    type: Any


@dataclass
class Swizzle(Expr):
    a: Expr
    index: int         # component number; the dialect spells the member (.x, .s5)
    type: Any


class Stmt:
    line: int = 0


@dataclass
class Assign(Stmt):
    target: Var
    value: Expr
    line: int = 0


@dataclass
class Store(Stmt):
    array: ArrayRef
    index: Expr
    value: Expr
    line: int = 0
    full_domain: bool = False   # unconditional store at the domain index (full-overwrite analysis)
    member: str = ""            # C member path of a record element's field, see _records


@dataclass
class WideStore(Stmt):
    """``array[index .. index + len(lanes) - 1] = lanes`` as one vector access of ``type`` (see
    ``WideLoad``)."""
    array: ArrayRef
    index: Expr
    lanes: list        # one scalar expression per element, in order
    type: Any          # Vector of the array's element type
    line: int = 0


@dataclass
class ExprStmt(Stmt):
    value: Expr
    line: int = 0


@dataclass
class If(Stmt):
    cond: Expr
    body: list
    orelse: list
    line: int = 0


@dataclass
class While(Stmt):
    cond: Expr
    body: list
    line: int = 0


@dataclass
class For(Stmt):
    var: Var
    start: Expr
    stop: Expr
    step: Expr
    body: list
    line: int = 0
    step_sign: int = 1     # +1, -1, or 0 when only known at run time


@dataclass
class Break(Stmt):
    line: int = 0


@dataclass
class Continue(Stmt):
    line: int = 0


@dataclass
class Return(Stmt):
    value: "Expr | None"
    line: int = 0


@dataclass
class LocalArrayDecl(Stmt):
    array: ArrayRef
    size: int
    line: int = 0


@dataclass
class Param:
    name: str          # C name
    type: Any          # Scalar / ArrayType / Vector
    root: str = ""     # for arrays: the kernel parameter it aliases
    hidden: bool = False
    readonly: bool = False
    # a local array sized at launch: its byte offset (an Expr) in the launch's one block of local
    # memory, where the dialect carves every such array out of one block (CUDA/HIP dynamic shared)
    local_offset: Any = None


@dataclass
class Function:
    name: str
    params: list
    ret: Any
    body: list
    locals: dict = field(default_factory=dict)   # C name -> type
    is_kernel: bool = False
    filename: str = ""
    line: int = 0
    access: dict = field(default_factory=dict)   # array param C name -> set of "r"/"w"
    tuple_returns: tuple = ()    # a helper returning tuples: the item types, one out-parameter each (_tuples)
