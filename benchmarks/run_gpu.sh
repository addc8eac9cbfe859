#!/usr/bin/env bash
# The one command for the GPU machine (no package registry there): run the whole test suite
# on CUDA and on NVIDIA's OpenCL, then the CUDA and device-array benchmarks, from this
# checkout, without installing anything.
#
#   OUT=/some/dir bash benchmarks/run_gpu.sh [--quick] [pytest args, default: tests]
#   PYGPGPU_TEST_BACKENDS=cuda,opencl:nvidia NOBENCH=1 ...   NVIDIA's OpenCL beside PoCL, tests only
#   OUT=... bash benchmarks/run_gpu.sh --python script.py [args]   one script in the same set-up
#
# Our packages are pure Python: PYTHONPATH points at packages/*/src, and a throw-away folder
# of .dist-info stubs registers their `pygpgpu.backends` entry points, as an install would.
# If .gpu-carry/ holds ocl-icd-libopencl1*.deb (apt-get download ocl-icd-libopencl1 here),
# it is unpacked so that NVIDIA's OpenCL is usable too (for the mixed-backend test).
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-$PWD/gpu-out}
mkdir -p "$OUT"
QUICK=""
if [ "${1:-}" = "--quick" ]; then QUICK="--quick"; shift; fi
PY=${PYTHON:-python3}

for deb in .gpu-carry/ocl-icd-libopencl1*.deb; do
  [ -f "$deb" ] && dpkg -x "$deb" / && ldconfig
done

STUBS=$(mktemp -d /tmp/pygpgpu-dists.XXXXXX)
"$PY" - "$STUBS" <<'EOF'
import pathlib, re, sys, tomllib
stubs = pathlib.Path(sys.argv[1])
# Every package's version is dynamic: written once in pygpgpu-core's _version.py.
version_file = pathlib.Path("packages/pygpgpu-core/src/pygpgpu_core/_version.py").read_text()
shared_version = re.search(r'^__version__ = "([^"]+)"', version_file, re.M).group(1)
for pyproject in sorted(pathlib.Path("packages").glob("*/pyproject.toml")):
    project = tomllib.loads(pyproject.read_text())["project"]
    name, version = project["name"].replace("-", "_"), project.get("version", shared_version)
    info = stubs / f"{name}-{version}.dist-info"
    info.mkdir(parents=True, exist_ok=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {project['name']}\nVersion: {version}\n")
    lines = []
    for group, entries in project.get("entry-points", {}).items():
        lines.append(f"[{group}]")
        lines += [f"{k} = {v}" for k, v in entries.items()]
    (info / "entry_points.txt").write_text("\n".join(lines) + "\n")
EOF
SRC=$(ls -d "$PWD"/packages/*/src | paste -sd:)
# pure-Python dependencies the GPU machine lacks (platformdirs) import from carried wheels:
# .venv/bin/pip download -c requirements/constraints.txt --no-deps -d .gpu-carry platformdirs
WHEELS=$(ls "$PWD"/.gpu-carry/*-py3-none-any.whl 2>/dev/null | paste -sd:)
export PYTHONPATH="$SRC:$STUBS${WHEELS:+:$WHEELS}${PYTHONPATH:+:$PYTHONPATH}"
export PYTHONUNBUFFERED=1
export PYGPGPU_TEST_BACKENDS=${PYGPGPU_TEST_BACKENDS:-cuda,opencl}
# Test NVIDIA's OpenCL rather than the PoCL that is also installed there.
NV_OCL=$(ldconfig -p | awk '/libnvidia-opencl\.so\.1/ {print $NF; exit}')
[ -n "$NV_OCL" ] || NV_OCL=$(find /usr/local/nvidia /usr/lib /usr/lib64 -name 'libnvidia-opencl.so.1' 2>/dev/null | head -n 1)
if [ -n "$NV_OCL" ]; then
  ICDS=$(mktemp -d /tmp/pygpgpu-icd.XXXXXX)
  echo "$NV_OCL" > "$ICDS/nvidia.icd"
  export OCL_ICD_VENDORS=$ICDS
fi

{ nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader; "$PY" --version; } 2>&1 | tee "$OUT/machine.txt"
"$PY" -c "import pygpgpu_core.registry as r; print(r.diagnostics())" 2>&1 | tee -a "$OUT/machine.txt"
"$PY" -m pygpgpu info 2>&1 | tee "$OUT/pygpgpu-info.txt"   # versions, libraries, devices

if [ "${1:-}" = "--python" ]; then
  shift
  "$PY" "$@"
  rc=$?
  rm -rf "$STUBS"
  exit $rc
fi

[ $# -gt 0 ] || set -- tests
"$PY" -m pytest -q -ra -p no:cacheprovider "$@" 2>&1 | tee "$OUT/tests.log"
tests_rc=${PIPESTATUS[0]}
bench_rc=0
if [ -z "${NOBENCH:-}" ]; then  # NOBENCH=1: tests only
  "$PY" benchmarks/bench_cuda.py "$OUT/bench_cuda.json" $QUICK 2>&1 | tee "$OUT/bench_cuda.log"
  bench_rc=${PIPESTATUS[0]}
  "$PY" benchmarks/bench_arrays.py --json "$OUT/bench_arrays.json" $QUICK 2>&1 | tee "$OUT/bench_arrays.log"
fi
rm -rf "$STUBS"
echo "tests exit $tests_rc, benchmark exit $bench_rc (outputs in $OUT)"
exit $(( tests_rc != 0 || bench_rc != 0 ))
