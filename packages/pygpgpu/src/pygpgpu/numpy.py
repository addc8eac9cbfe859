"""``import pygpgpu.numpy as gnp``: arrays that live on the device."""
from pygpgpu_core.gnp import *  # noqa: F401,F403
