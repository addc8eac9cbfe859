"""The user-facing names of the meta-package, as the product description spells them."""
import subprocess
import sys

import numpy as np


def _run(code: str) -> str:
    out = subprocess.run([sys.executable, "-W", "ignore", "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    return out.stdout


def test_top_level_names():
    import pygpgpu
    from pygpgpu import (available_devices, float4, funcs, get_device, gpu, int3, kernel,  # noqa: F401
                         uchar16, GPGPUError, CompileError, Device, Context, Buffer, Program, Kernel)

    assert callable(kernel) and callable(available_devices) and callable(get_device)
    assert float4.dtype.itemsize == 16 and int3(1, 2, 3).z == 3
    assert funcs.dot(float4(1, 2, 3, 4), float4(1, 1, 1, 1)) == 10
    assert hasattr(gpu, "atomic_add") and hasattr(gpu, "get_global_id")
    assert issubclass(CompileError, GPGPUError)
    assert "float4" in dir(pygpgpu) and "climport" in pygpgpu.__all__


def test_submodules_and_the_kernel_name():
    out = _run(
        "import numpy as np\n"
        "import pygpgpu\n"
        "decorator = pygpgpu.kernel\n"
        "from pygpgpu.kernel import KernelFunction, Inspection\n"   # the product's documented spelling
        "import pygpgpu.kernel\n"
        "from pygpgpu.kernel import *\n"
        "assert pygpgpu.kernel is decorator and not isinstance(decorator, type(pygpgpu))\n"  # still the function
        "assert kernel is decorator and 'KernelFunction' in dir(pygpgpu)\n"
        "@pygpgpu.kernel\n"
        "def twice(x, out):\n"
        "    for i in range(out.shape[0]):\n"
        "        out[i] = x[i] * 2\n"
        "assert isinstance(twice, KernelFunction)\n"
        "from pygpgpu.vec_types import float4, funcs\n"
        "import pygpgpu.numpy as gnp, pygpgpu.opencl, pygpgpu.cuda, pygpgpu.hip\n"
        "assert gnp.asarray is not None and funcs.normalize is not None\n"
        "print('ok')\n"
    )
    assert out.strip() == "ok"


def test_import_hooks_load_no_backend_until_used():
    out = _run(
        "import sys\n"
        "from pygpgpu import climport, cuimport, hipimport\n"
        "print(sorted(m for m in sys.modules if m in ('pygpgpu_opencl', 'pygpgpu_cuda', 'pygpgpu_hip')))\n"
    )
    assert out.strip() == "[]"


def test_quick_start_runs(backend):
    from pygpgpu import kernel

    @kernel
    def saxpy(x, y, out, alpha):
        for i in range(out.shape[0]):
            out[i] = x[i] * alpha + y[i]

    x = np.arange(1000, dtype=np.float32)
    out = np.zeros_like(x)
    saxpy[backend](x, x, out, 2.0)
    np.testing.assert_array_equal(out, x * 3)
