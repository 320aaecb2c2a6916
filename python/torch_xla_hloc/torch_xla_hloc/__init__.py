"""torch_xla device plugin for hloc.

Installed, this package registers itself with torch_xla under the name
``hloc`` (entry point group ``torch_xla.plugins``), so ``PJRT_DEVICE=HLOC``
runs PyTorch programs on hloc: torch_xla traces them to HLO, and hloc's PJRT
plugin (``libhloc_pjrt.so``) compiles and runs them in process on the host.

Without installing, register it by hand before the first use of a device::

    import torch_xla.experimental.plugins as plugins
    import torch_xla_hloc
    plugins.register_plugin("HLOC", torch_xla_hloc.HlocPlugin())
"""
import os
from pathlib import Path

from torch_xla.experimental import plugins

__all__ = ["HlocPlugin", "Error", "library_path"]
__version__ = "0.1.0"

_LIBRARY = "libhloc_pjrt.so"


class Error(RuntimeError):
    """Base class of this package's errors."""


def library_path() -> str:
    """Path of libhloc_pjrt.so: $HLOC_PJRT_LIBRARY, else the bundled copy."""
    explicit = os.environ.get("HLOC_PJRT_LIBRARY")
    if explicit:
        path = Path(explicit)
        if not path.is_file():
            raise Error(f"HLOC_PJRT_LIBRARY={explicit} is not a file")
        return str(path.resolve())
    bundled = Path(__file__).resolve().parent / "lib" / _LIBRARY
    if bundled.is_file():
        return str(bundled)
    raise Error(
        f"{_LIBRARY} is not bundled with this torch_xla_hloc; reinstall it after "
        "`bazel build -c opt //api:hloc_pjrt`, or set HLOC_PJRT_LIBRARY")


class HlocPlugin(plugins.DevicePlugin):
    """One hloc device (HLOC:0) in this process.

    Args:
      backend: hloc backend that runs the programs: "host" (default) or
        "interpreter" (hloc's reference interpreter; slow, for debugging).
      num_threads: threads one kernel may use, counting the caller; 0 (the
        default) uses every core.
    """

    def __init__(self, backend: str = None, num_threads: int = None):
        super().__init__()
        self._backend = backend or os.environ.get("HLOC_BACKEND", "host")
        if self._backend not in ("host", "interpreter"):
            raise ValueError(f"backend must be 'host' or 'interpreter', not {self._backend!r}")
        if num_threads is None:
            num_threads = int(os.environ.get("HLOC_NUM_THREADS", "0"))
        if num_threads < 0:
            raise ValueError(f"num_threads must be >= 0, not {num_threads}")
        self._num_threads = num_threads

    def library_path(self) -> str:
        return library_path()

    def configure_single_process(self):
        pass  # One device, one process: nothing to configure.

    def physical_chip_count(self) -> int:
        return 1

    def client_create_options(self) -> dict:
        return {"backend": self._backend, "num_threads": self._num_threads}
