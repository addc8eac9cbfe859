"""Comparing a device array with Python objects as numpy does element by element: an object with
its own __eq__ (and Python's default __ne__, which negates it) or its own __ne__ answers for each
element; objects without either compare unequal everywhere."""
from __future__ import annotations

import numpy as np
import pygpgpu.numpy as gnp
import pytest


class HasEq:
    def __eq__(self, other):
        return (other == 2) | (other == 4)


class HasNe:
    def __ne__(self, other):
        return (other == 2) | (other == 4)


class HasEqSub(HasEq):
    pass


class CustomInt(int):
    pass


@pytest.mark.parametrize("value", [HasEq(), HasNe(), HasEqSub(), CustomInt(3), None, object()],
                         ids=["eq", "ne", "eqsub", "int", "none", "object"])
@pytest.mark.parametrize("dtype", ["int32", "float64"])
def test_equal_and_not_equal_with_objects_as_numpy(backend, value, dtype):
    host = np.array([[1, 2, 3], [4, 5, 6]], dtype=dtype)
    g = gnp.asarray(host, device=backend)
    np.testing.assert_array_equal((g == value).get(), host == value)
    np.testing.assert_array_equal((g != value).get(), host != value)
