"""Kernels defined where there is no .py file (issue 15, item 10): ``python -c``, a script on
standard input, exec() of a text registered in linecache, the interactive prompt; and functions
with the same text in two files keep their own file, line and globals."""
from __future__ import annotations

import importlib.util
import json
import linecache
import os
import select
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest

from pygpgpu_core.errors import GPGPUError
from pygpgpu_translate import kernel

# A script with a kernel and a helper; it prints what the kernel computed and what the same
# Python functions compute on the host.
SCRIPT = textwrap.dedent("""\
    import json, sys
    import numpy as np
    from pygpgpu import kernel

    def bump(v, k):
        return v * k + 1

    @kernel
    def run(x, out, k):
        for i in range(out.shape[0]):
            out[i] = bump(x[i], k)

    x = np.arange(6, dtype=np.float32)
    out = np.zeros_like(x)
    run[sys.argv[1]](x, out, 3.0)
    host = np.array([bump(v, np.float32(3.0)) for v in x], np.float32)
    print(json.dumps({"device": out.tolist(), "host": host.tolist()}))
""")


def _run_python(args, backend, **kw):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
    return subprocess.run([sys.executable, *args], capture_output=True, text=True, timeout=300, env=env, **kw)


def _result(proc):
    assert proc.returncode == 0, proc.stderr[-3000:]
    line = [ln for ln in proc.stdout.splitlines() if ln.startswith("{")][-1]
    got = json.loads(line)
    np.testing.assert_array_equal(np.array(got["device"], np.float32), np.array(got["host"], np.float32))
    return got


def test_a_kernel_from_python_dash_c_runs(backend):
    got = _result(_run_python(["-c", SCRIPT, backend], backend))
    assert got["device"][2] == 7.0


def test_a_kernel_from_a_script_on_standard_input_runs(backend, tmp_path):
    path = tmp_path / "script.py"
    path.write_text(SCRIPT)
    with open(path) as stdin:
        got = _result(_run_python(["-", backend], backend, stdin=stdin))
    assert got["device"][5] == 16.0


def test_a_script_piped_to_standard_input_says_what_to_do(backend):
    proc = _run_python(["-", backend], backend, input=SCRIPT)
    assert proc.returncode != 0
    assert "pipe" in proc.stderr and "python - < script.py" in proc.stderr, proc.stderr[-2000:]


def test_exec_of_a_text_registered_in_linecache(backend):
    name = "<pygpgpu test exec 1>"
    text = SCRIPT.split("x = np.arange")[0]
    linecache.cache[name] = (len(text), None, text.splitlines(True), name)
    try:
        ns: dict = {}
        exec(compile(text, name, "exec"), ns)
        x = np.arange(5, dtype=np.float32)
        out = np.zeros_like(x)
        ns["run"][backend](x, out, 2.0)
        np.testing.assert_array_equal(out, [ns["bump"](v, np.float32(2.0)) for v in x])
        src = ns["run"].inspect(x, out, 2.0, backend="opencl").source
        assert f'"{name}"' in src          # #line directives name the registered text
    finally:
        linecache.cache.pop(name, None)


def test_exec_of_a_text_python_did_not_keep_says_how_to_register_it():
    ns: dict = {}
    exec(compile(SCRIPT.split("x = np.arange")[0], "<pygpgpu unkept>", "exec"), ns)
    with pytest.raises(GPGPUError, match=r"linecache\.cache\[name\].*or define the function in a \.py file"):
        ns["run"].inspect(np.zeros(2, np.float32), np.zeros(2, np.float32), 1.0, backend="opencl")


def test_an_exec_error_points_into_the_registered_text():
    name = "<pygpgpu test exec 2>"
    text = "def bad(x):\n    for i in range(x.shape[0]):\n        x[i] = [1]\n"
    linecache.cache[name] = (len(text), None, text.splitlines(True), name)
    try:
        ns: dict = {}
        exec(compile(text, name, "exec"), ns)
        with pytest.raises(SyntaxError) as info:
            kernel(ns["bad"]).inspect(np.zeros(2, np.float32), backend="opencl")
        assert info.value.filename == name and info.value.lineno == 3 and "x[i] = [1]" in info.value.text
    finally:
        linecache.cache.pop(name, None)


# ---- the interactive prompt (readline history) -------------------------------------------------------
def _interactive(lines, backend, home):
    pty = pytest.importorskip("pty")
    pytest.importorskip("readline")
    env = dict(os.environ, HOME=str(home), PYTHONPATH=os.pathsep.join(p for p in sys.path if p),
               PYTHONSTARTUP="", TERM="dumb")
    pid, fd = pty.fork()
    if pid == 0:      # the child: an interactive interpreter on the terminal
        os.execve(sys.executable, [sys.executable, "-q", "-i"], env)
    out = b""

    def read_prompt(timeout: float):
        """Read until the interpreter waits for a line again (its prompt ends the output)."""
        nonlocal out
        end = time.monotonic() + timeout
        while not out.endswith((b">>> ", b"... ")) and time.monotonic() < end:
            ready, _, _ = select.select([fd], [], [], 0.2)
            if ready:
                try:
                    data = os.read(fd, 65536)
                except OSError:
                    return
                if not data:
                    return
                out += data

    try:
        read_prompt(60)
        for line in lines + ["print('DONE', json.dumps(result))"]:
            out = b""
            os.write(fd, line.encode() + b"\r")
            read_prompt(240)
        text = out.decode(errors="replace")
        os.write(fd, b"exit()\r")
    finally:
        os.waitpid(pid, 0)
    return text


def test_a_kernel_typed_at_the_interactive_prompt_runs(backend, tmp_path):
    lines = ["import json", "import numpy as np", "from pygpgpu import kernel",
             "def bump(v):", "    return v * 2 + 1", "",
             "@kernel", "def run(x, out):", "    for i in range(out.shape[0]):", "        out[i] = bump(x[i])", "",
             "x = np.arange(5, dtype=np.float32); out = np.zeros_like(x)",
             f"run[{backend!r}](x, out); result = {{'device': out.tolist(), 'host': [bump(v) for v in x.tolist()]}}"]
    text = _interactive(lines, backend, tmp_path)
    done = [ln for ln in text.splitlines() if "DONE {" in ln and not ln.startswith(">>>")]
    assert done, text[-3000:]
    got = json.loads(done[-1].split("DONE ", 1)[1])
    assert got["device"] == got["host"] == [1.0, 3.0, 5.0, 7.0, 9.0]


# ---- the same text in two files ----------------------------------------------------------------------
TWIN = textwrap.dedent("""\
    from pygpgpu import kernel
    K = {k}

    def bump(v):
        return v + K

    @kernel
    def fill(out):
        for i in range(out.shape[0]):
            out[i] = bump(1.0)
""")


def _load(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_identical_functions_in_two_files_keep_their_file_and_globals(backend, tmp_path):
    a, b = tmp_path / "twin_a.py", tmp_path / "twin_b.py"
    a.write_text(TWIN.format(k=1))
    b.write_text(TWIN.format(k=1))          # the same text: K is changed below
    ma, mb = _load(a, "pygpgpu_twin_a"), _load(b, "pygpgpu_twin_b")
    mb.K = 5
    out = np.zeros(3, np.float32)
    ma.fill[backend](np.zeros(1, np.float32))        # translate a's first: b's must not reuse its source
    src_b = mb.fill.inspect(out, backend="opencl").source
    assert f'"{b}"' in src_b and f'"{a}"' not in src_b
    mb.fill[backend](out)
    np.testing.assert_array_equal(out, mb.bump(1.0))

    # one kernel calling both helpers: two helpers, each with its own module's K
    global twin_a, twin_b
    twin_a, twin_b = ma, mb
    both[backend](out)
    np.testing.assert_array_equal(out, ma.bump(0.0) * 10 + mb.bump(0.0))


twin_a = twin_b = None      # the two modules of the test above


@kernel
def both(out):
    for i in range(out.shape[0]):
        out[i] = twin_a.bump(0.0) * 10 + twin_b.bump(0.0)
