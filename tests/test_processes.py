"""Processes (issue 13, item 7): a process forked after a backend was used never hangs. Its first
device use raises ForkedProcessError saying to use the spawn or forkserver start method, and
worker processes started with spawn run kernels normally. Every scenario runs in a subprocess
under a timeout: before the fix, the forked child waited forever."""
from __future__ import annotations

import textwrap

from isolated_run import run_json_script

TIMEOUT = 240

SCRIPT = textwrap.dedent('''
    import json, multiprocessing as mp, os, sys
    import numpy as np
    from pygpgpu import kernel

    BACKEND = sys.argv[1]

    @kernel
    def twice(x):
        for i in range(x.shape[0]):
            x[i] = x[i] * 2.0

    def run_kernel(n):
        x = np.arange(n, dtype=np.float32)
        try:
            twice[BACKEND](x)
        except Exception as exc:
            return describe(exc)
        return ["ok", x.tolist()]

    def describe(exc):
        """What crossed the process boundary: class, message and the error's own fields."""
        from pygpgpu_core.forking import ForkedProcessError
        return [type(exc).__name__, str(exc), type(exc) is ForkedProcessError,
                getattr(exc, "backend", None), getattr(exc, "what", None)]

    if __name__ == "__main__":
        mode = sys.argv[2]
        out = {}
        if mode != "fork-before-use":
            out["parent"] = run_kernel(4)                   # the backend is now in use here
        if mode == "pool":
            with mp.get_context("fork").Pool(2) as pool:
                out["fork_pool"] = pool.map(run_kernel, [3, 5])
                try:
                    pool.apply(twice[BACKEND], (np.arange(4, dtype=np.float32),))
                    out["fork_apply"] = "no error"
                except Exception as exc:                    # sent back to the parent intact
                    out["fork_apply"] = describe(exc)
            with mp.get_context("spawn").Pool(1) as pool:
                out["spawn_pool"] = pool.map(run_kernel, [3])
        else:
            r, w = os.pipe()
            pid = os.fork()
            if pid == 0:
                os.close(r)
                os.write(w, json.dumps(run_kernel(6)).encode())
                os.close(w)
                sys.exit(0)                                 # a normal exit: atexit handlers run
            os.close(w)
            data = b""
            while chunk := os.read(r, 65536):
                data += chunk
            out["child"] = json.loads(data)
            out["child_status"] = os.waitpid(pid, 0)[1]
        out["parent_after"] = run_kernel(4)               # the parent's own state is untouched
        print(json.dumps(out))
''')


def _run(tmp_path, backend, mode):
    return run_json_script(tmp_path, "forker.py", SCRIPT, (backend, mode), TIMEOUT)


def _is_fork_error(result, backend):
    """``result`` (SCRIPT's describe()) is a ForkedProcessError of ``backend``, exactly the class,
    its fields intact, its message the one the class writes for them (naming spawn and forkserver)."""
    from pygpgpu_core.forking import ForkedProcessError
    name, message, exact_class, err_backend, what = result
    backend = backend.split(":")[0]          # a selector such as opencl:nvidia names the backend first
    want = str(ForkedProcessError(backend, what))
    return (name == "ForkedProcessError" and exact_class and err_backend == backend and isinstance(what, str)
            and message == want and "spawn" in message and "forkserver" in message)


def test_forked_process_error_pickles_with_its_fields():
    """What multiprocessing does to an exception raised in a worker: pickle, send, unpickle."""
    import pickle

    from pygpgpu_core.errors import ClosedError
    from pygpgpu_core.forking import ForkedProcessError
    for what in ("", "buffer 0x10 of the opencl context"):
        err = ForkedProcessError("opencl", what)
        back = pickle.loads(pickle.dumps(err))
        assert type(back) is ForkedProcessError and isinstance(back, ClosedError)
        assert (back.backend, back.what, str(back), back.args) == (err.backend, err.what, str(err), err.args)


def test_fork_pool_after_first_use_raises_a_clear_error_and_spawn_works(tmp_path, backend):
    out = _run(tmp_path, backend, "pool")
    assert out["parent"] == ["ok", [0.0, 2.0, 4.0, 6.0]]
    assert all(_is_fork_error(r, backend) for r in out["fork_pool"]), out["fork_pool"]
    assert _is_fork_error(out["fork_apply"], backend), out["fork_apply"]
    assert out["spawn_pool"] == [["ok", [0.0, 2.0, 4.0]]]
    assert out["parent_after"] == ["ok", [0.0, 2.0, 4.0, 6.0]]


def test_os_fork_child_raises_and_exits_cleanly(tmp_path, backend):
    out = _run(tmp_path, backend, "fork")
    assert _is_fork_error(out["child"], backend), out["child"]
    assert out["child_status"] == 0
    assert out["parent_after"] == ["ok", [0.0, 2.0, 4.0, 6.0]]


def test_fork_before_first_use_works_in_the_child(tmp_path, backend):
    out = _run(tmp_path, backend, "fork-before-use")
    assert out["child"] == ["ok", [float(2 * i) for i in range(6)]]
    assert out["child_status"] == 0
    assert out["parent_after"] == ["ok", [0.0, 2.0, 4.0, 6.0]]


def test_pin_cache_forget_drops_entries_without_unregistering():
    """What a forked child does with the parent's page-locked arrays (CUDA): forget, no driver call."""
    import numpy as np

    from pygpgpu_core.backend.hostpin import PIN_MIN, PinCache

    calls = []
    cache = PinCache(lambda ptr, n: calls.append(("register", ptr)) or True,
                     lambda ptr: calls.append(("unregister", ptr)), limit=1 << 30)
    a = np.zeros(PIN_MIN, np.uint8)
    assert not cache.pinned(a) and cache.pinned(a)       # registered on the second transfer
    assert len(cache) == 1 and cache.held == PIN_MIN
    cache.forget()
    assert len(cache) == 0 and cache.held == 0
    assert calls == [("register", a.ctypes.data)]         # never unregistered through the driver
    assert cache.pinned(a) is False                       # and usable again (seen once more)
