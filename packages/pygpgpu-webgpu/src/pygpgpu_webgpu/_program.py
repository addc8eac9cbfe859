"""A WGSL module built on a device, and its compute entry points as kernels.

A kernel's parameters are the bindings its entry point reaches (``_wgsl.scan``), in (group,
binding) order: a ``var<storage>`` binding takes a buffer, a ``var<uniform>`` scalar or vector
takes a number (packed into a small uniform buffer the launcher owns) or a buffer. The pipeline
has an explicit layout built from those declarations, one bind group per ``@group``."""
from __future__ import annotations

import math
from typing import Any, Callable, Sequence

import numpy as np

from pygpgpu_core.errors import ClosedError, CompileError
from pygpgpu_core.kernel_files import parse_work_size

from ._errors import driver_error
from ._wgpu import wgpu
from ._values import VALUES_BINDING_NAME, ValuesLayout
from ._wgsl import Binding, EntryPoint, WGSLDeclError, scan

__all__ = ["WebGPUProgram", "WebGPUKernel"]

_BIND_GROUP_CACHE = 64      # bind groups a launcher keeps, by the buffers bound (then it starts afresh)


class WebGPUProgram:
    def __init__(self, context: Any, source: str, *, name: str = "") -> None:
        self.context = context
        self.source = source
        self.name = name
        self.closed = False
        try:
            self.module_decls = scan(source, name or "<wgsl>")
        except WGSLDeclError as exc:
            raise CompileError(str(exc), "", source) from exc
        try:
            self.module = context.gpu.create_shader_module(code=source, label=name or "pygpgpu")
            info = self.module.get_compilation_info_sync()
        except Exception as exc:
            raise CompileError(f"WGSL did not compile for {context.device.selector} ({context.device.name}): "
                               f"{str(exc).strip()}", str(exc), source, name or None) from exc
        self.build_log = "\n".join(str(m.get("message", m)) if isinstance(m, dict) else str(m) for m in info or [])
        self._kernels: dict[str, WebGPUKernel] = {}

    @property
    def kernel_names(self) -> "list[str]":
        return list(self.module_decls.entry_points)

    def kernel(self, name: str) -> "WebGPUKernel":
        if self.closed:
            raise ClosedError(f"WGSL program {self.name or ''}".strip())
        k = self._kernels.get(name)
        if k is None:
            entry = self.module_decls.entry_points.get(name)
            if entry is None:
                raise ValueError(f"the WGSL module has no @compute entry point {name!r} "
                                 f"(it has: {', '.join(self.module_decls.entry_points) or 'none'})")
            k = self._kernels[name] = WebGPUKernel(self, entry)
        return k

    def close(self) -> None:
        self.closed = True
        self._kernels.clear()


def _layout_entry(b: Binding) -> dict:
    kind = ("uniform" if b.space == "uniform" else
            "storage" if b.access == "read_write" else "read-only-storage")
    return {"binding": b.binding, "visibility": wgpu().ShaderStage.COMPUTE, "buffer": {"type": kind}}


class _UniformBox:
    """A launcher's own uniform buffer, passed where a binding takes a buffer of the context."""

    closed = False

    def __init__(self, gpu_buffer: Any) -> None:
        self.gpu = gpu_buffer
        self.last = b""


class WebGPUKernel:
    """One ``@compute`` entry point. ``@workgroup_size`` is fixed in WGSL: a launch's local size
    must be None (the declared one) or equal to it; the global size is work items per dimension,
    rounded up to whole workgroups."""

    def __init__(self, program: WebGPUProgram, entry: EntryPoint) -> None:
        self.program = program
        self.entry = entry
        self.name = entry.name
        self.params = entry.params
        self.workgroup_size = entry.workgroup_size or (1,)
        self.work_group_size = math.prod(self.workgroup_size)
        ctx = program.context
        device = ctx.device
        where = f"{device.selector} ({device.name})"
        device.limits.check_bindings(sum(b.space == "storage" for b in self.params),
                                     sum(b.space == "uniform" for b in self.params), self.name, where)
        self.groups = sorted({b.group for b in self.params})
        gpu = ctx.gpu
        try:
            layouts = [gpu.create_bind_group_layout(entries=[_layout_entry(b) for b in self.params if b.group == g])
                       for g in range(max(self.groups, default=-1) + 1)]
            self._layouts = layouts
            self.pipeline = gpu.create_compute_pipeline(
                layout=gpu.create_pipeline_layout(bind_group_layouts=layouts),
                compute={"module": program.module, "entry_point": self.name}, label=self.name)
        except Exception as exc:
            raise CompileError(f"the compute pipeline of {self.name!r} could not be made on {where}: "
                               f"{str(exc).strip()}", str(exc), program.source, program.name or None) from exc

    # ---- launching --------------------------------------------------------------------------------
    def _groups(self, global_size: Sequence[int], local_size: "Sequence[int] | None") -> "tuple[int, int, int]":
        wg = tuple(self.workgroup_size) + (1,) * (3 - len(self.workgroup_size))
        g = tuple(int(n) for n in global_size)
        if not 1 <= len(g) <= 3:
            raise ValueError(f"a work size has 1 to 3 dimensions, got {tuple(global_size)!r}")
        if local_size is not None:
            local = tuple(int(n) for n in local_size) + (1,) * (3 - len(local_size))
            if local != wg:
                raise ValueError(f"{self.name!r} declares @workgroup_size{tuple(self.workgroup_size)}; WGSL fixes it in "
                                 f"the source, so launch with local size None or {tuple(self.workgroup_size)}, not "
                                 f"{tuple(local_size)}")
        g = g + (1,) * (3 - len(g))
        groups = (-(-g[0] // wg[0]), -(-g[1] // wg[1]), -(-g[2] // wg[2]))
        device = self.program.context.device
        device.limits.check_groups(groups, self.name, device.selector)
        return groups

    @property
    def values_binding(self) -> "Binding | None":
        """The uniform struct of a translated kernel's values (``_values``), if it has one."""
        last = self.params[-1] if self.params else None
        return last if last is not None and last.name == VALUES_BINDING_NAME and last.space == "uniform" else None

    def launcher(self, arg_types: Sequence[Any]) -> Callable[..., None]:
        """``fn(global_size, local_size, args)``: ``args`` in parameter order. Uniform values are
        written into storage made once here; bind groups are kept by the buffers they bind."""
        if self.values_binding is not None and list(arg_types) != ["buffer"] * len(self.params):
            return self._values_launcher(arg_types)
        if len(arg_types) != len(self.params):
            raise TypeError(f"{self.name!r} takes {len(self.params)} bindings "
                            f"({', '.join(b.name for b in self.params)}), launcher given {len(arg_types)} kinds")
        ctx = self.program.context
        gpu = ctx.gpu
        usage = wgpu().BufferUsage
        uniforms: dict[int, tuple[Any, np.dtype]] = {}
        for i, (b, kind) in enumerate(zip(self.params, arg_types)):
            if kind == "local" or kind == "buffer":
                if kind == "local":
                    raise TypeError(f"{self.name!r}: WGSL declares workgroup memory in the source "
                                    "(var<workgroup>); it is not an argument")
                continue
            if b.space != "uniform":
                raise TypeError(f"binding {b.name!r} of {self.name!r} is var<storage>: it takes a buffer, not a value "
                                f"of {kind}")
            dtype = np.dtype(kind) if not isinstance(kind, type) or issubclass(kind, np.generic) else None
            want = b.dtype
            if dtype is None or want is None:
                raise TypeError(f"uniform {b.name!r} of {self.name!r} is {b.type}: pass a buffer holding it")
            ubuf = gpu.create_buffer(size=max(16, want.itemsize), usage=usage.UNIFORM | usage.COPY_DST)
            uniforms[i] = (ubuf, want)
        cache: dict[tuple, tuple[list, list]] = {}
        layouts = self._layouts
        pipeline = self.pipeline
        params = self.params
        group_of = [b.group for b in params]
        binding_of = [b.binding for b in params]
        last_values: dict[int, bytes] = {}
        name = self.name

        def bind_groups(resources: list) -> list:
            key = tuple(id(r) for r in resources)
            hit = cache.get(key)
            if hit is not None and all(h is r for h, r in zip(hit[1], resources)):
                return hit[0]
            entries: list[list] = [[] for _ in layouts]
            for g, b, r in zip(group_of, binding_of, resources):
                entries[g].append({"binding": b, "resource": {"buffer": r, "offset": 0, "size": r.size}})
            groups = [gpu.create_bind_group(layout=layouts[g], entries=entries[g]) for g in range(len(layouts))]
            if len(cache) >= _BIND_GROUP_CACHE:
                cache.clear()
            cache[key] = (groups, list(resources))
            return groups

        def launch(global_size: Sequence[int], local_size: "Sequence[int] | None", args: Sequence[Any]) -> None:
            if len(args) != len(params):
                raise TypeError(f"{name!r} takes {len(params)} arguments ({', '.join(b.name for b in params)}), "
                                f"got {len(args)}")
            resources = []
            for i, a in enumerate(args):
                u = uniforms.get(i)
                if u is not None and not hasattr(a, "gpu"):
                    data = np.asarray(a, dtype=u[1].base).tobytes()
                    if len(data) != u[1].itemsize:
                        raise TypeError(f"uniform {params[i].name!r} of {name!r} is {params[i].type}; got "
                                        f"{np.asarray(a).size} values")
                    if last_values.get(i) != data:
                        gpu.queue.write_buffer(u[0], 0, data)
                        last_values[i] = data
                    resources.append(u[0])
                    continue
                if type(a) is _UniformBox:
                    resources.append(a.gpu)
                    continue
                if getattr(a, "context", None) is not ctx or not hasattr(a, "gpu"):
                    raise TypeError(f"argument {params[i].name!r} of {name!r} must be a buffer of "
                                    f"{ctx.device.selector}, got {type(a).__name__}")
                if a.closed:
                    raise ClosedError(f"the buffer given for {params[i].name!r}")
                resources.append(a.gpu)
            groups = self._groups(global_size, local_size)
            try:
                encoder = gpu.create_command_encoder()
                compute = encoder.begin_compute_pass()
                compute.set_pipeline(pipeline)
                for g, bg in enumerate(bind_groups(resources)):
                    compute.set_bind_group(g, bg)
                compute.dispatch_workgroups(*groups)
                compute.end()
                gpu.queue.submit([encoder.finish()])
            except Exception as exc:
                raise driver_error("dispatchWorkgroups", exc, f"kernel {name!r}") from exc
        return launch

    def _values_launcher(self, arg_types: Sequence[Any]) -> Callable[..., None]:
        """A translated kernel's launcher: array arguments are the storage bindings in order, the
        value arguments go packed into the one ``pg_values`` uniform struct (the WGSL target's
        convention, ``_values``)."""
        arrays = [i for i, kind in enumerate(arg_types) if kind == "buffer"]
        if len(arrays) != len(self.params) - 1:
            raise TypeError(f"{self.name!r} binds {len(self.params) - 1} arrays; the launch passes {len(arrays)}")
        layout = ValuesLayout([(i, np.dtype(kind)) for i, kind in enumerate(arg_types) if kind != "buffer"])
        usage = wgpu().BufferUsage
        ctx = self.program.context
        values = ctx.gpu.create_buffer(size=layout.nbytes, usage=usage.UNIFORM | usage.COPY_DST)
        values_box = _UniformBox(values)
        inner = self.launcher(["buffer"] * len(self.params))
        name = self.name

        def launch(global_size: Sequence[int], local_size: "Sequence[int] | None", args: Sequence[Any]) -> None:
            if len(args) != len(arg_types):
                raise TypeError(f"{name!r} takes {len(arg_types)} arguments, got {len(args)}")
            data = layout.pack(args)
            if data != values_box.last:
                ctx.gpu.queue.write_buffer(values, 0, data)
                values_box.last = data
            inner(global_size, local_size, [args[i] for i in arrays] + [values_box])
        return launch

    def _kinds(self, args: Sequence[Any]) -> list:
        return ["buffer" if hasattr(a, "gpu") or b.space == "storage" else np.asarray(a).dtype.type
                if b.dtype is None else b.dtype.base.type
                for a, b in zip(args, self.params)]

    def launch(self, global_size: Sequence[int], local_size: "Sequence[int] | None", args: Sequence[Any]) -> None:
        self.launcher(self._kinds(args))(global_size, local_size, args)

    def __getitem__(self, config: Any) -> Callable[..., None]:
        global_size, local_size = parse_work_size(config)
        if global_size is None:
            raise ValueError(f"{self.name!r}[...] needs a global work size, e.g. k[(1024,)] or k[(1024, 64)]")

        def run(*args: Any) -> None:
            self.launch(global_size, local_size, args)
        return run
