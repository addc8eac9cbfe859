"""Why OpenCL lists no device although a driver is registered, in words a user can act on.

The usual case is PoCL failing to start: its ICD file is registered, the ICD loader loads it,
and then its platform reports no device (or no platform comes up at all). Telling that user
to install PoCL would be wrong; the cause PoCL itself prints only with ``POCL_DEBUG`` is most
often its kernel cache directory, which it creates at start-up. PoCL takes that directory from
``POCL_CACHE_DIR``, else ``$XDG_CACHE_HOME/pocl/kcache`` (when set and not empty), else
``$HOME/.cache/pocl/kcache``, else ``/tmp/pocl/kcache`` (``uncached`` instead of ``kcache``
with ``POCL_KERNEL_CACHE=0``).
"""
from __future__ import annotations

import os
from typing import Mapping

__all__ = ["no_device_reason", "no_platform_reason", "pocl_abort_reason", "pocl_cache_dir", "registered_icds",
           "unwritable_reason"]

_DEFAULT_VENDORS = "/etc/OpenCL/vendors"
_INSTALL = ("install one, e.g. `apt-get install pocl-opencl-icd` for the CPU or your GPU vendor's OpenCL driver")


def registered_icds() -> tuple[str, dict[str, str]]:
    """(where the loader looks, {icd file: library it names}). ``OCL_ICD_VENDORS`` may name a
    directory or a single ``.icd`` file, as the ocl-icd loader accepts."""
    where = os.environ.get("OCL_ICD_VENDORS", "").strip() or _DEFAULT_VENDORS
    if os.path.isfile(where):
        files = [where]
    else:
        try:
            files = sorted(os.path.join(where, n) for n in os.listdir(where) if n.endswith(".icd"))
        except OSError:
            files = []
    icds = {}
    for path in files:
        try:
            with open(path, encoding="utf-8", errors="replace") as fh:
                icds[path] = fh.read().strip()
        except OSError:
            icds[path] = "(unreadable)"
    return where, icds


def _is_pocl(icd_path: str, library: str) -> bool:
    return "pocl" in os.path.basename(icd_path).lower() or "pocl" in library.lower()


def pocl_cache_dir(env: Mapping[str, str] | None = None) -> tuple[str, str]:
    """(the kernel cache directory PoCL will create, the variable it came from)."""
    environ = os.environ if env is None else env
    leaf = "pocl/uncached" if environ.get("POCL_KERNEL_CACHE", "").strip().lower() in ("0", "false", "no", "off") \
        else "pocl/kcache"
    if environ.get("POCL_CACHE_DIR"):
        return environ["POCL_CACHE_DIR"], "POCL_CACHE_DIR"
    if environ.get("XDG_CACHE_HOME"):
        return os.path.join(environ["XDG_CACHE_HOME"], leaf), "XDG_CACHE_HOME"
    if "HOME" in environ:
        return os.path.join(environ["HOME"], ".cache", leaf), "HOME"
    return os.path.join("/tmp", leaf), "the default (HOME is not set)"


def pocl_abort_reason(env: Mapping[str, str] | None = None) -> str | None:
    """Why starting PoCL would kill this process, or None. PoCL 3 fails an assertion (SIGABRT,
    no error code to report) when ``POCL_CACHE_DIR`` is set but empty, and the ICD loader starts
    every registered driver on the first ``clGetPlatformIDs``: with PoCL registered, that call
    must not be made."""
    environ = os.environ if env is None else env
    if environ.get("POCL_CACHE_DIR") != "":
        return None
    _where, icds = registered_icds()
    if not any(_is_pocl(path, library) for path, library in icds.items()):
        return None
    return ("POCL_CACHE_DIR is set but empty, which makes PoCL abort the whole process as it starts (an "
            "assertion in pocl_cache_init_topdir), so OpenCL is not started; unset it or point it at a writable "
            "directory")


def unwritable_reason(path: str) -> str | None:
    """Why ``path`` cannot be created or written (checked without creating anything), or None."""
    probe = os.path.abspath(path)
    while not os.path.exists(probe):
        parent = os.path.dirname(probe)
        if parent == probe:
            return None
        probe = parent
    if not os.path.isdir(probe):
        return f"{probe} is a file, not a directory"
    if not os.access(probe, os.W_OK | os.X_OK):
        return f"{probe} is not writable by this user"
    return None


def _pocl_failed(icd: str, what: str, library: str = "") -> str:
    causes = []
    if os.path.isabs(library) and not os.path.exists(library):
        causes.append(f"the library its ICD file names, {library}, does not exist; reinstall the PoCL ICD package "
                      "or correct the file")
    path, origin = pocl_cache_dir()
    problem = unwritable_reason(path)
    if problem:
        causes.append(f"PoCL cannot create its kernel cache directory {path} (taken from {origin}): {problem}; "
                      "set POCL_CACHE_DIR to a writable directory")
    selected = os.environ.get("POCL_DEVICES", "").strip()
    if selected:
        causes.append(f"POCL_DEVICES={selected!r} may name drivers this PoCL build lacks; unset it or set "
                      "POCL_DEVICES=pthread")
    head = f"PoCL is installed ({icd}) but failed to start: {what}"
    if causes:
        return f"{head}. Likely cause: {'; '.join(causes)}"
    return (f"{head}. Run with POCL_DEBUG=all to see PoCL's own error message"
            f"{'' if not library else ' (OCL_ICD_DEBUG=7 shows why the ICD loader skipped it)'}")


def no_platform_reason(library: str) -> str:
    """The message for a loaded ICD loader that reports no platform."""
    where, icds = registered_icds()
    if not icds:
        elsewhere = " (OCL_ICD_VENDORS names another place)" if where == _DEFAULT_VENDORS else " (from OCL_ICD_VENDORS)"
        return f"{library} loaded but no OpenCL platform (driver) is registered in {where}{elsewhere}; {_INSTALL}"
    listing = ", ".join(f"{os.path.basename(p)} -> {lib}" for p, lib in icds.items())
    pocl = [(p, lib) for p, lib in icds.items() if _is_pocl(p, lib)]
    what = f"{library} found {listing} in {where} but no platform came up"
    if pocl:
        return _pocl_failed(f"{pocl[0][0]} -> {pocl[0][1]}", what, pocl[0][1])
    return (f"{what}: the driver library failed to load or to initialise; check that it exists and matches this "
            "machine, and run with OCL_ICD_DEBUG=7 to see why the loader skipped it")


def no_device_reason(platforms: list) -> str:
    """The message for platforms that all report no device."""
    names = ", ".join(f"{p.name!r}" for p in platforms)
    pocl = [p for p in platforms if "portable computing language" in p.name.lower()]
    if pocl:
        _where, icds = registered_icds()
        icd = next((f"{p} -> {lib}" for p, lib in icds.items() if _is_pocl(p, lib)), f"platform {pocl[0].version!r}")
        return _pocl_failed(icd, f"its platform loads but reports no device (platforms: {names})")
    return (f"the OpenCL platform(s) {names} load but report no device; check that the device is visible to this "
            "user and that the driver matches the kernel module")
