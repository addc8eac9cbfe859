"""N-body gravity with float4: positions carry the mass in .w, every body feels every other.

    python examples/05_nbody.py [bodies]

An (n, 4) float32 array is an array of float4 rows: `pos[i]` is a float4, `.xyz` a float3,
and vector arithmetic broadcasts scalars. The helper `pull` is plain Python, translated for
the float4 arguments it is called with.
"""
import math

import numpy as np
from _common import example_size

from pygpgpu import float4, funcs, kernel

SOFTENING = 0.01
DT = 0.01


def pull(a, b):
    """Acceleration of a body at a.xyz towards a body of mass b.w at b.xyz."""
    d = b.xyz - a.xyz
    r2 = funcs.dot(d, d) + SOFTENING * SOFTENING
    inv = 1.0 / (r2 * math.sqrt(r2))
    return d * (b.w * inv)


@kernel
def nbody_step(pos, vel, new_pos, new_vel):
    for i in range(pos.shape[0]):
        p = pos[i]
        acc = pull(p, pos[0])
        for j in range(1, pos.shape[0]):
            acc = acc + pull(p, pos[j])
        v = vel[i].xyz + acc * DT
        new_vel[i] = float4(v, 0.0)
        new_pos[i] = float4(p.xyz + v * DT, p.w)


def host_step(pos: np.ndarray, vel: np.ndarray) -> "tuple[np.ndarray, np.ndarray]":
    """One step in numpy (float64 for reference)."""
    p, m = pos[:, :3].astype(np.float64), pos[:, 3].astype(np.float64)
    d = p[None, :, :] - p[:, None, :]
    r2 = (d * d).sum(-1) + SOFTENING**2
    acc = (d * (m[None, :] / (r2 * np.sqrt(r2)))[..., None]).sum(1)
    v = vel[:, :3] + acc * DT
    new_pos = np.concatenate([p + v * DT, m[:, None]], axis=1)
    return new_pos, np.concatenate([v, np.zeros((len(v), 1))], axis=1)


def initial_bodies(n: int) -> "tuple[np.ndarray, np.ndarray]":
    rng = np.random.default_rng(2)
    pos = np.zeros((n, 4), np.float32)
    pos[:, :3] = rng.normal(size=(n, 3))
    pos[:, 3] = rng.uniform(0.5, 1.5, n) / n          # total mass about 1
    return pos, np.zeros((n, 4), np.float32)


def main(n: int = 4096, steps: int = 10) -> dict:
    pos, vel = initial_bodies(n)
    start = pos.copy()
    new_pos, new_vel = np.empty_like(pos), np.empty_like(vel)
    for _ in range(steps):
        nbody_step(pos, vel, new_pos, new_vel)
        pos, new_pos, vel, new_vel = new_pos, pos, new_vel, vel
    moved = np.linalg.norm(pos[:, :3] - start[:, :3], axis=1).mean()
    print(f"{n} bodies, {steps} steps: mean displacement {moved:.4f}")
    return {"start": start, "pos": pos, "vel": vel, "steps": steps}


if __name__ == "__main__":
    main(example_size(4096))
