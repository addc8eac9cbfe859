"""Regenerate packages/pygpgpu-translate/src/pygpgpu_translate/_c_words.py: the identifiers that
OpenCL C (PoCL), CUDA C++ (NVRTC) and HIP C++ (hiprtc) reserve at file scope.

The compilers themselves decide. Candidates are every identifier token of the headers they
compile against (NVRTC's builtin headers as embedded in libnvrtc-builtins, clang's
OpenCL/CUDA/HIP headers, PoCL's kernel headers, ROCm's HIP headers) plus the C, C++ and
OpenCL C keywords and vector type names. Each candidate is compiled as ``typedef int NAME;``
(a file-scope declaration: it fails for keywords, macros, functions, types, variables and
namespaces the compiler already knows); every failure is re-checked with padding lines so one
bad line cannot blame the next. The non-underscore macros each toolchain defines are added
(function-like macros do not break a typedef but do break ``void NAME(...)``), and so are the
identifiers pygpgpu's own prelude and gpu.* spellings use.

Needs: the nvidia-cuda-nvrtc wheel (.venv), hiprtc (libamdhip64, ROCm), clang-15 and PoCL's
headers in /usr/share/pocl/include (the packages .ci/run installs). Run from the repository root:

    .venv/bin/python scripts/c_words.py
"""
from __future__ import annotations

import glob
import os
import re
import subprocess
import sys
import tempfile
import textwrap

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "packages/pygpgpu-translate/src/pygpgpu_translate/_c_words.py")
POCL = "/usr/share/pocl/include"
IDENT = re.compile(r"\b[A-Za-z][A-Za-z0-9_]*\b")

# C, C++20 and OpenCL C keywords and reserved words, and every vector type name of the three dialects
KEYWORDS = """
auto break case char const continue default do double else enum extern float for goto if inline int long register
restrict return short signed sizeof static struct switch typedef union unsigned void volatile while
alignas alignof and and_eq asm bitand bitor bool catch char8_t char16_t char32_t class compl concept consteval
constexpr constinit const_cast co_await co_return co_yield decltype delete dynamic_cast explicit export false final
friend import module mutable namespace new noexcept not not_eq nullptr operator or or_eq override private protected
public reinterpret_cast requires static_assert static_cast template this thread_local throw true try typeid typename
using virtual wchar_t xor xor_eq
kernel global local constant private generic read_only write_only read_write uniform pipe half quad complex imaginary
image1d_t image1d_array_t image1d_buffer_t image2d_t image2d_array_t image2d_depth_t image2d_array_depth_t
image2d_msaa_t image2d_array_msaa_t image2d_msaa_depth_t image2d_array_msaa_depth_t image3d_t sampler_t event_t
queue_t clk_event_t reserve_id_t ndrange_t cl_mem_fence_flags uchar ushort uint ulong size_t ptrdiff_t intptr_t
uintptr_t main printf NULL
""".split()
KEYWORDS += [f"{t}{w}" for t in ("bool", "char", "uchar", "short", "ushort", "int", "uint", "long", "ulong", "float",
                                  "double", "half", "quad") for w in (1, 2, 3, 4, 8, 16)]
KEYWORDS += [f"{t}{w}" for t in ("longlong", "ulonglong") for w in (1, 2, 3, 4)]
KEYWORDS += [f"make_{v}" for v in KEYWORDS if v[-1].isdigit()]      # CUDA/HIP declare these implicitly


def candidates() -> list[str]:
    import nvidia
    names = set(KEYWORDS)
    for lib in glob.glob(os.path.join(os.path.dirname(nvidia.__path__[0]), "nvidia/*/lib/libnvrtc-builtins.so*")):
        names |= set(IDENT.findall(subprocess.run(["strings", "-n", "4", lib], capture_output=True,
                                                  text=True).stdout))
    clang_inc = glob.glob("/usr/lib/llvm-*/lib/clang/*/include")
    files = []
    for inc in clang_inc:
        files += glob.glob(f"{inc}/__clang_cuda_*.h") + glob.glob(f"{inc}/__clang_hip_*.h")
        files += glob.glob(f"{inc}/opencl-c*.h") + glob.glob(f"{inc}/cuda_wrappers/*")
    files += glob.glob(f"{POCL}/*.h") + glob.glob("/usr/include/hip/**/*.h*", recursive=True)
    for f in files:
        with open(f, errors="replace") as fh:
            names |= set(IDENT.findall(fh.read()))
    return sorted(n for n in names if not n.startswith("_"))


def probe(names, compile_batch, chunk=3000):
    """Names whose ``typedef int NAME;`` does not compile. ``compile_batch(names)`` returns the
    1-based error lines, an empty set when it compiled, None when it failed without lines."""
    out, pending = set(), list(names)
    while pending:
        batch, pending = pending[:chunk], pending[chunk:]
        while batch:
            lines = compile_batch(batch)
            if lines is None:
                if len(batch) == 1:
                    out.add(batch[0])
                    break
                pending = batch[len(batch) // 2:] + pending
                batch = batch[:len(batch) // 2]
                continue
            if not lines:
                break
            out.update(batch[i - 1] for i in lines if 0 < i <= len(batch))
            batch = [n for i, n in enumerate(batch, 1) if i not in lines]
    flagged, confirmed = sorted(out), []
    for i in range(0, len(flagged), 80):           # NVRTC stops after 100 errors
        lines, owner = [], {}
        for k, n in enumerate(flagged[i:i + 80]):  # padding: a broken line may break the next one
            owner[len(lines) + 1] = n
            lines += [n] + [f"pygpad{k}x{j}" for j in range(3)]
        bad = compile_batch(lines)
        confirmed += [owner[n] for n in (bad or ()) if n in owner]
    return sorted(confirmed)


def typedefs(names):
    return "\n".join(f"typedef int {n};" for n in names) + "\n"


def nvrtc_batch(names):
    from pygpgpu_cuda import compile_cuda
    try:
        compile_cuda(typedefs(names))
        return set()
    except Exception as exc:
        log = str(getattr(exc, "log", "")) + str(exc)
        return {int(m) for m in re.findall(r"kernel\.cu\((\d+)\): error", log)} or None


def hiprtc_batch(names):
    from pygpgpu_hip import compiler
    try:
        compiler.compile_hip(typedefs(names), "gfx1030", ["-ferror-limit=0"])
        return set()
    except Exception as exc:
        log = str(getattr(exc, "log", "")) + str(exc)
        return {int(m) for m in re.findall(r"kernel\.hip:(\d+):\d+: error", log)} or None


def clang_cl(std, extra, source):
    with tempfile.NamedTemporaryFile("w", suffix=".cl", delete=False) as f:
        f.write(source)
    try:
        return subprocess.run([_clang(), "-x", "cl", f"-cl-std={std}", f"-I{POCL}", "-include", f"{POCL}/_kernel.h",
                               "-Xclang", "-cl-ext=+all", *extra, f.name], capture_output=True, text=True), f.name
    finally:
        os.unlink(f.name)


def _clang():
    for name in ("clang-15", "clang"):
        if subprocess.run(["which", name], capture_output=True).returncode == 0:
            return name
    sys.exit("clang is needed for the OpenCL C list")


def opencl_batch(std):
    def run(names):
        proc, path = clang_cl(std, ["-ferror-limit=0", "-fsyntax-only"], typedefs(names))
        if proc.returncode == 0:
            return set()
        base = re.escape(os.path.basename(path))
        return {int(m) for m in re.findall(base + r":(\d+):\d+: error", proc.stderr)} or None
    return run


def macros_of(dm_text):
    return {m for m in re.findall(r"^#define ([A-Za-z]\w*)", dm_text, re.M)}


def opencl_macros():
    out = set()
    for std in ("CL1.2", "CL3.0"):
        proc, _ = clang_cl(std, ["-E", "-dM"], "")
        out |= macros_of(proc.stdout)
    return out


def nvrtc_macros():
    import nvidia
    out = set()
    for lib in glob.glob(os.path.join(os.path.dirname(nvidia.__path__[0]), "nvidia/*/lib/libnvrtc-builtins.so*")):
        text = subprocess.run(["strings", "-n", "4", lib], capture_output=True, text=True).stdout
        out |= set(re.findall(r"^\s*#\s*define\s+([A-Za-z]\w*)", text, re.M))
    return out


def hip_macros():
    with tempfile.NamedTemporaryFile("w", suffix=".hip", delete=False) as f:
        f.write("")
    try:
        proc = subprocess.run([_clang(), "-x", "hip", "--cuda-device-only", "-nogpulib", "--offload-arch=gfx1030", "-E",
                               "-dM", "-include", "hip/hip_runtime.h", "--rocm-path=/usr", "-D__HIPCC_RTC__", f.name],
                              capture_output=True, text=True)
    finally:
        os.unlink(f.name)
    return macros_of(proc.stdout)


def pygpgpu_words():
    """Identifiers pygpgpu's generated code itself relies on at file scope, in any dialect: the
    functions its prelude and gpu.* spellings call, the builtin variables they read, the type
    names it prints (and CUDA's make_<vector> constructors)."""
    sys.path.insert(0, os.path.join(ROOT, "packages/pygpgpu-translate/src"))
    from pygpgpu_translate._dialects import DIALECTS
    from pygpgpu_translate._types import FLOAT32, FLOAT64
    from pygpgpu_translate.prelude import PRELUDE_NAMES, c_type, prelude_source
    from pygpgpu_translate.prelude._types import SCALARS, VECTORS
    called = re.compile(r"\b([A-Za-z]\w*)\s*\(")
    called_or_read = re.compile(r"\b([A-Za-z]\w*)\s*[(.]")      # threadIdx.x
    words = set()
    for d in ("opencl", "cuda", "hip"):
        words |= set(called.findall(prelude_source(d, sorted(PRELUDE_NAMES))))
        for t in SCALARS + VECTORS:
            words |= set(IDENT.findall(c_type(d, t)))
    words |= {f"make_{v}" for v in VECTORS} | {f"make_{t}{w}" for t in ("longlong", "ulonglong") for w in (1, 2, 3, 4)}
    for d in DIALECTS.values():          # the gpu.* spellings of every dialect
        texts = [d.work_item(w, 0) for w in d.work_items] + [d.barrier("both"), d.mem_fence("both")]
        texts += [d.native_math(n, t) for n in d.native32 for t in (FLOAT32, FLOAT64)]
        for text in texts:
            words |= set(called_or_read.findall(text))
    # the hand-kept list this module replaced
    words |= set("""main sqrt exp log sin cos tan floor ceil abs min max round sign clamp mix step dot cross length
distance normalize barrier threadIdx blockIdx blockDim gridDim warpSize select vload vstore""".split())
    return {w for w in words if not w.startswith(("_", "pg_", "pyg_"))}


def blob(names) -> str:
    return "\n".join(textwrap.wrap(" ".join(sorted(names)), 116, break_on_hyphens=False))


def main():
    cands = candidates()
    print(f"{len(cands)} candidates", file=sys.stderr)
    opencl = set(probe(cands, opencl_batch("CL1.2"))) | set(probe(cands, opencl_batch("CL3.0"))) | opencl_macros()
    cuda = set(probe(cands, nvrtc_batch)) | nvrtc_macros()
    hip = set(probe(cands, hiprtc_batch)) | hip_macros()
    ours = pygpgpu_words()
    # keywords are listed whole: a qualifier (global, const) passes the typedef probe with a warning
    lists = {k: {n for n in v if not n.startswith("_")} for k, v in
             (("KEYWORDS", set(KEYWORDS)), ("OPENCL_C", opencl), ("CUDA", cuda), ("HIP", hip), ("PYGPGPU", ours))}
    text = ['"""Identifiers that OpenCL C (PoCL), CUDA C++ (NVRTC) and HIP C++ (hiprtc) reserve at file scope,',
            "and those pygpgpu's own generated code relies on: keywords, types, builtin functions and variables,",
            "namespaces, object- and function-like macros. Names starting with an underscore are left out (_names",
            "mangles all of them). Data for _names.c_identifier.",
            "",
            "Generated by scripts/c_words.py, which asks the compilers themselves; do not edit by hand.",
            '"""', ""]
    for name, words in lists.items():
        text.append(f'{name} = frozenset("""')
        text.append(blob(words))
        text.append('""".split())')
        text.append("")
    with open(OUT, "w") as f:
        f.write("\n".join(text))
    print({k: len(v) for k, v in lists.items()}, file=sys.stderr)


if __name__ == "__main__":
    main()
