"""Record arrays: numpy structured arrays as arrays of C structs with numpy's exact layout.

``RecordType`` describes one structured dtype as C sees it: each field at its numpy offset,
explicit ``_padN`` members for the gaps and the tail, and ``__attribute__((packed))`` where the
C compiler's natural alignment would move a field or round the size up (an unaligned dtype such
as ``[("tag", "u1"), ("x", "f4")]``). The generated definition carries compile-time checks of
its size and of every field's offset, so a layout the compiler disagrees with fails to build
instead of reading the wrong bytes.

In a kernel ``p[i]`` is a ``RecordRef`` (an element, not a value; ``r = p[i]`` and ``for i, r in
enumerate(p)`` name it, as numpy's element views do); ``p[i].mass``,
``p[i]["mass"]``, ``p[i].pos[k]`` and nested ``p[i].inner.x`` read and write single fields
(``ir.Load``/``ir.Store`` of the element with a C member path). A 1-D field of a vector width
(``("pos", np.float32, 3)``) also reads as a vector, component by component: OpenCL's and
CUDA's float3 have another size and alignment than three packed floats. bool fields are
stored as one byte (0/1). Field types that have no C equivalent here are a TypeError naming
the field.

A record element or a fixed-shape field passed to a helper (``mass_of(p[i])``, ``dist2(p[i].pos)``)
is passed by reference, as numpy's element views and Numba's records are: the helper receives the
record array, the element's flat index (and, in the debug mode, the caller's bounds condition) and
is specialized for the member path, so its reads and writes are the caller's ``ir.Load``/``ir.Store``
of the same element (``RecordArg``). Every dialect passes it the way it passes any array argument.
"""
from __future__ import annotations

import ast
import hashlib
import re
from typing import TYPE_CHECKING, cast
from dataclasses import dataclass, replace

import numpy as np

from . import _ir as ir
from ._bounds import BoundsChecks
from ._elements import element_value
from ._types import BOOL, VECTOR_WIDTHS, ArrayType, Scalar, Vector

if TYPE_CHECKING:
    from ._builder import FunctionBuilder, ProgramBuilder

__all__ = ["RecordType", "RecordField", "RecordRef", "FieldArrayRef", "record_type", "record_types", "record_definitions",
           "record_element", "record_attribute", "record_subscript", "record_value", "record_store",
           "record_alias", "is_record_binding", "RecordArg", "record_argument", "record_parameter"]

_SCALARS = {"bool", "int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64", "float32", "float64"}
UINT8 = Scalar("uint8")


@dataclass(frozen=True)
class RecordField:
    name: str                  # numpy field name
    cname: str                 # C member name
    offset: int
    elem: Scalar | RecordType  # a Scalar (bool kept as bool: stored as one byte) or a nested record
    shape: tuple = ()          # a subarray field's shape

    @property
    def count(self) -> int:
        return int(np.prod(self.shape)) if self.shape else 1

    @property
    def size(self) -> int:
        return self.count * _size(self.elem)


@dataclass(frozen=True)
class RecordType:
    dtype: np.dtype
    cname: str                 # the C struct's name
    fields: tuple              # RecordField, in offset order
    itemsize: int
    align: int                 # the C struct's alignment (1 when packed)
    packed: bool

    weak = False

    def strong(self) -> "RecordType":
        return self

    @property
    def short_name(self) -> str:
        return self.cname

    def field(self, name: str) -> "RecordField | None":
        return next((f for f in self.fields if f.name == name), None)

    def __str__(self) -> str:
        return f"record {self.dtype}"


def _size(elem) -> int:
    return elem.itemsize if isinstance(elem, RecordType) else (1 if elem.name == "bool" else elem.dtype.itemsize)


def _align(elem) -> int:
    return elem.align if isinstance(elem, RecordType) else _size(elem)


def _member_name(name: str, taken: set) -> str:
    base = "f_" + "".join(c if c.isascii() and (c.isalnum() or c == "_") else "_" for c in name)
    out, n = base, 0
    while out in taken:
        n += 1
        out = f"{base}_{n}"
    taken.add(out)
    return out


def record_type(dtype: np.dtype, argname: str, path: str = "") -> RecordType:
    """The C view of structured ``dtype``; TypeError naming the field a kernel cannot hold."""
    fields = []
    taken: set = set()
    names, dtype_fields = dtype.names, dtype.fields
    if names is None or dtype_fields is None:
        raise TypeError(f"argument {argname!r}: {dtype} is not a structured dtype")
    for name in names:
        spec = dtype_fields[name]
        fdt, offset = spec[0], spec[1]
        where = f"{path}.{name}" if path else name
        shape: tuple = ()
        elem: Scalar | RecordType
        if fdt.subdtype is not None:
            fdt, shape = fdt.subdtype
            if 0 in shape:
                raise TypeError(f"argument {argname!r}: field {where!r} has the empty shape {shape}; "
                                "kernels cannot hold zero-sized fields")
        if fdt.names is not None:
            elem = record_type(fdt, argname, where)
        elif fdt.name in _SCALARS and fdt.isnative:
            elem = Scalar(fdt.name)
        else:
            raise TypeError(_field_problem(argname, where, fdt))
        fields.append(RecordField(name, _member_name(name, taken), offset, elem, tuple(shape)))
    fields.sort(key=lambda f: f.offset)
    end = 0
    for f in fields:
        if f.offset < end:
            raise TypeError(f"argument {argname!r}: field {(path + '.' if path else '') + f.name!r} overlaps the "
                            "field before it (a union-like dtype); kernels need fields that do not share bytes")
        end = f.offset + f.size
    if end > dtype.itemsize:
        raise TypeError(f"argument {argname!r}: the fields of {dtype} run past its itemsize")
    align = max((_align(f.elem) for f in fields), default=1)
    natural = all(f.offset % _align(f.elem) == 0 for f in fields) and dtype.itemsize % align == 0
    layout = [(f.name, f.offset, f.elem.cname if isinstance(f.elem, RecordType) else f.elem.name, f.shape)
              for f in fields]                 # canonical: np.recarray's record dtype names the same struct
    digest = hashlib.sha1(repr((dtype.itemsize, layout)).encode())
    return RecordType(dtype, f"pg_rec_{digest.hexdigest()[:12]}", tuple(fields), dtype.itemsize,
                      align if natural else 1, not natural)


def _field_problem(argname, where, fdt) -> str:
    if fdt.kind == "O":
        what = "Python objects"
    elif fdt.kind in "US":
        what = "strings"
    elif fdt.kind == "c":
        what = "complex numbers"
    elif fdt.kind in "mM":
        what = "datetimes"
    elif fdt.name == "float16":
        what = "float16 (not in structs on every backend)"
    elif not fdt.isnative:
        what = "non-native byte order"
    else:
        what = f"{fdt}"
    return (f"argument {argname!r}: field {where!r} has dtype {fdt} ({what}), which kernels cannot hold in a record; "
            "record fields may be bool, int8..uint64, float32, float64, nested records and fixed-shape arrays of those")


# ---- C definitions ------------------------------------------------------------------------------------------
def _collect(t, out: dict) -> None:
    if isinstance(t, RecordType) and t.cname not in out:
        for f in t.fields:
            _collect(f.elem, out)
        out[t.cname] = t


def record_types(prog: ProgramBuilder, functions: list[ir.Function]) -> list:
    """Every record type the kernel's and helpers' array parameters use, nested records first;
    notes the types of their fields (float64: OpenCL's fp64 pragma)."""
    found: dict = {}
    for fn in functions:
        for p in fn.params:
            elem = getattr(p.type, "elem", None)
            if isinstance(elem, RecordType):
                _collect(elem, found)
    for t in found.values():
        for f in t.fields:
            if not isinstance(f.elem, RecordType):
                prog.note_type(f.elem)
    return list(found.values())


def record_definitions(d, types: list) -> str:
    """C typedefs of ``types`` (from :func:`record_types`) in dialect ``d``'s words, with
    compile-time checks of each size and offset."""
    byte = d.type_name(UINT8)
    out = []
    for t in types:
        lines = [f"typedef struct{' __attribute__((packed))' if t.packed else ''} {{"]
        at, npad = 0, 0
        for f in t.fields:
            if f.offset > at:
                lines.append(f"    {byte} _pad{npad}[{f.offset - at}];")
                npad += 1
            if isinstance(f.elem, RecordType):
                ctype = f.elem.cname
            else:
                ctype = d.type_name(UINT8 if f.elem.name == "bool" else f.elem)
            lines.append(f"    {ctype} {f.cname}{f'[{f.count}]' if f.shape else ''};")
            at = f.offset + f.size
        if t.itemsize > at:
            lines.append(f"    {byte} _pad{npad}[{t.itemsize - at}];")
        lines.append(f"}} {t.cname};")
        # the compiler must agree with numpy, or the kernel reads the wrong bytes: refuse to build
        lines.append(f"typedef char {t.cname}_size[(sizeof({t.cname}) == {t.itemsize}) ? 1 : -1];")
        for f in t.fields:
            offset = d.offsetof.format(type=t.cname, member=f.cname)
            lines.append(f"typedef char {t.cname}_at_{f.cname}[({offset} == {f.offset}) ? 1 : -1];")
        out.append("\n".join(lines))
    return "\n".join(out)


# ---- kernel bindings ----------------------------------------------------------------------------------------
@dataclass
class RecordRef:
    """One record: an element ``p[i]`` or a record-typed field of one (``p[i].inner``)."""
    array: ir.ArrayRef
    flat: ir.Expr              # the element's index (a variable or constant)
    ok: ir.Expr | None         # the debug mode's bounds condition, or None
    member: str                # C member path from the element
    type: RecordType


@dataclass
class FieldArrayRef:
    """A fixed-shape field of a record (``p[i].pos``): indexed, or read whole as a vector."""
    rec: RecordRef
    field: RecordField


def is_record_binding(x) -> bool:
    return isinstance(x, (RecordRef, FieldArrayRef))


def record_alias(self: FunctionBuilder, name, value, node) -> bool:
    """Bind ``name`` to record element ``value`` (``r = p[i]``, ``for i, r in enumerate(p)``): like
    numpy's element view, ``r.mass = ...`` writes ``p[i]``. False for a field array (``v = p[i].pos``
    reads a vector instead)."""
    if not isinstance(value, RecordRef):
        return False
    prev = self.array_locals.get(name)
    if prev is not None and prev != value:
        raise self.err(node, f"{name!r} refers to two different records", "use one name per record element")
    if name in self.params or name in self.local_types:
        raise self.err(node, f"{name!r} is already a variable; it cannot also name a record element",
                       "use another name for the element")
    self.array_locals[name] = value
    return True


def record_element(self: FunctionBuilder, arr, idx, node):
    """``p[i]`` of a record array (``_subscripts.index_array``)."""
    t = arr.type
    if len(idx) != t.ndim:
        raise self.err(node, f"a {t.ndim}-D record array needs {t.ndim} ind{'ex' if t.ndim == 1 else 'ices'}, "
                       f"got {len(idx)}", "index every dimension, then name a field: p[i].mass")
    from ._subscripts import checked_index     # here: _subscripts imports this module
    flat, ok = checked_index(self, arr, idx, node)
    flat = self.materialize(flat)
    return RecordRef(arr, flat, self.materialize(ok) if ok is not None else None, "", t.elem)


def _field(self: FunctionBuilder, rec: RecordRef, name: str, node) -> RecordField:
    f = rec.type.field(name)
    if f is None:
        names = ", ".join(x.name for x in rec.type.fields)
        raise self.err(node, f"the record has no field {name!r} (its fields: {names})")
    return f


def _load(self: FunctionBuilder, rec: RecordRef, member: str, elem):
    """The field at ``member`` of element ``rec`` as a value (bools stored as a byte: != 0)."""
    return BoundsChecks.load(rec.ok, element_value(rec.array, rec.flat, elem, member))


def _field_binding(self: FunctionBuilder, rec: RecordRef, f: RecordField):
    if f.shape:
        return FieldArrayRef(rec, f)
    member = f"{rec.member}.{f.cname}"
    if isinstance(f.elem, RecordType):
        return RecordRef(rec.array, rec.flat, rec.ok, member, f.elem)
    return _load(self, rec, member, f.elem)


def record_attribute(self: FunctionBuilder, base, attr, node):
    """``p[i].mass`` (``_expressions.ex_Attribute``)."""
    if isinstance(base, FieldArrayRef):
        raise self.err(node, f"field {base.field.name!r} is an array of shape {base.field.shape}; it has no "
                       f"attribute {attr!r}", f"index it: ...{base.field.name}[0]")
    return _field_binding(self, base, _field(self, base, attr, node))


def _sub_index(self: FunctionBuilder, fa: FieldArrayRef, sl, node, kind: str) -> "tuple[str, ir.Expr | None]":
    """The C subscript (``[k]``, flattened) of a subarray field at Python index ``sl``, and the
    bounds condition of the access: the element's, and in the debug mode each variable index
    against the field's extent (a constant one is checked here, at translation)."""
    from ._subscripts import index_list       # here: _subscripts imports this module
    idx = index_list(self, sl)
    shape = fa.field.shape
    if len(idx) != len(shape):
        raise self.err(node, f"field {fa.field.name!r} has shape {shape}: it needs {len(shape)} "
                       f"ind{'ex' if len(shape) == 1 else 'ices'}, got {len(idx)}")
    it = self.prog.index_type
    bounds = self.prog.bounds
    flat = None
    parts: list = []
    for k, (i, n) in enumerate(zip(idx, shape)):
        if not (isinstance(i, ir.Expr) and isinstance(i.type, Scalar) and (i.type.is_int or i.type.kind == "b")):
            raise self.err(node, f"field {fa.field.name!r} is indexed with integers")
        if bounds is not None and not isinstance(i, ir.Const):    # checked at its full width (_bounds)
            i = bounds.full_width(self, i, ir.Const(n, it), i.type.kind == "i")
        elif isinstance(i, ir.Const):
            v = int(i.value)
            if not -n <= v < n:
                raise self.err(node, f"index {v} is out of range for field {fa.field.name!r} of shape {shape}")
            i = ir.Const(v % n, it)
        else:
            i = self.materialize(self.convert(i, it))
            if i.type.kind == "i":        # Python's negative index from the end
                i = ir.Ternary(ir.Bin("<", i, ir.Const(0, it), BOOL), ir.Bin("+", i, ir.Const(n, it), it), i, it)
        parts.append(i)
    ok = fa.rec.ok
    if bounds is not None and not all(isinstance(i, ir.Const) for i in parts):
        parts, field_ok = bounds.check_extents(self, f"{fa.rec.array.root}[...].{fa.field.name}", parts,
                                               [ir.Const(n, it) for n in shape], node, kind)
        parts = [self.convert(p, it) for p in parts]           # narrowed for the access only, once checked
        ok = field_ok if ok is None else ir.Bin("&&", ok, field_ok, BOOL)
    for i, n in zip(parts, shape):
        flat = i if flat is None else ir.Bin("+", ir.Bin("*", flat, ir.Const(n, it), it), i, it)
    if isinstance(flat, ir.Const):
        return f"[{flat.value}]", ok
    assert flat is not None                      # a subarray field has at least one dimension
    return f"[{cast(ir.Var, self.materialize(flat)).name}]", ok      # an int index: a variable


def record_subscript(self: FunctionBuilder, base, node):
    """``p[i]["mass"]`` and ``p[i].pos[k]`` (``_subscripts.subscript_value``)."""
    if isinstance(base, RecordRef):
        key = node.slice
        if not (isinstance(key, ast.Constant) and isinstance(key.value, str)):
            raise self.err(node, "a record is indexed by a field name", "write p[i]['mass'] or p[i].mass")
        return _field_binding(self, base, _field(self, base, key.value, node))
    f = base.field
    sub, ok = _sub_index(self, base, node.slice, node, "read")
    member = f"{base.rec.member}.{f.cname}{sub}"
    if isinstance(f.elem, RecordType):
        return RecordRef(base.rec.array, base.rec.flat, ok, member, f.elem)
    return _load(self, replace(base.rec, ok=ok), member, f.elem)


def _vector_of(f: RecordField):
    if len(f.shape) == 1 and f.shape[0] in VECTOR_WIDTHS and isinstance(f.elem, Scalar) and f.elem.short_name:
        return Vector(f.elem, f.shape[0])
    return None


def record_value(self: FunctionBuilder, e, node):
    """A record binding where a value is needed (``_expressions.value``): a vector-shaped field
    reads as a vector, component by component; anything else is an error saying what to read."""
    if isinstance(e, RecordRef):
        raise self.err(node, "a record has no single value in a kernel", "read a field: p[i].mass or p[i]['mass']")
    vt = _vector_of(e.field)
    if vt is None:
        raise self.err(node, f"field {e.field.name!r} of shape {e.field.shape} has no single value",
                       f"index it, e.g. ...{e.field.name}[0]" + ("" if len(e.field.shape) != 1 else
                                                                   " (fields of 2, 3, 4, 8 or 16 numbers read as vectors)"))
    self.prog.note_type(vt)
    m = f"{e.rec.member}.{e.field.cname}"
    return ir.VecCtor([_load(self, e.rec, f"{m}[{k}]", vt.base) for k in range(vt.width)], vt)


def _stores(self: FunctionBuilder, rec: RecordRef, member: str, elem, value, line):
    t = UINT8 if elem.name == "bool" else elem
    v = self.truth(value, None) if elem.name == "bool" else value
    return ir.Store(rec.array, rec.flat, self.convert(v, t), line, False, member=member)


def record_store(self: FunctionBuilder, base, key, value, s):
    """Statements storing ``value`` into field ``key`` of ``base`` (a RecordRef and a field name)
    or into element ``key`` (an ast slice) of a subarray field (``_statements.store``)."""
    if isinstance(base, FieldArrayRef):
        f = base.field
        if isinstance(f.elem, RecordType):
            raise self.err(s, "a whole record cannot be assigned in a kernel", "assign its fields one by one")
        sub, ok = _sub_index(self, base, key, s, "write")
        member = f"{base.rec.member}.{f.cname}{sub}"
        return BoundsChecks.stores(ok, [_stores(self, base.rec, member, f.elem, value, s.lineno)], s.lineno)
    if not isinstance(key, str):                   # p[i]["mass"] = ...: the slice names the field
        if not (isinstance(key, ast.Constant) and isinstance(key.value, str)):
            raise self.err(s, "a record is indexed by a field name", "write p[i]['mass'] = ... or p[i].mass = ...")
        key = key.value
    f = _field(self, base, key, s)
    member = f"{base.member}.{f.cname}"
    if isinstance(f.elem, RecordType):
        raise self.err(s, f"field {f.name!r} is a record; a whole record cannot be assigned in a kernel",
                       "assign its fields one by one")
    if not f.shape:
        if isinstance(value.type, Vector):
            raise self.type_err(s, f"cannot store a {value.type} into the scalar field {f.name!r}")
        return BoundsChecks.stores(base.ok, [_stores(self, base, member, f.elem, value, s.lineno)], s.lineno)
    # a whole subarray field: from a vector of its length, or one number for every element (numpy broadcasts)
    n = f.count
    if isinstance(value.type, Vector):
        if len(f.shape) != 1 or value.type.width != n:
            raise self.type_err(s, f"cannot store a {value.type} into field {f.name!r} of shape {f.shape}")
        v = self.materialize(value)
        comps = [self.comp(v, k) for k in range(n)]
    else:
        comps = [self.materialize(value)] * n
    return BoundsChecks.stores(base.ok, [_stores(self, base, f"{member}[{k}]", f.elem, c, s.lineno)
                                         for k, c in enumerate(comps)], s.lineno)


# ---- records passed to helpers ------------------------------------------------------------------------------
_VAR_SUBSCRIPT = re.compile(r"\[([A-Za-z_]\w*)\]")   # p[i].parts[k]: the caller's C variable holding k


@dataclass(frozen=True)
class RecordArg:
    """What a helper's specialization knows of a record argument: the record array's type, the
    member path from the element (variable subscripts as ``[{0}]``, ``[{1}]``... : they become
    parameters), the record's type and, for ``p[i].pos``, the field. The element itself (flat
    index, bounds condition, subscripts) is passed at run time, so one helper serves every element."""
    array: ArrayType
    member: str
    type: RecordType
    field: "RecordField | None"
    nsubs: int
    checked: bool              # the debug mode's bounds condition is passed too


def record_argument(b, index_type) -> tuple:
    """``(RecordArg, call arguments)`` of record binding ``b`` passed to a helper: the array and
    its extents (as any array argument), the element's flat index, its bounds condition in the
    debug mode and the index variables of its member path."""
    rec = b.rec if isinstance(b, FieldArrayRef) else b
    subs = _VAR_SUBSCRIPT.findall(rec.member)
    numbers = iter(range(len(subs)))
    template = _VAR_SUBSCRIPT.sub(lambda m: "[{%d}]" % next(numbers), rec.member)
    arg = RecordArg(rec.array.type, template, rec.type, b.field if isinstance(b, FieldArrayRef) else None,
                    len(subs), rec.ok is not None)
    args = [rec.array, *rec.array.shape, rec.flat]
    if rec.ok is not None:
        args.append(rec.ok)
    args += [ir.Var(name, index_type) for name in subs]
    return arg, args


def record_parameter(self: FunctionBuilder, array: ir.ArrayRef, arg: RecordArg):
    """The binding of a helper parameter specialized for ``arg``, whose record array parameter
    ``array`` the builder made: the parameters after it (flat index, bounds condition, member
    subscripts, in :func:`record_argument`'s order) and the ``RecordRef`` / ``FieldArrayRef``
    that reads and writes the caller's element through them."""
    it = self.prog.index_type
    taken = {p.name for p in self.fn_params} | set(self.cnames.values())

    def param(name, t):                    # a name no earlier parameter took (def h(rec_at, rec))
        while name in taken:
            name += "_"
        taken.add(name)
        self.fn_params.append(ir.Param(name, t))
        return ir.Var(name, t)

    at = param(f"{array.cname}_at", it)
    ok = param(f"{array.cname}_ok", BOOL) if arg.checked else None
    subs = [param(f"{array.cname}_sub{k}", it) for k in range(arg.nsubs)]
    rec = RecordRef(array, at, ok, arg.member.format(*(v.name for v in subs)), arg.type)
    return FieldArrayRef(rec, arg.field) if arg.field is not None else rec
