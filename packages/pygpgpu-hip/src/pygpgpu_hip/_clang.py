"""The offline compile path: the HIP SDK's clang (or hipcc) run as a subprocess.

Used when hiprtc is missing or broken (e.g. the Windows HIP SDK), or when
``PYGPGPU_HIP_COMPILER=clang`` / ``hipcc`` asks for it. It produces a raw code object
(ELF) for one target: ``-x hip --cuda-device-only --offload-arch=<target>
--no-gpu-bundle-output -c``. Extra include folders come from ``PYGPGPU_HIP_INCLUDES``
(os.pathsep-separated); Debian's layout needs ``--hip-device-lib-path``.
"""
from __future__ import annotations

import os
import shutil
import struct
import subprocess
import sys
import tempfile
from pathlib import Path

from pygpgpu_core.errors import BackendUnavailable, CompileError

from ._archs import device_lib_dir
from ._library import rocm_roots

__all__ = ["find_compiler", "rocm_include_root", "compile_offline", "compiler_version", "unbundle"]

_EXE = ".exe" if sys.platform == "win32" else ""


def _clang_candidates() -> list[str]:
    out = []
    override = os.environ.get("PYGPGPU_HIP_CLANG")
    if override:
        out.append(override)
    if os.environ.get("HIP_CLANG_PATH"):
        out.append(os.path.join(os.environ["HIP_CLANG_PATH"], "clang" + _EXE))
    for root in rocm_roots():
        if root == Path("/usr"):
            continue  # the distribution's clang is found through PATH below
        out += [str(root / "llvm" / "bin" / ("clang" + _EXE)), str(root / "bin" / ("clang" + _EXE))]
    for name in ["clang"] + [f"clang-{v}" for v in range(22, 13, -1)]:
        found = shutil.which(name)
        if found:
            out.append(found)
    return out


def find_compiler(kind: str = "clang") -> str:
    """Path of the clang (or hipcc) that can build HIP for AMD; BackendUnavailable if none."""
    if kind == "hipcc":
        path = os.environ.get("PYGPGPU_HIP_HIPCC") or shutil.which("hipcc")
        for root in rocm_roots():
            hipcc = root / "bin" / ("hipcc" + (".bat" if sys.platform == "win32" else ""))
            if not path and hipcc.exists():
                path = str(hipcc)
        if not path:
            raise BackendUnavailable("hip", "hipcc was not found on PATH nor under $ROCM_PATH/bin; install hipcc "
                                            "or set PYGPGPU_HIP_HIPCC")
        return path
    for cand in _clang_candidates():
        if os.path.isfile(cand) and os.access(cand, os.X_OK) and _targets_amdgcn(cand):
            return cand
    raise BackendUnavailable(
        "hip", "no clang able to compile HIP for AMD GPUs was found (looked at $PYGPGPU_HIP_CLANG, $HIP_CLANG_PATH, "
               "$ROCM_PATH/llvm/bin and clang on PATH); install the HIP SDK / hipcc or set PYGPGPU_HIP_CLANG"
    )


_amdgcn_cache: dict = {}


def _targets_amdgcn(clang: str) -> bool:
    if clang not in _amdgcn_cache:
        try:
            out = subprocess.run([clang, "-print-targets"], capture_output=True, text=True, timeout=30).stdout
            _amdgcn_cache[clang] = "amdgcn" in out
        except (OSError, subprocess.SubprocessError):
            _amdgcn_cache[clang] = False
    return _amdgcn_cache[clang]


def compiler_version(path: str) -> str:
    """The first line of ``<compiler> --version`` (part of the binary cache key)."""
    env = dict(os.environ, HIP_PLATFORM="amd")
    try:
        out = subprocess.run([path, "--version"], capture_output=True, text=True, timeout=60, env=env).stdout
    except (OSError, subprocess.SubprocessError) as exc:
        return f"{path} (version unknown: {exc})"
    return f"{path}: " + " | ".join(line.strip() for line in out.splitlines()[:2])


def rocm_include_root() -> "Path | None":
    """The install prefix whose include/hip/hip_runtime.h clang should use (``--rocm-path``)."""
    for root in rocm_roots():
        if (root / "include" / "hip" / "hip_runtime.h").exists():
            return root
    return None


def hip_version(root: "Path | None") -> "str | None":
    """The HIP version of an install ("5.2.21153"), which clang needs to use the HIP headers.

    Without ``--hip-version`` clang 15 misreads Debian's layout as HIP 3.5 and skips the
    runtime wrapper header, so even ``__global__`` is unknown. Read from share/hip/version,
    else from the runtime library.
    """
    if root is not None:
        try:
            fields = dict(line.split("=", 1) for line in (root / "share" / "hip" / "version").read_text().splitlines()
                          if "=" in line and not line.startswith("#"))
            parts = [fields.get(k, "").strip() for k in ("HIP_VERSION_MAJOR", "HIP_VERSION_MINOR", "HIP_VERSION_PATCH")]
            if all(p.isdigit() for p in parts):
                return ".".join(parts)
        except (OSError, ValueError):
            pass
    try:
        from ._driver import format_version, runtime_version

        return format_version(runtime_version())
    except Exception:
        return None


def _include_dirs() -> list[str]:
    raw = os.environ.get("PYGPGPU_HIP_INCLUDES", "")
    return [p for p in raw.split(os.pathsep) if p.strip()]


def unbundle(blob: bytes, target: str) -> bytes:
    """The code object for ``target`` out of a clang offload bundle (returns ``blob`` if not a bundle)."""
    magic = b"__CLANG_OFFLOAD_BUNDLE__"
    if not blob.startswith(magic):
        return blob
    (count,) = struct.unpack_from("<Q", blob, len(magic))
    pos = len(magic) + 8
    for _ in range(count):
        offset, size, id_len = struct.unpack_from("<QQQ", blob, pos)
        pos += 24
        entry_id = blob[pos:pos + id_len].decode(errors="replace")
        pos += id_len
        if entry_id.startswith(("hip", "hipv4")) and "amdgcn" in entry_id and size:
            if entry_id.endswith("-" + target) or entry_id.split("-")[-1].split(":")[0] == target.split(":")[0]:
                return blob[offset:offset + size]
    raise CompileError(f"the compiler's offload bundle holds no code object for {target}")


def compile_offline(source: str, target: str, options: "list[str]", name: str, kind: str = "clang") -> tuple[bytes, str]:
    """Compile ``source`` for one validated ``target``; returns (code object, compiler messages)."""
    compiler = find_compiler(kind)
    args = [compiler, "-x", "hip", "--cuda-device-only", f"--offload-arch={target}", "-O3", "-c"]
    if kind == "clang":
        args.append("--no-gpu-bundle-output")
        root = rocm_include_root()
        if root is not None:
            args.append(f"--rocm-path={root}")
        version = hip_version(root)
        if version:
            args.append(f"--hip-version={version}")
        libs = device_lib_dir()
        if libs is not None:
            args.append(f"--hip-device-lib-path={libs}")
    # hiprtc pre-includes the HIP runtime header; do the same so one source builds both ways.
    args += ["-include", "hip/hip_runtime.h"]
    for folder in _include_dirs():
        args.append(f"-I{folder}")
    args += list(options)
    env = dict(os.environ, HIP_PLATFORM="amd")  # hipcc would pick NVIDIA when nvcc is on PATH
    with tempfile.TemporaryDirectory(prefix="pygpgpu-hip-") as tmp:
        src = Path(tmp) / (Path(name).stem or "kernel")
        src = src.with_suffix(".hip")
        out = Path(tmp) / "kernel.co"
        src.write_text(source)
        cmd = args + ["-o", str(out), str(src)]
        try:
            proc = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=600)
        except (OSError, subprocess.SubprocessError) as exc:
            raise CompileError(f"running {compiler} failed: {exc}", source=source) from exc
        log = (proc.stderr + proc.stdout).replace(str(src), name)
        if proc.returncode != 0 or not out.exists():
            raise CompileError(f"{os.path.basename(compiler)} could not compile {name} (exit status {proc.returncode})",
                               log=log or " ".join(cmd), source=source)
        return unbundle(out.read_bytes(), target), log
