"""Values a kernel reads through objects (issue 30, item 1): an instance's attribute at any depth,
a class attribute, an object captured from the enclosing function, a helper's default value. Each
is compiled in, so a change must translate again, in the process and in a later process that
finds the entry on disk; never the value an earlier call compiled in."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from pygpgpu import float3
from pygpgpu_translate import kernel, stats


class Params:
    pass


class Inner:
    def __init__(self, scale):
        self.scale = scale


P = Params()
P.scale = 2.0
P.inner = Inner(3.0)
P.inner.deeper = Inner(4.0)


class ClassConsts:
    scale = 6.0


C_INSTANCE = ClassConsts()


@kernel
def times_attr(a, out):
    for i in range(out.shape[0]):
        out[i] = a[i] * P.scale


@kernel
def times_deep_attr(a, out):
    for i in range(out.shape[0]):
        out[i] = a[i] * P.inner.deeper.scale + P.inner.scale


@kernel
def times_class_attr(a, out):
    for i in range(out.shape[0]):
        out[i] = a[i] * ClassConsts.scale + C_INSTANCE.scale


def _run(k, backend, n=8):
    a = np.arange(n, dtype=np.float32)
    out = np.zeros_like(a)
    k[backend](a, out)
    return a, out


def test_an_instance_attribute_change_translates_again(backend):
    a, out = _run(times_attr, backend)
    np.testing.assert_array_equal(out, a * 2.0)
    try:
        P.scale = 5.0
        a, out = _run(times_attr, backend)
        np.testing.assert_array_equal(out, a * 5.0)
    finally:
        P.scale = 2.0
    a, out = _run(times_attr, backend)
    np.testing.assert_array_equal(out, a * 2.0)
    before = stats["translations"] + stats["source_cache_hits"]
    P.scale = float("2.0")          # another float object of the same value: nothing to translate
    a, out = _run(times_attr, backend)
    np.testing.assert_array_equal(out, a * 2.0)
    assert stats["translations"] + stats["source_cache_hits"] == before


def test_attributes_at_any_depth_are_tracked(backend):
    a, out = _run(times_deep_attr, backend)
    np.testing.assert_array_equal(out, a * 4.0 + 3.0)
    old_inner = P.inner
    try:
        P.inner.deeper.scale = 7.0                  # the leaf, in place
        a, out = _run(times_deep_attr, backend)
        np.testing.assert_array_equal(out, a * 7.0 + 3.0)
        P.inner = Inner(10.0)                        # an object on the way, rebound
        P.inner.deeper = Inner(0.5)
        a, out = _run(times_deep_attr, backend)
        np.testing.assert_array_equal(out, a * 0.5 + 10.0)
    finally:
        old_inner.deeper.scale = 4.0
        P.inner = old_inner
    a, out = _run(times_deep_attr, backend)
    np.testing.assert_array_equal(out, a * 4.0 + 3.0)


def test_class_attributes_are_tracked_also_through_an_instance(backend):
    a, out = _run(times_class_attr, backend)
    np.testing.assert_array_equal(out, a * 6.0 + 6.0)
    try:
        ClassConsts.scale = 2.0                      # the class attribute: both reads change
        a, out = _run(times_class_attr, backend)
        np.testing.assert_array_equal(out, a * 2.0 + 2.0)
        C_INSTANCE.scale = 9.0                       # the instance now shadows it
        a, out = _run(times_class_attr, backend)
        np.testing.assert_array_equal(out, a * 2.0 + 9.0)
    finally:
        ClassConsts.scale = 6.0
        del C_INSTANCE.scale


def test_an_attribute_of_a_captured_object_is_tracked(backend):
    def make():
        cfg = Params()
        cfg.offset = 1.5

        @kernel
        def add_captured(a, out):
            for i in range(out.shape[0]):
                out[i] = a[i] + cfg.offset
        return cfg, add_captured

    cfg, k = make()
    a, out = _run(k, backend)
    np.testing.assert_array_equal(out, a + 1.5)
    cfg.offset = -4.0
    a, out = _run(k, backend)
    np.testing.assert_array_equal(out, a - 4.0)


def _make_offset_helper():
    box = Params()
    box.offset = 0.5

    def add_offset(v):              # reads an attribute of an object it captured
        return v + box.offset
    return box, add_offset


BOX, add_offset = _make_offset_helper()


@kernel
def calls_capturing_helper(a, out):
    for i in range(out.shape[0]):
        out[i] = add_offset(a[i])


def test_an_attribute_read_by_a_helper_through_its_captured_object_is_tracked(backend):
    a, out = _run(calls_capturing_helper, backend)
    np.testing.assert_array_equal(out, a + 0.5)
    BOX.offset = 8.0
    try:
        a, out = _run(calls_capturing_helper, backend)
        np.testing.assert_array_equal(out, a + 8.0)
    finally:
        BOX.offset = 0.5


def scaled(v, s=2.0):
    return v * s


class Helpers:
    @staticmethod
    def step(v):
        return v + 1.0


def _plus_ten(v):
    return v + 10.0


@kernel
def calls_with_default(a, out):
    for i in range(out.shape[0]):
        out[i] = scaled(a[i]) + Helpers.step(a[i])


def test_a_helper_default_or_a_static_method_rebound_translates_again(backend):
    a, out = _run(calls_with_default, backend)
    np.testing.assert_array_equal(out, a * 2.0 + a + 1.0)
    old_step = Helpers.__dict__["step"]
    try:
        scaled.__defaults__ = (3.0,)
        a, out = _run(calls_with_default, backend)
        np.testing.assert_array_equal(out, a * 3.0 + a + 1.0)
        Helpers.step = staticmethod(_plus_ten)
        a, out = _run(calls_with_default, backend)
        np.testing.assert_array_equal(out, a * 3.0 + a + 10.0)
    finally:
        scaled.__defaults__ = (2.0,)
        Helpers.step = old_step


class Computed:
    def __init__(self):
        self.base = 1.0

    @property
    def scale(self):
        return self.base * 2.0          # a new float object on every read

    @property
    def shift(self):
        return float3(self.base, 0.0, 0.0)      # a new vector on every read


COMPUTED = Computed()


@kernel
def times_property(a, out):
    for i in range(out.shape[0]):
        out[i] = a[i] * COMPUTED.scale + COMPUTED.shift.x


def test_a_property_is_read_by_value(backend):
    a, out = _run(times_property, backend)
    np.testing.assert_array_equal(out, a * 2.0 + 1.0)
    before = stats["translations"] + stats["source_cache_hits"]
    _run(times_property, backend)           # the same values again: no new translation
    assert stats["translations"] + stats["source_cache_hits"] == before
    COMPUTED.base = 4.0
    try:
        a, out = _run(times_property, backend)
        np.testing.assert_array_equal(out, a * 8.0 + 4.0)
    finally:
        COMPUTED.base = 1.0


class Shifting:
    def __init__(self):
        self.n = 0.0

    def __getattr__(self, name):
        if name != "scale":
            raise AttributeError(name)
        self.n += 1.0                   # a different value on every read
        return self.n


SHIFTING = Shifting()


@kernel
def reads_shifting(a, out):
    for i in range(out.shape[0]):
        out[i] = a[i] * SHIFTING.scale


def test_an_attribute_that_changes_on_every_read_is_refused(backend):
    a = np.arange(4, dtype=np.float32)
    with pytest.raises(SyntaxError, match=r"(?s)SHIFTING.scale gives a different value on each read.*pass it to the kernel as an argument"):
        reads_shifting[backend](a, np.zeros_like(a))


# ---- across processes: the disk entry holds what was compiled in ------------------------------------
MODULE = textwrap.dedent('''
    from pygpgpu_translate import kernel

    class Params:
        pass

    class Consts:
        shift = {shift}

    P = Params()
    P.scale = {scale}
    P.inner = Params()
    P.inner.bias = {bias}
    SCALE_AT_DEF = {default}

    def helper(v, d=SCALE_AT_DEF):
        return v * d

    @kernel
    def k(x, out):
        for i in range(out.shape[0]):
            out[i] = x[i] * P.scale + P.inner.bias + Consts.shift + helper(x[i])

    def make():
        cfg = Params()
        cfg.offset = {offset}

        @kernel
        def c(x, out):
            for i in range(out.shape[0]):
                out[i] = x[i] + cfg.offset
        return c

    c = make()
''')

SCRIPT = textwrap.dedent('''
    import json, sys
    import numpy as np
    sys.path.insert(0, {folder!r})
    import objmod
    from pygpgpu_translate import stats
    x = np.arange(6, dtype=np.float32)
    out = np.zeros_like(x)
    objmod.k[{backend!r}](x, out)
    out2 = np.zeros_like(x)
    objmod.c[{backend!r}](x, out2)
    print(json.dumps({{"stats": stats, "out": out.tolist(), "out2": out2.tolist()}}))
''')


def _process(tmp_path, backend, **values):
    (tmp_path / "objmod.py").write_text(MODULE.format(**values))
    env = dict(os.environ, PYGPGPU_CACHE_DIR=str(tmp_path / "cache"))
    env.pop("PYGPGPU_DEBUG", None)
    proc = subprocess.run([sys.executable, "-c", SCRIPT.format(folder=str(tmp_path), backend=backend)],
                          capture_output=True, text=True, env=env, timeout=120)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("changed", ["scale", "bias", "shift", "default", "offset"])
def test_a_later_process_with_another_value_does_not_use_the_stored_one(tmp_path, backend, changed):
    values = {"scale": 2.0, "bias": 0.25, "shift": 1.0, "default": 3.0, "offset": 0.5}
    x = np.arange(6, dtype=np.float32)

    def expected(v):
        return ((x * v["scale"] + v["bias"] + v["shift"] + x * v["default"]).tolist(), (x + v["offset"]).tolist())

    first = _process(tmp_path, backend, **values)
    assert (first["out"], first["out2"]) == expected(values)
    again = _process(tmp_path, backend, **values)        # nothing changed: both from the disk cache
    assert again["stats"]["translations"] == 0 and again["stats"]["source_cache_hits"] == 2
    values[changed] = 5.0
    later = _process(tmp_path, backend, **values)
    assert (later["out"], later["out2"]) == expected(values)
    assert later["stats"]["translations"] == 1
