"""Process pools forked after a backend was used (issue 30, item 9): the parent learns why a worker
cannot use the device, not only "BrokenProcessPool". A device array sent to a ``fork`` worker
unpickles there as a stand-in whose use raises ForkedProcessError inside the task (so the
error reaches the parent through the future), and which goes back as the array it was; starting
``fork`` workers after the first device use warns in the parent (ForkWarning), which is all a
parent hears when a worker dies in its initializer. Every scenario runs in a subprocess under a
timeout."""
from __future__ import annotations

import textwrap

from isolated_run import run_json_script

TIMEOUT = 240

SCRIPT = textwrap.dedent('''
    import json, multiprocessing as mp, sys, warnings
    from concurrent.futures import ProcessPoolExecutor
    import numpy as np
    import pygpgpu.numpy as gnp

    BACKEND = sys.argv[1]

    def add_one(g):
        return (g + 1).get()

    def give_back(g):
        return g

    def shape_of(g):
        return list(g.shape)

    def touch_device():
        gnp.zeros(3, device=BACKEND)

    def nothing(x):
        return x

    def outcome(f):
        try:
            r = f()
        except Exception as exc:
            return [type(exc).__name__, str(exc)]
        return ["ok", r.get().tolist() if isinstance(r, gnp.ndarray) else r]

    def pool_warnings(f):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            result = f()
        return result, [[w.category.__name__, str(w.message), w.filename == __file__] for w in caught
                        if w.category.__name__ == "ForkWarning"]

    if __name__ == "__main__":
        fork = mp.get_context("fork")
        out = {}
        if sys.argv[2] == "before-use":
            with ProcessPoolExecutor(1, mp_context=fork) as ex:
                out["before"] = pool_warnings(lambda: ex.submit(nothing, 3).result(timeout=120))
            print(json.dumps(out))
            sys.exit(0)
        g = gnp.asarray(np.arange(4.0), device=BACKEND)          # the backend is now in use here
        with ProcessPoolExecutor(1, mp_context=fork) as ex:
            out["add_one"], out["warned"] = pool_warnings(lambda: outcome(lambda: ex.submit(add_one, g).result(120)))
            out["give_back"] = outcome(lambda: ex.submit(give_back, g).result(timeout=120))
            out["shape_of"] = outcome(lambda: ex.submit(shape_of, g).result(timeout=120))
        with ProcessPoolExecutor(1, mp_context=fork, initializer=touch_device) as ex:
            out["initializer"], out["initializer_warned"] = pool_warnings(
                lambda: outcome(lambda: ex.submit(nothing, 3).result(timeout=120)))
        print(json.dumps(out))
''')


def _run(tmp_path, backend, mode):
    return run_json_script(tmp_path, "pools.py", SCRIPT, (backend, mode), TIMEOUT)


def _is_fork_error(result):
    name, message = result
    return name == "ForkedProcessError" and "spawn" in message and "forkserver" in message


def test_fork_pool_after_use_tells_the_parent_why(tmp_path, backend):
    out = _run(tmp_path, backend, "after-use")
    assert _is_fork_error(out["add_one"]), out["add_one"]               # was BrokenProcessPool
    assert out["give_back"] == ["ok", [0.0, 1.0, 2.0, 3.0]]               # goes back as the array it was
    assert out["shape_of"] == ["ok", [4]]
    assert out["initializer"][0] == "BrokenProcessPool"                   # Python's; the warning says why
    for warned in (out["warned"], out["initializer_warned"]):
        assert len(warned) == 1, warned
        category, message, here = warned[0]
        assert here and "'fork'" in message and "spawn" in message and "forkserver" in message, warned


def test_fork_pool_before_use_does_not_warn(tmp_path, backend):
    out = _run(tmp_path, backend, "before-use")
    assert out["before"] == [3, []]
