"""The host profile saved beside measured figures (autotune.profile), tolerant of its absence."""

from __future__ import annotations

from pathlib import Path
from typing import Any


def current_host(*, profile_path: Path | None = None) -> dict[str, Any] | None:
    """This host's profile document (detected, or loaded from ``profile_path``); None if unavailable."""
    try:
        from autotune import profile as prof  # noqa: F401
    except ImportError:
        return None
    try:
        if profile_path is not None:
            from autotune.profile import load_profile

            return load_profile(profile_path).to_dict()
        from autotune.profile import detect_host

        return detect_host().to_dict()
    except ImportError:
        return None


def llc_bytes(host: dict[str, Any] | None) -> int | None:
    """Size of one instance of the last-level cache, from a profile document."""
    return _cache_figure(host, last=True)


def l2_bytes(host: dict[str, Any] | None) -> int | None:
    return _cache_figure(host, level=2)


def _cache_figure(host, *, level: int | None = None, last: bool = False) -> int | None:
    if not host:
        return None
    try:
        from autotune.profile.model import HostProfile

        hp = HostProfile.from_dict(host)
        return hp.llc_bytes if last else hp.l2_bytes
    except Exception:  # noqa: BLE001 - a profile we cannot read gives no figure
        return None
