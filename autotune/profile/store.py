"""Profiles on disk: save/load as TOML (validated), and the bundled reference profiles."""

from __future__ import annotations

from pathlib import Path

from autotune.errors import AutotuneError, DocumentError
from autotune.io import read_toml, write_toml_atomic
from autotune.paths import profiles_dir
from autotune.profile.model import HostProfile


def save_profile(profile: HostProfile, path: str | Path) -> Path:
    """Write ``profile`` to ``path`` as TOML, atomically."""
    return write_toml_atomic(path, profile.to_dict())


def load_profile(path: str | Path) -> HostProfile:
    """Read and validate a profile; a corrupt or incomplete file raises DocumentError."""
    path = Path(path)
    doc = read_toml(path)
    if "schema_version" not in doc:
        raise DocumentError(path, "missing (is this an autotune host profile?)", field="schema_version",
                            fix="re-create the profile (autotune profile --save PATH)")
    return HostProfile.from_dict(doc, path=path)


def list_reference_profiles() -> list[str]:
    """Names of the bundled reference profiles (profiles/*.toml), sorted."""
    return sorted(p.stem for p in profiles_dir().glob("*.toml"))


def reference_profile(name: str) -> HostProfile:
    """A bundled reference profile by name (see :func:`list_reference_profiles`)."""
    path = profiles_dir() / f"{name}.toml"
    if not path.is_file():
        raise AutotuneError(
            f"no reference profile named '{name}'",
            fix="choose one of: " + ", ".join(list_reference_profiles()) + " (or give a path to a .toml file)",
        )
    return load_profile(path)


def resolve_profile(name_or_path: str) -> HostProfile:
    """A reference profile by name, or a profile file by path (anything with a / or ending in .toml)."""
    candidate = Path(name_or_path)
    if candidate.suffix == ".toml" or "/" in name_or_path or candidate.is_file():
        return load_profile(candidate)
    return reference_profile(name_or_path)
