"""The host profile saved beside measured figures (autotune.profile), tolerant of its absence."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from autotune import profile as prof

if TYPE_CHECKING:
    from autotune.profile.model import HostProfile


def host_profile(*, profile_path: Path | None = None) -> "HostProfile | None":
    """This host's profile (detected, or loaded from ``profile_path``); None if unavailable."""
    try:
        return prof.load_profile(profile_path) if profile_path is not None else prof.detect_host()
    except ImportError:  # a profile source's optional module is missing: no profile
        return None


def current_host(*, profile_path: Path | None = None) -> dict[str, Any] | None:
    """This host's profile document, for the documents that record it as JSON; None if unavailable."""
    host = host_profile(profile_path=profile_path)
    return host.to_dict() if host is not None else None
