"""Measurements kept between runs: ``<out>/measurements.json``.

A second `autotune tune` on the same probe, harness, backend and host (say with another
--max-collision-rate or --calls) reuses every configuration already measured instead of running
it again. The file is rewritten atomically after each new measurement, so an interrupted run
keeps what it measured. ``--fresh`` ignores it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from autotune.errors import AutotuneError
from autotune.io import read_json, write_json_atomic
from autotune.mappoint import MapPoint
from autotune.profile.model import HostProfile
from autotune.tune.backends import CachedMeasurer, Measurement

SCHEMA_VERSION = 1
FILE_NAME = "measurements.json"


def cache_identity(*, inputs, backend: str, host: HostProfile | None) -> dict[str, Any]:
    """What a measurement depends on besides the configuration (the host by its profile's name)."""
    ident: dict[str, Any] = {"backend": backend, "probe_dir": str(inputs.probe_dir) if inputs.probe_dir else None,
                             "harness": str(inputs.harness) if inputs.harness else None,
                             "target_exec_ns": inputs.target_exec_ns, "host": host.name if host else None}
    if inputs.harness and inputs.harness.is_file():
        st = inputs.harness.stat()
        ident["harness_size"], ident["harness_mtime_ns"] = st.st_size, st.st_mtime_ns
    pj = inputs.probe_dir / "probe.json" if inputs.probe_dir else None
    if pj and pj.is_file():
        ident["probe_mtime_ns"] = pj.stat().st_mtime_ns
    return ident


def attach(cached: CachedMeasurer, *, out_dir: Path, identity: dict[str, Any], fresh: bool) -> int:
    """Preload ``cached`` from out_dir (unless fresh or the identity differs) and save each new
    measurement there. Returns how many measurements were loaded."""
    path = out_dir / FILE_NAME
    loaded = 0
    if not fresh and path.is_file():
        try:
            doc = read_json(path)
        except AutotuneError:
            doc = None  # a corrupt cache is only a cache: measure again
        if isinstance(doc, dict) and doc.get("schema_version") == SCHEMA_VERSION and doc.get("identity") == identity:
            for k, m in (doc.get("measurements") or {}).items():
                try:
                    cached.cache[k] = Measurement.from_dict(m)
                    loaded += 1
                except (KeyError, TypeError, ValueError):
                    continue

    def save(_config: MapPoint, _m: Measurement) -> None:
        write_json_atomic(path, {"schema_version": SCHEMA_VERSION, "identity": identity,
                                 "measurements": {k: v.to_dict() for k, v in sorted(cached.cache.items())}})

    cached.on_measure = save
    return loaded
