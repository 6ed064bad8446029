"""Host profiles: the machine's cache topology, cores, huge pages and host checks.

API for the later stages::

    from autotune.profile import detect_host, load_profile, reference_profile
    host = detect_host()               # this machine (sysfs, procfs; py-cpuinfo/lscpu as fallbacks)
    host.l1d_bytes, host.l2_bytes, host.llc_bytes, host.llc_sharing_cpus, host.line_bytes
    host.cache(2)                      # CacheLevel: size_bytes (one instance), instances, ways, ...
"""

from autotune.profile.checks import Finding, run_host_checks
from autotune.profile.detect import detect_host
from autotune.profile.model import SCHEMA_VERSION, UNKNOWN, CacheLevel, HostProfile
from autotune.profile.store import (
    list_reference_profiles,
    load_profile,
    reference_profile,
    resolve_profile,
    save_profile,
)

__all__ = [
    "SCHEMA_VERSION", "UNKNOWN", "CacheLevel", "Finding", "HostProfile", "detect_host",
    "list_reference_profiles", "load_profile", "reference_profile", "resolve_profile",
    "run_host_checks", "save_profile",
]
