"""Kernels as methods: `self.*` attributes become kernel arguments, read on every call.

    python examples/10_class_kernels.py [n]

A small linear layer: weights and bias live on the object; `apply` is a kernel method and
`relu` a static-method kernel. Changing `self.bias` needs no recompilation (it is an
argument); giving it another type (say a float64 array) compiles one more specialization.
"""
import numpy as np
from _common import example_size

from pygpgpu import kernel


class Layer:
    def __init__(self, n: int):
        rng = np.random.default_rng(6)
        self.weights = rng.normal(size=n).astype(np.float32)
        self.bias = 0.5

    @kernel
    def apply(self, x, out):
        for i in range(out.shape[0]):
            out[i] = x[i] * self.weights[i] + self.bias

    @staticmethod
    @kernel
    def relu(x):
        for i in range(x.shape[0]):
            if x[i] < 0.0:
                x[i] = 0.0


def main(n: int = 1_000_000) -> dict:
    layer = Layer(n)
    x = np.linspace(-1.0, 1.0, n, dtype=np.float32)
    out = np.empty_like(x)
    layer.apply(x, out)
    Layer.relu(out)
    first = out.copy()
    layer.bias = -0.25                      # a new value, same type: the same compiled kernel
    layer.apply(x, out)
    Layer.relu(out)
    print(f"{n:,} elements; positive outputs: {np.count_nonzero(first)} with bias 0.5, "
          f"{np.count_nonzero(out)} with bias -0.25")
    return {"x": x, "weights": layer.weights, "first": first, "second": out}


if __name__ == "__main__":
    main(example_size(1_000_000))
