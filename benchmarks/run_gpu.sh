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
# it is unpacked so that NVIDIA's OpenCL is usable too (for the mixed-backend test); so is
# libvulkan1*.deb (apt-get download libvulkan1), the Vulkan loader the webgpu backend's wgpu needs.
# Wheels in .gpu-carry/ go on PYTHONPATH: pure ones (*-py3-none-any) as they are, binary ones
# (wgpu, cffi) unzipped into a temporary folder when their tags suit this Python and machine.
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-$PWD/gpu-out}
mkdir -p "$OUT"
QUICK=""
if [ "${1:-}" = "--quick" ]; then QUICK="--quick"; shift; fi
PY=${PYTHON:-python3}

for deb in .gpu-carry/ocl-icd-libopencl1*.deb .gpu-carry/libvulkan1*.deb; do
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
# binary wheels (wgpu-*-manylinux*, cffi-*-cp312-*) cannot be imported zipped: unzip the ones whose
# python tag (py3, or this interpreter's cpXY) and platform (any, or this machine's) fit
UNZIPPED=$(mktemp -d /tmp/pygpgpu-wheels.XXXXXX)
"$PY" - "$UNZIPPED" .gpu-carry/*.whl <<'EOF'
import platform, sys, zipfile
here = f"cp{sys.version_info.major}{sys.version_info.minor}"
for path in sys.argv[2:]:
    parts = path.rsplit("/", 1)[-1][:-4].split("-")
    if len(parts) < 5 or parts[-3:] == ["py3", "none", "any"]:
        continue                                   # no wheel (the glob), or pure: on PYTHONPATH as it is
    py, abi, plat = parts[-3:]
    if not any(t in ("py3", here) or (abi == "abi3" and t.startswith("cp3")) for t in py.split(".")):
        print(f"{path}: for {py}, not this Python ({here}): left out", file=sys.stderr)
    elif plat != "any" and platform.machine() not in plat:
        print(f"{path}: for {plat}, not this machine ({platform.machine()}): left out", file=sys.stderr)
    else:
        zipfile.ZipFile(path).extractall(sys.argv[1])
        print(f"{path}: unzipped onto PYTHONPATH", file=sys.stderr)
EOF
export PYTHONPATH="$SRC:$STUBS${WHEELS:+:$WHEELS}:$UNZIPPED${PYTHONPATH:+:$PYTHONPATH}"
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
# NVIDIA's Vulkan driver for the webgpu backend: its ICD json where the image has one, else one
# written here pointing at libGLX_nvidia.so.0 (the driver's Vulkan entry points); nothing is set
# when neither is found (wgpu then finds whatever the loader's default search finds, or nothing).
if [ -z "${VK_ICD_FILENAMES:-}" ]; then
  VK_JSON=""
  for j in /usr/share/vulkan/icd.d/nvidia_icd.json /etc/vulkan/icd.d/nvidia_icd.json \
           /usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json /usr/local/nvidia/etc/vulkan/icd.d/nvidia_icd.json; do
    [ -f "$j" ] && { VK_JSON=$j; break; }
  done
  if [ -z "$VK_JSON" ]; then
    GLX=$(ldconfig -p | awk '/libGLX_nvidia\.so\.0/ {print $NF; exit}')
    [ -n "$GLX" ] || GLX=$(find /usr/local/nvidia /usr/lib /usr/lib64 -name 'libGLX_nvidia.so.0' 2>/dev/null | head -n 1)
    if [ -n "$GLX" ]; then
      VK_JSON=$(mktemp -d /tmp/pygpgpu-vk.XXXXXX)/nvidia_icd.json
      printf '{"file_format_version": "1.0.0", "ICD": {"library_path": "%s", "api_version": "1.3.0"}}\n' "$GLX" > "$VK_JSON"
    fi
  fi
  if [ -n "$VK_JSON" ]; then
    export VK_ICD_FILENAMES=$VK_JSON VK_DRIVER_FILES=$VK_JSON
    echo "Vulkan: NVIDIA's driver through $VK_JSON: $(tr -d '\n' < "$VK_JSON" | head -c 300)"
  else
    echo "Vulkan: no nvidia_icd.json and no libGLX_nvidia.so.0 found: VK_ICD_FILENAMES left unset"
  fi
fi

{ nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader; "$PY" --version; } 2>&1 | tee "$OUT/machine.txt"
"$PY" -c "import pygpgpu_core.registry as r; print(r.diagnostics())" 2>&1 | tee -a "$OUT/machine.txt"
"$PY" -m pygpgpu info 2>&1 | tee "$OUT/pygpgpu-info.txt"   # versions, libraries, devices

if [ "${1:-}" = "--python" ]; then
  shift
  "$PY" "$@"
  rc=$?
  rm -rf "$STUBS" "$UNZIPPED"
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
rm -rf "$STUBS" "$UNZIPPED"
echo "tests exit $tests_rc, benchmark exit $bench_rc (outputs in $OUT)"
exit $(( tests_rc != 0 || bench_rc != 0 ))
