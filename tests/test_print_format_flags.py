"""f-string format specs in kernel ``print()`` with each sign flag Python has: ``-`` (the
default: only negative numbers get a sign; it must not become printf's left-justify flag),
``+`` and a space, with and without alignment, width, ``0`` and precision. The device's lines
are compared with the same f-strings formatted on the host. printf writes to the C-level
stdout, so the kernel runs in a subprocess."""
from __future__ import annotations

import os
import subprocess
import sys

SCRIPT = '''
import sys
import numpy as np
from pygpgpu import kernel


@kernel
def flags(n, x):
    for i in range(n.shape[0]):
        print(f"[{n[i]:-5d}|{n[i]:+5d}|{n[i]: 5d}|{n[i]:<-6d}|{n[i]:>-6d}|{n[i]:-06d}|{n[i]:-d}]")
        print(f"[{x[i]:-9.3f}|{x[i]:+9.3f}|{x[i]: 9.3f}|{x[i]:<-10.2e}|{x[i]:-.1f}]")


flags[sys.argv[1]](np.array(N, np.int32), np.array(X, np.float64))
'''

N = [7, -42, 0, 12345]
X = [1.5, -2.25, 0.0, 31.0625]


def _expected() -> list[str]:
    out = []
    for n, x in zip(N, X):
        out.append(f"[{n:-5d}|{n:+5d}|{n: 5d}|{n:<-6d}|{n:>-6d}|{n:-06d}|{n:-d}]")
        out.append(f"[{x:-9.3f}|{x:+9.3f}|{x: 9.3f}|{x:<-10.2e}|{x:-.1f}]")
    return sorted(out)


def test_sign_flags_print_as_python_formats_them(tmp_path, backend):
    script = tmp_path / "flags.py"
    script.write_text(SCRIPT.replace("N, np.int32", f"{N}, np.int32").replace("X, np.float64", f"{X}, np.float64"))
    env = dict(os.environ, PYTHONIOENCODING="utf-8")
    proc = subprocess.run([sys.executable, str(script), backend], capture_output=True, timeout=600, env=env)
    assert proc.returncode == 0, proc.stderr.decode(errors="replace")
    got = sorted(proc.stdout.decode().split("\n")[:-1])
    assert got == _expected()
