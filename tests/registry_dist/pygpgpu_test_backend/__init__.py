"""A third-party backend as a plug-in would ship it: proves the registry needs no change for one."""
from pygpgpu_core.errors import BackendUnavailable


class AcmeDevice:
    fp64 = True
    fp16 = False
    host_unified_memory = True
    extensions = frozenset()
    global_mem_size = 1 << 30
    compute_units = 4
    max_work_group_size = 256

    def __init__(self, backend, index, name, vendor, arch):
        self.backend, self.index, self.name, self.vendor, self.arch = backend, index, name, vendor, arch

    @property
    def selector(self):
        return f"{self.backend.name}:{self.index}"

    def context(self):
        raise NotImplementedError("the test backend only enumerates")


class AcmeBackend:
    name = "acme"
    dialect = "opencl"

    def devices(self):
        return [
            AcmeDevice(self, 0, "Acme Rocket 9000", "ACME Corp", "acme1"),
            AcmeDevice(self, 1, "Acme Anvil", "ACME Corp", "acme2"),
            AcmeDevice(self, 2, "Acme Rocket 9000", "ACME Corp", "acme1"),
        ]

    def version(self):
        return "acme 1.0"


class NoDeviceBackend(AcmeBackend):
    name = "nodevice"

    def devices(self):
        raise BackendUnavailable("nodevice", "the test driver reports no device")


backend = AcmeBackend()
no_device_backend = NoDeviceBackend()
