"""``import pygpgpu.numpy as gnp``: arrays that live on the device."""
from pygpgpu_core.gnp import *  # noqa: F401,F403
# gnp's __all__ is built by adding its submodules' lists, which type checkers do not follow: the same
# names again from the submodules, so that mypy and pyright see gnp.sum, gnp.split... (no new objects)
from pygpgpu_core.gnp._comparing import *  # noqa: F401,F403,E402
from pygpgpu_core.gnp._copying import *  # noqa: F401,F403
from pygpgpu_core.gnp._differences import *  # noqa: F401,F403
from pygpgpu_core.gnp._functions import *  # noqa: F401,F403
from pygpgpu_core.gnp._joining import *  # noqa: F401,F403
from pygpgpu_core.gnp._nan_reductions import *  # noqa: F401,F403
from pygpgpu_core.gnp._numpy_names import *  # noqa: F401,F403
from pygpgpu_core.gnp._calculus import *  # noqa: F401,F403
from pygpgpu_core.gnp._complex_parts import *  # noqa: F401,F403
from pygpgpu_core.gnp._polynomials import *  # noqa: F401,F403
from pygpgpu_core.gnp._shorthands import *  # noqa: F401,F403
from pygpgpu_core.gnp._indices import *  # noqa: F401,F403
from pygpgpu_core.gnp._numeric import *  # noqa: F401,F403
from pygpgpu_core.gnp._contractions import *  # noqa: F401,F403
from pygpgpu_core.gnp._selection import *  # noqa: F401,F403
from pygpgpu_core.gnp._signal import *  # noqa: F401,F403
from pygpgpu_core.gnp._patterns import *  # noqa: F401,F403
from pygpgpu_core.gnp._products import *  # noqa: F401,F403
from pygpgpu_core.gnp._rearranging import *  # noqa: F401,F403
from pygpgpu_core.gnp._statistics import *  # noqa: F401,F403
from pygpgpu_core.gnp._views import *  # noqa: F401,F403
from pygpgpu_core.gnp._broadcast_object import *  # noqa: F401,F403
from pygpgpu_core.gnp._editing import *  # noqa: F401,F403
from pygpgpu_core.gnp._unwrap import *  # noqa: F401,F403
from pygpgpu_core.gnp._histogramdd import *  # noqa: F401,F403
from pygpgpu_core.gnp._cross import *  # noqa: F401,F403
from pygpgpu_core.gnp._bessel import *  # noqa: F401,F403
from pygpgpu_core.gnp._einsum import *  # noqa: F401,F403
from pygpgpu_core.gnp._padding import *  # noqa: F401,F403
from pygpgpu_core.gnp._placing import *  # noqa: F401,F403
from pygpgpu_core.gnp import *  # noqa: F401,F403,E402  (again, last: gnp's own bindings run on their operands' device)
from pygpgpu_core.gnp import random  # noqa: F401,E402  (gnp.random)
from pygpgpu_core.gnp import linalg  # noqa: F401,E402  (gnp.linalg)
import sys as _sys  # noqa: E402
_sys.modules.setdefault(__name__ + ".random", random)   # ``import pygpgpu.numpy.random`` (numpy.py is a module)
from pygpgpu_core.gnp import fft  # noqa: F401,E402  (gnp.fft)
_sys.modules.setdefault(__name__ + ".fft", fft)         # ``import pygpgpu.numpy.fft``
_sys.modules.setdefault(__name__ + ".linalg", linalg)   # ``import pygpgpu.numpy.linalg``
