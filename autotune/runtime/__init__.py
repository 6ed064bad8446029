"""The C runtime: building it (build.py) and calling its kernels from Python (binding.py)."""
