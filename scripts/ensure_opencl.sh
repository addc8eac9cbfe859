#!/usr/bin/env bash
# Make sure an OpenCL platform exists. Without a GPU driver we use PoCL, which runs OpenCL
# on the CPU. As root we install it; otherwise we print the exact command to run.
set -u
if ls /etc/OpenCL/vendors/*.icd >/dev/null 2>&1 && ldconfig -p 2>/dev/null | grep -q 'libOpenCL.so.1'; then
  exit 0
fi
cmd="apt-get install -y pocl-opencl-icd ocl-icd-libopencl1"
if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then
  echo "No OpenCL platform found: installing PoCL (OpenCL on the CPU)..."
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq && apt-get install -y -qq pocl-opencl-icd ocl-icd-libopencl1 >/dev/null \
    || { echo "PoCL install failed; run: $cmd" >&2; exit 1; }
else
  echo "No OpenCL platform found. To run on the CPU, install PoCL: sudo $cmd" >&2
  echo "(continuing: backends without a device are skipped)" >&2
fi
exit 0
