"""Pickling ``@kernel`` objects: by reference like functions, or by value with their source.

- A kernel that another process can import (a module-level ``@kernel`` in an importable module,
  a kernel method of an importable class) pickles by reference: module + qualified name, looked
  up again on the other side, exactly as ``pickle`` treats a function.
- A kernel it cannot import (defined in ``__main__``, a notebook cell, inside a function) pickles
  by value with cloudpickle when cloudpickle is installed: the Python function (code, referenced
  globals and helpers) plus the *source text* of the kernel and of the helpers pickled with it.
  The translator reads a kernel's source through ``inspect``/``linecache``, and the receiving
  process may not have the file (a notebook cell, a remote Dask worker), so the text is put back
  into ``linecache`` under the original file name before the kernel is rebuilt there.
- Without cloudpickle a ``__main__`` kernel still pickles by reference (what ``multiprocessing``
  spawn/forkserver workers need, since they import the main script); anything else raises
  ``pickle.PicklingError`` saying what to do.

Only the definition travels: compiled programs, launch plans, translations and device handles
are per process (rebuilt on first call there, from the disk caches when possible).
"""
from __future__ import annotations

import hashlib
import importlib
import inspect
import linecache
import pickle
import sys
import threading
import types

__all__ = ["configured_view", "kernel_by_reference", "kernel_by_value", "reduce_configured", "reduce_kernel"]


# ---- by reference -------------------------------------------------------------------------------
def _lookup(module: str, qualname: str):
    obj = importlib.import_module(module)
    for part in qualname.split("."):
        obj = getattr(obj, part)
    return obj


def _importable_as_itself(kf) -> bool:
    """Whether ``module.qualname`` names this very kernel (so another process can import it)."""
    module, qualname = kf.__module__, kf.__qualname__
    if "<locals>" in qualname or module not in sys.modules:
        return False
    try:
        return _lookup(module, qualname) is kf
    except Exception:  # noqa: BLE001 - any failing lookup only means: not by reference
        return False


def kernel_by_reference(module: str, qualname: str):
    """Unpickle a kernel pickled by reference: import ``module`` and walk ``qualname``."""
    try:
        return _lookup(module, qualname)
    except (ImportError, AttributeError) as exc:
        raise pickle.UnpicklingError(
            f"kernel {module}.{qualname} was pickled by reference, but this process cannot import it ({exc}); "
            "make the module importable here (same code and sys.path), or install cloudpickle in the sending "
            "process for kernels defined in __main__ or a notebook") from None


def _cloudpickle_by_value(module: str) -> bool:
    """Whether the user registered ``module`` with ``cloudpickle.register_pickle_by_value``."""
    cp = sys.modules.get("cloudpickle")
    if cp is None:
        return False
    try:
        return bool(cp.cloudpickle._is_registered_pickle_by_value(sys.modules[module]))
    except (AttributeError, KeyError, TypeError):     # another cloudpickle version: assume not
        return False


# ---- by value -----------------------------------------------------------------------------------
def _travels_with(helper, func) -> bool:
    """Whether ``helper``, named by ``func``, is pickled by value along with it (same module,
    ``__main__`` or not importable) rather than imported by name on the other side."""
    m = helper.__module__
    return m == func.__module__ or m == "__main__" or m not in sys.modules


def _named_functions(func):
    """The plain Python functions ``func``'s code names in its globals (kernels: their function)."""
    names: set = set()
    todo = [func.__code__]
    while todo:
        code = todo.pop()
        names.update(code.co_names)
        todo.extend(c for c in code.co_consts if isinstance(c, types.CodeType))
    g = func.__globals__
    for name in sorted(names):
        value = g.get(name)
        value = getattr(value, "py_func", value)       # another kernel called as a helper
        if isinstance(value, types.FunctionType):
            yield value


def _source_spans(func, sources: dict, files: dict, seen: set) -> None:
    """The source of ``func`` and of the helpers pickled by value with it: ``sources`` gets
    filename -> {first line: text}, ``files`` (qualname, first code line) -> filename."""
    if func in seen:
        return
    seen.add(func)
    try:
        lines, start = inspect.getsourcelines(func)
        filename = inspect.getsourcefile(func) or func.__code__.co_filename
    except (OSError, TypeError):
        return        # the translator will say what is missing, in the receiving process
    sources.setdefault(filename, {})[max(start, 1)] = "".join(lines)
    files[(func.__qualname__, func.__code__.co_firstlineno)] = filename
    for helper in _named_functions(func):
        if _travels_with(helper, func):
            _source_spans(helper, sources, files, seen)


def _register_sources(sources: dict) -> None:
    """Make ``inspect.getsource`` find the carried text: a file this process already has with the
    same text is left alone; otherwise the text goes into ``linecache`` under the original name
    (mtime None: ``linecache.checkcache`` keeps such entries). Lines that were not carried read
    ``pass`` at column 0, which ends the block ``inspect`` reads for each function where the real
    file has other code."""
    for filename, spans in sources.items():
        have = linecache.getlines(filename)
        if all(have[start - 1:start - 1 + len(text.splitlines())] == text.splitlines(True)
               for start, text in spans.items()):
            continue
        cached = linecache.cache.get(filename)
        # carried before: a full entry (size, mtime None, lines, name); a lazy one is a 1-tuple
        lines = list(cached[2]) if cached is not None and len(cached) == 4 and cached[1] is None else []
        for start, text in sorted(spans.items()):
            new = text.splitlines(True)
            end = start - 1 + len(new)
            if len(lines) < end:
                lines.extend("pass\n" for _ in range(end - len(lines)))
            lines[start - 1:end] = new
        linecache.cache[filename] = (sum(map(len, lines)), None, lines, filename)


def _with_filename(code: types.CodeType, filename: str) -> types.CodeType:
    consts = tuple(_with_filename(c, filename) if isinstance(c, types.CodeType) else c for c in code.co_consts)
    return code.replace(co_filename=filename, co_consts=consts)


def _restore_filenames(func, files: dict, seen: set) -> None:
    """cloudpickle renames the code of by-value functions ``<dynamic-code>``: give the kernel and
    its helpers their file names back, so their carried source is found (and errors point there)."""
    if func in seen:
        return
    seen.add(func)
    filename = files.get((func.__qualname__, func.__code__.co_firstlineno))
    if filename is not None and func.__code__.co_filename != filename:
        func.__code__ = _with_filename(func.__code__, filename)
    for helper in _named_functions(func):
        _restore_filenames(helper, files, seen)


# One kernel object per distinct payload in a process: a pool or Dask worker that receives the
# same kernel with every task reuses its compiled plans instead of building a new kernel each time.
_by_value: dict = {}
_by_value_lock = threading.Lock()


def kernel_by_value(payload: bytes, sources: dict, files: dict, options: dict):
    """Unpickle a kernel pickled by value: put its source back, load the function, decorate it."""
    # the options are part of the key: one function pickled as an exact and as a fastmath kernel
    key = hashlib.sha256(payload + repr(sorted((f, sorted(s.items())) for f, s in sources.items())).encode()
                         + repr(sorted(options.items())).encode()).digest()
    with _by_value_lock:
        hit = _by_value.get(key)
        if hit is not None:
            return hit
        _register_sources(sources)
        func = pickle.loads(payload)
        _restore_filenames(func, files, set())
        from ._kernel import KernelFunction

        kf = KernelFunction(staticmethod(func) if options.get("static") else func, backend=options.get("backend"),
                            default_float=options.get("default_float"), debug=options.get("debug", False),
                            fastmath=options.get("fastmath", False), contract=options.get("contract", True))
        if len(_by_value) > 256:
            _by_value.clear()
        _by_value[key] = kf
        return kf


def reduce_kernel(kf) -> tuple:
    """``KernelFunction.__reduce__``."""
    module, qualname = kf.__module__, kf.__qualname__
    if module != "__main__" and not _cloudpickle_by_value(module) and _importable_as_itself(kf):
        return kernel_by_reference, (module, qualname)
    try:
        import cloudpickle
    except ImportError:
        cloudpickle = None
    if cloudpickle is None:
        if _importable_as_itself(kf):     # __main__: spawn/forkserver workers import the main script
            return kernel_by_reference, (module, qualname)
        raise pickle.PicklingError(
            f"kernel {qualname} (module {module}) cannot be pickled: another process cannot import it by name. "
            "Define it at module level in an importable module, or install cloudpickle (pip install cloudpickle) "
            "to pickle it by value with its source")
    sources: dict = {}
    files: dict = {}
    _source_spans(kf.py_func, sources, files, set())
    options = {"backend": kf.backend, "default_float": kf.default_float.name, "debug": kf.debug,
               "fastmath": kf.fastmath, "contract": kf.contract, "static": kf._static}
    return kernel_by_value, (cloudpickle.dumps(kf.py_func), sources, files, options)


# ---- configured views (k["opencl:1"], instance.method) -----------------------------------------
def configured_view(kf, selector, global_size, local_size, bound_self):
    """Unpickle ``k[...]`` or a kernel method bound to its instance."""
    from ._kernel import _Config, _Configured

    if selector is None and global_size is None and local_size is None and bound_self is None:
        return kf
    return _Configured(kf, _Config(selector, global_size, local_size), bound_self)


def reduce_configured(view) -> tuple:
    """``_Configured.__reduce__``: the kernel, the bracket configuration and the bound instance
    (pickled with its arrays); never the resolved device or the child-view cache."""
    c = view._config
    return configured_view, (view._kf, c.selector, c.global_size, c.local_size, view._bound_self)
