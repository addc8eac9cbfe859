"""The driver kit: one implementation of the device, context, stream, buffer, program and kernel
classes of a CUDA-like driver (CUDA's driver API, HIP's module API), over a call table.

A backend subclasses each class once, names its call table (a
:class:`~pygpgpu_core.backend.library.LazyLibrary` whose functions are bound under the role
names below) and fills in what really differs: enumerating devices, compiling, reading a
binary's kernels, and its error table. Everything else (the pinned staging of large
transfers, the pin cache, the generated launcher, geometry, lifetime, fork safety) is this
code, proven on CUDA and shared by HIP.

Roles every kit backend binds (CUDA / HIP symbol): ``set_current`` (cuCtxSetCurrent /
hipSetDevice, fast), ``launch`` (cuLaunchKernel / hipModuleLaunchKernel, fast),
``stream_create`` ``stream_synchronize`` ``stream_query`` ``stream_destroy`` ``stream_wait_event``,
``event_create`` ``event_record`` ``event_synchronize`` ``event_query`` ``event_destroy``, ``mem_alloc``
``mem_free`` ``mem_get_info``, ``host_alloc`` ``host_free`` ``host_get_device_pointer``
``host_register`` ``host_unregister``, ``memcpy_htod_async`` ``memcpy_dtoh_async``
``memcpy_dtod_async``, ``memset_d8_async`` ``memset_d16_async`` ``memset_d32_async``,
``module_load`` ``module_unload`` ``module_get_function``, ``device_count`` ``device_name``
``device_total_mem`` ``device_attribute``. Optional: ``pointer_get_attribute``,
``func_get_attribute``, ``func_set_attribute``, ``func_get_param_info``.
"""
from __future__ import annotations

from .context import DriverContext, DriverStream
from .device import DriverBackend, DriverDevice
from .memory import DriverBuffer
from .module import DriverKernel, DriverProgram

__all__ = ["DriverBackend", "DriverDevice", "DriverContext", "DriverStream", "DriverBuffer", "DriverProgram",
           "DriverKernel"]
