"""xdnaforge: build AMD NPU userspace (XRT + amdxdna shim) from pinned recipes and prove it."""

__version__ = "0.1.0"
