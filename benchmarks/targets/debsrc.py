"""Debian source packages of real third-party targets, fetched without touching the system's apt.

``apt-get source PKG`` needs deb-src entries, which a stock Debian image does not configure.
Instead of adding them to /etc/apt (the user's machine is not changed for the tests'
convenience), each fetch builds a private apt configuration in a temporary directory: deb-src
twins of the system's configured ``deb`` entries (deb822 ``*.sources`` files and one-line
``*.list`` files, with their keyrings), its own package lists and caches. ``apt-get update`` and
``apt-get source`` run with that configuration only (``-o Dir::Etc::...``), and the directory is
removed afterwards. The system's sources, lists and caches stay as they were.

Root is not needed: the private lists and caches are writable by the caller. ``dpkg-source``
(package dpkg-dev) unpacks the tree.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import tempfile
from pathlib import Path

APT_ETC = Path("/etc/apt")
TIMEOUT_S = 300


class SourceUnavailable(Exception):
    """The source package cannot be fetched on this machine (no apt, no dpkg-dev, no mirror)."""


def system_codename(*, os_release: Path = Path("/etc/os-release")) -> str:
    """The installed release's code name (VERSION_CODENAME in os-release, "" if none)."""
    if not os_release.is_file():
        return ""
    m = re.search(r"^VERSION_CODENAME=\"?([a-z]+)", os_release.read_text(errors="replace"), re.M)
    return m.group(1) if m else ""


def entries_codename(entries: str, *, installed: str) -> str:
    """The release the apt entries name: ``installed`` (os-release's code name) when it is one of their
    suites, else their one base suite (no -updates / -security suffix). They differ inside another
    release's root that binds this host's /etc/apt (.ci/aflpp-current.sh: sid's os-release, bookworm's
    entries)."""
    suites = {s for m in re.finditer(r"^Suites:\s*(.*)$", entries, re.M) for s in m.group(1).split()}
    base = {s for s in suites if "-" not in s and "/" not in s}
    if installed in base or len(base) != 1:
        return installed
    return next(iter(base))


def with_suite(entries: str, *, codename: str, suite: str) -> str:
    """``entries`` with every suite of the release ``codename`` moved to ``suite``'s (bookworm ->
    bullseye, bookworm-security -> bullseye-security): an older release's sources from the same
    mirrors (Debian's archive serves them)."""
    if not codename:
        raise SourceUnavailable("the installed release's code name is unknown (no VERSION_CODENAME in "
                                "/etc/os-release): cannot derive another suite's entries")
    return re.sub(rf"\b{re.escape(codename)}(?=[-\s]|$)", suite, entries, flags=re.M)


def deb_src_entries(*, apt_etc: Path = APT_ETC) -> str:
    """deb822 text with a deb-src twin of every enabled ``deb`` entry configured under ``apt_etc``."""
    stanzas: list[str] = []
    files = sorted((apt_etc / "sources.list.d").glob("*.sources"))
    for path in files:
        for stanza in re.split(r"\n\s*\n", path.read_text(errors="replace")):
            lines = [ln for ln in stanza.splitlines() if ln.strip() and not ln.lstrip().startswith("#")]
            fields = dict(ln.split(":", 1) for ln in lines if ":" in ln and not ln.startswith((" ", "\t")))
            types = fields.get("Types", "").split()
            if "deb" not in types or fields.get("Enabled", "yes").strip().lower() == "no":
                continue
            out = ["Types: deb-src"] + [ln for ln in lines if not ln.startswith("Types:")]
            stanzas.append("\n".join(out))
    lists = [apt_etc / "sources.list", *sorted((apt_etc / "sources.list.d").glob("*.list"))]
    for path in lists:
        if not path.is_file():
            continue
        for line in path.read_text(errors="replace").splitlines():
            m = re.match(r"^\s*deb\s+(\[[^\]]*\]\s+)?(\S+)\s+(\S+)\s*(.*)$", line)
            if not m:
                continue
            opts = dict(kv.split("=", 1) for kv in (m.group(1) or "").strip("[] \t").split() if "=" in kv)
            stanza = ["Types: deb-src", f"URIs: {m.group(2)}", f"Suites: {m.group(3)}"]
            if m.group(4).strip():
                stanza.append(f"Components: {m.group(4).strip()}")
            if "signed-by" in opts:
                stanza.append(f"Signed-By: {opts['signed-by']}")
            stanzas.append("\n".join(stanza))
    return "\n\n".join(stanzas) + ("\n" if stanzas else "")


def _apt_options(root: Path) -> list[str]:
    (root / "sources.list.d").mkdir(parents=True, exist_ok=True)
    (root / "lists" / "partial").mkdir(parents=True, exist_ok=True)
    (root / "cache" / "archives" / "partial").mkdir(parents=True, exist_ok=True)
    return ["-o", "Dir::Etc::SourceList=/dev/null", "-o", f"Dir::Etc::SourceParts={root / 'sources.list.d'}",
            "-o", f"Dir::State::Lists={root / 'lists'}", "-o", f"Dir::Cache={root / 'cache'}",
            # as root apt downloads as the user _apt, who cannot write into a private 0700 directory
            "-o", "APT::Sandbox::User=root"]


def source_versions(showsrc: str, package: str) -> list[str]:
    """The versions of source ``package`` in ``apt-cache showsrc``'s output, newest first (apt's
    own order of comparison, ``dpkg --compare-versions``), each once."""
    import functools

    versions: list[str] = []
    for stanza in re.split(r"\n\s*\n", showsrc):
        pkg = re.search(r"^Package:\s*(\S+)", stanza, re.M)
        ver = re.search(r"^Version:\s*(\S+)", stanza, re.M)
        if pkg and ver and pkg.group(1) == package and ver.group(1) not in versions:
            versions.append(ver.group(1))

    def newer(a: str, b: str) -> int:
        if shutil.which("dpkg") is None:
            return 0
        gt = subprocess.run(["dpkg", "--compare-versions", a, "gt", b], capture_output=True).returncode == 0
        return -1 if gt else (0 if a == b else 1)

    return sorted(versions, key=functools.cmp_to_key(newer))


def _is_download_failure(stderr: str) -> bool:
    """apt-get source found the package but could not download it (a pool answering 404, say)."""
    return "Failed to fetch" in stderr or "Unable to fetch" in stderr


def fetch_source(package: str, *, dest: Path, apt_etc: Path = APT_ETC, suite: str | None = None,
                 version: str | None = None, skip_patches: bool = False) -> list[Path]:
    """``apt-get source package`` into ``dest`` with a private, temporary apt configuration.

    ``suite`` (e.g. "bullseye") takes the source from that release instead of the installed one,
    ``version`` pins the Debian version (``package=version``), ``skip_patches`` unpacks upstream's
    pristine tree (``dpkg-source -x --skip-patches``: Debian's patches stay in debian/patches,
    unapplied). Without ``version``, when the version apt picks cannot be downloaded (a security
    pool that answers 404 for it, seen on this project's machines for zlib), every other version
    ``apt-cache showsrc`` lists is tried, newest first. Returns the unpacked trees
    (``dest/<package>-<version>``); SourceUnavailable says why not.
    """
    apt = shutil.which("apt-get")
    if apt is None:
        raise SourceUnavailable("apt-get is not available on this machine")
    if shutil.which("dpkg-source") is None:
        raise SourceUnavailable("dpkg-source is missing (apt-get install -y dpkg-dev; bash .ci/setup.sh --tests does)")
    entries = deb_src_entries(apt_etc=apt_etc)
    if not entries:
        raise SourceUnavailable(f"no deb entries configured under {apt_etc} to derive deb-src entries from")
    if suite:
        entries = with_suite(entries, codename=entries_codename(entries, installed=system_codename()), suite=suite)
    dest.mkdir(parents=True, exist_ok=True)

    def source_args(v: str | None) -> list[str]:
        return ["source", *(["--download-only"] if skip_patches else []), f"{package}={v}" if v else package]

    with tempfile.TemporaryDirectory(prefix="autotune-apt-") as tmp:
        root = Path(tmp)
        opts = _apt_options(root)
        (root / "sources.list.d" / "autotune-src.sources").write_text(entries)

        def run(tool: str, args: list[str], cwd: Path) -> subprocess.CompletedProcess:
            try:
                return subprocess.run([tool, "-qq", *opts, *args], cwd=cwd, capture_output=True, text=True,
                                      timeout=TIMEOUT_S)
            except subprocess.TimeoutExpired as exc:
                raise SourceUnavailable(f"{Path(tool).name} {' '.join(args)} took over {TIMEOUT_S} s") from exc

        proc = run(apt, ["update"], root)
        if proc.returncode != 0:
            raise SourceUnavailable(f"apt-get update failed (exit {proc.returncode}): {proc.stderr.strip()[-500:]}")
        proc = run(apt, source_args(version), dest)
        failures = [] if proc.returncode == 0 else [f"{version or 'the version apt picks'}: {proc.stderr.strip()[-300:]}"]
        if proc.returncode != 0 and version is None and _is_download_failure(proc.stderr):
            cache_tool = shutil.which("apt-cache")
            shown = run(cache_tool, ["showsrc", package], root) if cache_tool else None
            for v in source_versions(shown.stdout if shown and shown.returncode == 0 else "", package):
                proc = run(apt, source_args(v), dest)
                if proc.returncode == 0:
                    break
                failures.append(f"{v}: {proc.stderr.strip()[-300:]}")
        if proc.returncode != 0:
            raise SourceUnavailable(f"apt-get source {package} failed for every version the archive lists: "
                                    + " | ".join(failures))
    if skip_patches:
        for dsc in sorted(dest.glob(f"{package}_*.dsc")):
            tree = dest / f"{package}-{dsc.stem.split('_')[1].split('-')[0].split(':')[-1]}"
            if tree.is_dir():
                continue
            proc = subprocess.run(["dpkg-source", "-x", "--skip-patches", dsc.name, tree.name], cwd=dest,
                                  capture_output=True, text=True, timeout=TIMEOUT_S)
            if proc.returncode != 0:
                raise SourceUnavailable(f"dpkg-source -x --skip-patches {dsc.name} failed (exit "
                                        f"{proc.returncode}): {proc.stderr.strip()[-500:]}")
    return sorted(p for p in dest.glob(f"{package}-*") if p.is_dir())


def cached_source_tree(package: str, *, cache: Path, proof: str, suite: str | None = None,
                       version: str | None = None, skip_patches: bool = False) -> Path:
    """The unpacked tree of ``package`` under ``cache/<package>`` (``cache/<package>_<version>``
    when a version is pinned), fetched once (a lock serialises concurrent callers); ``proof`` is a
    file the tree must hold (e.g. "lib/lz4.h"); ``suite``, ``version`` and ``skip_patches`` as for
    fetch_source."""
    import json

    from autotune.io import file_lock

    base = cache / (f"{package}_{version}" if version else package)
    marker = base / "src.json"
    with file_lock(base / "src.lock"):
        if marker.is_file():
            tree = Path(json.loads(marker.read_text())["source_dir"])
            if (tree / proof).is_file():
                return tree
        dest = base / "src"
        shutil.rmtree(dest, ignore_errors=True)
        fetch_source(package, dest=dest, suite=suite, version=version, skip_patches=skip_patches)
        trees = sorted(t for t in dest.glob(f"{package}-*") if (t / proof).is_file())
        if not trees:
            raise SourceUnavailable(f"apt-get source {package} unpacked no tree with {proof} under {dest}")
        marker.write_text(json.dumps({"source_dir": str(trees[-1])}))
        return trees[-1]
