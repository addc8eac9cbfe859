"""N-body gravity over a numpy record array: every particle feels every other.

    python examples/05_nbody.py [bodies]

The particles are one structured array with the dtype PARTICLE (pos, vel, mass). In a kernel it
is an array of C structs with numpy's layout: `p[i].mass` is a float, and the 3-number fields
`p[i].pos` and `p[i].vel` read as float3 vectors and take float3 values. The helper `pull` is
plain Python, translated for the float3 arguments it is called with.

`summary` adds up the momentum in one work item, writes it back and prints it with `print()`
from the device (printf; it shows when the device flushes its output).
"""
import math

import numpy as np
from _common import example_size

from pygpgpu import funcs, kernel
from pygpgpu.vec import float3

SOFTENING = 0.01
DT = 0.01
PARTICLE = np.dtype([("pos", np.float32, 3), ("vel", np.float32, 3), ("mass", np.float32)])


def pull(here, there, mass):
    """Acceleration at `here` towards a body of `mass` at `there`."""
    d = there - here
    r2 = funcs.dot(d, d) + SOFTENING * SOFTENING
    inv = 1.0 / (r2 * math.sqrt(r2))
    return d * (mass * inv)


@kernel
def nbody_step(bodies, new):
    for i in range(bodies.shape[0]):
        p = bodies[i].pos                       # a float3
        acc = float3(0.0, 0.0, 0.0)
        for j in range(bodies.shape[0]):
            q = bodies[j].pos
            acc = acc + pull(p, q, bodies[j].mass)
        v = bodies[i].vel + acc * DT
        new[i].vel = v
        new[i].pos = p + v * DT
        new[i].mass = bodies[i].mass


@kernel
def summary(bodies, momentum):
    for k in range(momentum.shape[0]):          # one work item: momentum has one row
        total = bodies[0].vel * bodies[0].mass
        for j in range(1, bodies.shape[0]):
            total = total + bodies[j].vel * bodies[j].mass
        momentum[k] = total
        print("total momentum", total)


def host_step(bodies: np.ndarray) -> np.ndarray:
    """One step in numpy (float64 for reference), as a record array of float64 fields."""
    p, m, vel = bodies["pos"].astype(np.float64), bodies["mass"].astype(np.float64), bodies["vel"]
    d = p[None, :, :] - p[:, None, :]
    r2 = (d * d).sum(-1) + SOFTENING**2
    acc = (d * (m[None, :] / (r2 * np.sqrt(r2)))[..., None]).sum(1)
    out = np.zeros(len(bodies), [("pos", np.float64, 3), ("vel", np.float64, 3), ("mass", np.float64)])
    out["vel"] = vel + acc * DT
    out["pos"] = p + out["vel"] * DT
    out["mass"] = m
    return out


def initial_bodies(n: int) -> np.ndarray:
    rng = np.random.default_rng(2)
    bodies = np.zeros(n, PARTICLE)
    bodies["pos"] = rng.normal(size=(n, 3))
    bodies["vel"] = rng.normal(scale=0.1, size=(n, 3))
    bodies["mass"] = rng.uniform(0.5, 1.5, n) / n          # total mass about 1
    return bodies


def main(n: int = 4096, steps: int = 10) -> dict:
    bodies = initial_bodies(n)
    start = bodies.copy()
    new = np.empty_like(bodies)
    for _ in range(steps):
        nbody_step(bodies, new)
        bodies, new = new, bodies
    momentum = np.zeros((1, 3), np.float32)
    summary(bodies, momentum)
    moved = np.linalg.norm(bodies["pos"] - start["pos"], axis=1).mean()
    print(f"{n} bodies, {steps} steps: mean displacement {moved:.4f}, momentum {momentum[0]}")
    return {"start": start, "bodies": bodies, "momentum": momentum[0], "steps": steps}


if __name__ == "__main__":
    main(example_size(4096))
