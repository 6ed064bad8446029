"""The host profile document: a machine's caches, cores, huge pages and host checks.

Every figure is either known or the string ``"unknown"`` in the document (``None`` in Python),
so a reference profile can say exactly what its source gives and no more, and a loader can
tell an unknown figure from a missing (corrupt) field. Cache sizes are those of ONE instance
(``size_bytes``); ``instances`` says how many there are and ``total_bytes`` is their sum.
Each known cache figure names its source in ``sources`` (sysfs, py-cpuinfo, lscpu, or the
paper's table).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from autotune.profile.checks import SEVERITIES, Finding
from autotune.profile.fields import UNKNOWN, FieldReader

SCHEMA_VERSION = 1
CACHE_KINDS = ("data", "instruction", "unified", "unspecified")  # unspecified: the source does not say
SCOPES = ("core", "cluster", "package", "system", "shared", "unknown")  # shared: by several cores, extent not given
ORIGINS = ("detected", "reference")
CACHE_FIGURES = ("size_bytes", "instances", "total_bytes", "ways", "line_bytes", "sets",
                 "shared_cpu_list", "sharing_cpus", "cpus")
_KIND_LETTER = {"data": "d", "instruction": "i", "unified": "", "unspecified": ""}


def _u(value):
    """Python value -> document value (None -> "unknown")."""
    return UNKNOWN if value is None else value


@dataclass(frozen=True)
class CacheLevel:
    """One shape of cache at one level and type; ``instances`` copies of it exist."""

    level: int
    kind: str
    size_bytes: int | None = None  # ONE instance
    instances: int | None = None
    total_bytes: int | None = None  # all instances of this entry together
    ways: int | None = None
    line_bytes: int | None = None
    sets: int | None = None
    shared_cpu_list: str | None = None  # the CPUs sharing the first instance, e.g. "0-1"
    sharing_cpus: int | None = None  # how many CPUs share one instance
    cpus: str | None = None  # every CPU served by an instance of this entry
    scope: str = "unknown"
    sources: dict[str, str] = field(default_factory=dict)  # figure -> where it came from
    as_given: str = ""  # the source's own words (reference profiles)
    note: str = ""

    @property
    def name(self) -> str:
        return f"L{self.level}{_KIND_LETTER.get(self.kind, '')}"

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {"level": self.level, "kind": self.kind}
        for key in CACHE_FIGURES:
            d[key] = _u(getattr(self, key))
        d["scope"] = self.scope
        d["as_given"] = self.as_given
        d["note"] = self.note
        d["sources"] = dict(self.sources)
        return d

    @classmethod
    def from_dict(cls, d: Any, *, path="<cache table>", where: str = "cache") -> "CacheLevel":
        r = FieldReader(d, path=path, where=where)
        kw: dict[str, Any] = {
            "level": r.int_("level", minimum=1, maximum=4, unknown_ok=False),
            "kind": r.choice("kind", CACHE_KINDS),
            "size_bytes": r.int_("size_bytes", minimum=1),
            "instances": r.int_("instances", minimum=1),
            "total_bytes": r.int_("total_bytes", minimum=1),
            "ways": r.int_("ways", minimum=1),
            "line_bytes": r.int_("line_bytes", minimum=1),
            "sets": r.int_("sets", minimum=1),
            "shared_cpu_list": r.cpulist("shared_cpu_list"),
            "sharing_cpus": r.int_("sharing_cpus", minimum=1),
            "cpus": r.cpulist("cpus"),
            "scope": r.choice("scope", SCOPES),
            "as_given": r.str_("as_given", unknown_ok=False, empty_ok=True),
            "note": r.str_("note", unknown_ok=False, empty_ok=True),
            "sources": r.str_table("sources", allowed=CACHE_FIGURES),
        }
        for fig in CACHE_FIGURES:
            if kw[fig] is not None and fig not in kw["sources"]:
                r.fail(f"figure '{fig}' is known but has no source", key=f"sources.{fig}")
        if None not in (kw["size_bytes"], kw["instances"], kw["total_bytes"]) and \
                kw["size_bytes"] * kw["instances"] != kw["total_bytes"]:
            r.fail("is not size_bytes x instances", key="total_bytes")
        return cls(**kw)


@dataclass(frozen=True)
class HostProfile:
    """A machine: detected on this host (``origin='detected'``) or taken from a paper."""

    name: str
    origin: str
    citation: str
    arch: str | None = None
    vendor: str | None = None
    brand: str | None = None
    flags: tuple[str, ...] | None = None
    packages: int | None = None
    cores: int | None = None
    threads: int | None = None
    threads_per_core: int | None = None
    smt: str | None = None  # the kernel's SMT control: on, off, notsupported, ...
    online_cpus: str | None = None
    memory_bytes: int | None = None
    thp_enabled: str | None = None
    thp_defrag: str | None = None
    hugepages: tuple[dict[str, int], ...] | None = None  # {page_bytes, reserved, free}
    caches: tuple[CacheLevel, ...] = ()
    checks: tuple[Finding, ...] | None = None
    sources: dict[str, str] = field(default_factory=dict)  # top-level figure -> where it came from
    notes: tuple[str, ...] = ()
    schema_version: int = SCHEMA_VERSION

    # -- the API later stages use ------------------------------------------------------------
    def caches_at(self, level: int, kind: str | None = None) -> list[CacheLevel]:
        """Every entry at ``level``; ``kind=None`` means the data side (data, unified or unspecified)."""
        kinds = (kind,) if kind else ("data", "unified", "unspecified")
        return [c for c in self.caches if c.level == level and c.kind in kinds]

    def cache(self, level: int, kind: str | None = None) -> CacheLevel | None:
        """The cache at ``level`` (data side unless ``kind`` is given) that serves CPU 0.

        A hybrid machine has several shapes at one level; the one serving the lowest CPU is
        returned (entries are ordered so), use :meth:`caches_at` for all of them.
        """
        found = self.caches_at(level, kind)
        return found[0] if found else None

    @property
    def llc(self) -> CacheLevel | None:
        """The last-level cache on the data side."""
        levels = [c.level for c in self.caches if c.kind != "instruction"]
        return self.cache(max(levels)) if levels else None

    @property
    def l1d_bytes(self) -> int | None:
        c = self.cache(1, "data")
        return c.size_bytes if c else None

    @property
    def l2_bytes(self) -> int | None:
        c = self.cache(2)
        return c.size_bytes if c else None

    @property
    def llc_bytes(self) -> int | None:
        return self.llc.size_bytes if self.llc else None

    @property
    def llc_sharing_cpus(self) -> int | None:
        """How many CPUs share one instance of the last-level cache."""
        return self.llc.sharing_cpus if self.llc else None

    @property
    def line_bytes(self) -> int | None:
        """Cache line size: that of L1d, else the first known one."""
        first = self.cache(1, "data")
        if first and first.line_bytes:
            return first.line_bytes
        return next((c.line_bytes for c in self.caches if c.line_bytes), None)

    # -- the document -----------------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        return {
            "schema_version": self.schema_version,
            "name": self.name,
            "origin": self.origin,
            "citation": self.citation,
            "notes": list(self.notes),
            "cpu": {
                "arch": _u(self.arch),
                "vendor": _u(self.vendor),
                "brand": _u(self.brand),
                "packages": _u(self.packages),
                "cores": _u(self.cores),
                "threads": _u(self.threads),
                "threads_per_core": _u(self.threads_per_core),
                "smt": _u(self.smt),
                "online_cpus": _u(self.online_cpus),
                "flags": UNKNOWN if self.flags is None else list(self.flags),
            },
            "memory": {
                "memory_bytes": _u(self.memory_bytes),
                "thp_enabled": _u(self.thp_enabled),
                "thp_defrag": _u(self.thp_defrag),
                "hugepages": UNKNOWN if self.hugepages is None else [dict(p) for p in self.hugepages],
            },
            "sources": dict(self.sources),
            "caches": [c.to_dict() for c in self.caches],
            "checks": UNKNOWN if self.checks is None else [f.to_dict() for f in self.checks],
        }

    @classmethod
    def from_dict(cls, d: Any, *, path="<host profile>") -> "HostProfile":
        """Validate every field; a bad one raises DocumentError naming the file and the field."""
        r = FieldReader(d, path=path, where="")
        version = r.int_("schema_version", unknown_ok=False)
        if version != SCHEMA_VERSION:
            r.fail(f"{version} is not supported (this autotune reads version {SCHEMA_VERSION})",
                   key="schema_version")
        kw: dict[str, Any] = {
            "schema_version": version,
            "name": r.str_("name", unknown_ok=False),
            "origin": r.choice("origin", ORIGINS),
            "citation": r.str_("citation", unknown_ok=False),
        }
        notes = r.get("notes")
        if not isinstance(notes, list) or not all(isinstance(n, str) for n in notes):
            r.fail("must be a list of strings", key="notes")
        kw["notes"] = tuple(notes)
        cpu = r.sub("cpu")
        kw.update(
            arch=cpu.str_("arch"), vendor=cpu.str_("vendor"), brand=cpu.str_("brand"),
            packages=cpu.int_("packages", minimum=1), cores=cpu.int_("cores", minimum=1),
            threads=cpu.int_("threads", minimum=1), threads_per_core=cpu.int_("threads_per_core", minimum=1),
            smt=cpu.str_("smt"), online_cpus=cpu.cpulist("online_cpus"), flags=cpu.str_list("flags"),
        )
        mem = r.sub("memory")
        kw.update(memory_bytes=mem.int_("memory_bytes", minimum=1), thp_enabled=mem.str_("thp_enabled"),
                  thp_defrag=mem.str_("thp_defrag"))
        hugepages_raw = mem.get("hugepages")
        kw["hugepages"] = None
        if hugepages_raw != UNKNOWN:
            if not isinstance(hugepages_raw, list):
                mem.fail("must be a list of tables or \"unknown\"", key="hugepages")
            kw["hugepages"] = tuple(_hugepage(p, path=path, where=f"memory.hugepages[{i}]")
                                    for i, p in enumerate(hugepages_raw))
        kw["sources"] = r.str_table("sources")
        caches_raw = r.get("caches")
        if not isinstance(caches_raw, list):
            r.fail("must be a list of cache tables", key="caches")
        kw["caches"] = tuple(CacheLevel.from_dict(c, path=path, where=f"caches[{i}]")
                             for i, c in enumerate(caches_raw))
        checks_raw = r.get("checks")
        kw["checks"] = None
        if checks_raw != UNKNOWN:
            if not isinstance(checks_raw, list):
                r.fail("must be a list of findings or \"unknown\"", key="checks")
            kw["checks"] = tuple(_finding(c, path=path, where=f"checks[{i}]") for i, c in enumerate(checks_raw))
        return cls(**kw)


def _finding(d: Any, *, path, where: str) -> Finding:
    r = FieldReader(d, path=path, where=where)
    return Finding(check=r.str_("check", unknown_ok=False), severity=r.choice("severity", SEVERITIES),
                   message=r.str_("message", unknown_ok=False), fix=r.str_("fix", unknown_ok=False, empty_ok=True))


def _hugepage(d: Any, *, path, where: str) -> dict[str, int]:
    r = FieldReader(d, path=path, where=where)
    return {"page_bytes": r.int_("page_bytes", minimum=1, unknown_ok=False),
            "reserved": r.int_("reserved", minimum=0, unknown_ok=False),
            "free": r.int_("free", minimum=0, unknown_ok=False)}
