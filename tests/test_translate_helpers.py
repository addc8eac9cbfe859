"""Helpers living in another module: kernels in test_translate_catalogue.py import and call them.

Also checks that a helper module's own constants are compile-time constants of the kernel.
"""
from __future__ import annotations

import math

SCALE = 3

def scaled(v):
    return v * SCALE


def poly(v, a=1.0, b=0.5):
    return a * v * v + b * v


def hyp(x, y):
    return math.sqrt(square_add(x, y))


def square_add(x, y):
    return x * x + y * y


def fill_row(arr, i, value):
    # writes through an array parameter: the kernel's argument becomes written (interprocedural)
    arr[i] = value


def read_at(arr, i):
    return arr[i]


def test_helpers_run_on_the_host():
    assert scaled(2) == 6
    assert poly(2.0) == 5.0
    assert hyp(3.0, 4.0) == 5.0
