"""autotune: tune the coverage map of AFL++ campaigns to the target and the host.

Pipeline (one subpackage per stage): profile -> probe -> measure -> tune -> emit -> preflight.
The C runtime lives in ``kernels/`` and is built on demand by :mod:`autotune.runtime`.
"""

__version__ = "0.1.0"
