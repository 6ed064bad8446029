"""One configuration: how the target is built and how afl-fuzz runs it, the one type the race, compare
and portfolio pass around.

- ``cc_kind``: the compiler, ``afl`` (afl-clang-fast) or ``autotune`` (autotune cc);
- ``build``: its compile-time variables (``AFL_LLVM_*`` for afl-clang-fast, ``AUTOTUNE_CC_*`` for
  autotune cc: the build kind and its parameters), in order;
- ``settings``: the run-time variables afl-fuzz runs it under (our runtime's ``AUTOTUNE_*``, or
  ``AFL_*``), in order;
- ``members``: a portfolio's afl-fuzz instances, the first the ``-M`` main, the rest ``-S``
  secondaries syncing one output directory; empty for one instance;
- ``then`` and ``moves_at_s``: a secondary that moves, ``moves_at_s`` seconds into a campaign, from
  this configuration to ``then`` (its -S stops, another takes its core in the same output directory);
- ``is_default`` (AFL++'s default in a race), ``files`` (the env files it was read from),
  ``description`` (one line for a person).

Two documents record it under their own keys, kept as they are so recorded files read back:
``race.json`` (:meth:`Configuration.to_race_dict`: ``settings``, ``build``, ``is_default``) and
``compare.json`` / ``portfolio.json`` (:meth:`Configuration.to_compare_dict`: ``run_vars``,
``build_vars``, ``files``); :meth:`Configuration.from_dict` reads either.

What tune and the race search over is a point of the coverage map's configuration space,
:class:`autotune.mappoint.MapPoint`; the race's ``contestant_for`` turns one into a Configuration.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Mapping

from autotune.buildkinds import DEFAULT_KIND, KIND_VAR, kind_for, serves
from autotune.errors import AutotuneError
from autotune.vocabulary import METRIC_VAR, METRICS

CC_AFL = "afl"
CC_AUTOTUNE = "autotune"
CC_VAR_PREFIX = "AUTOTUNE_CC_"  # autotune cc's compile-time variables (AUTOTUNE_CC_INSTRUMENT, _NGRAM, _SELECTS)


def compiler_name(cc_kind: str) -> str:
    """The compiler a ``cc_kind`` builds with, as messages name it."""
    return "afl-clang-fast" if cc_kind == CC_AFL else "autotune cc"

Pairs = tuple[tuple[str, str], ...]


def pairs_of(values: Mapping[str, Any] | None, *, sort: bool = False) -> Pairs:
    """A mapping's items as (name, value) strings, in order (or sorted by name)."""
    items = [(str(k), str(v)) for k, v in dict(values or {}).items()]
    return tuple(sorted(items) if sort else items)


@dataclass(frozen=True)
class Configuration:
    """A build (``cc_kind`` under ``build``) fuzzed under ``settings``; a portfolio when ``members``."""

    name: str
    is_default: bool = False
    settings: Pairs = ()
    description: str = ""
    cc_kind: str = CC_AUTOTUNE
    build: Pairs = ()
    members: tuple["Configuration", ...] = ()
    files: tuple[str, ...] = ()
    then: "Configuration | None" = None
    moves_at_s: int | None = None

    def moved(self, *, then: "Configuration", at_s: int) -> "Configuration":
        """This configuration as a secondary that moves to ``then`` ``at_s`` seconds into the campaign."""
        if at_s < 1:
            raise AutotuneError(f"a secondary moves at {at_s} s", fix="give a move time of 1 s or more")
        if self.then is not None or then.then is not None or self.members or then.members:
            raise AutotuneError(f"{self.name} -> {then.name}: a secondary moves once, between two single builds",
                                fix="give FIRST@SECONDSs>THEN, each an env file, default or runtime")
        return Configuration(name=f"{self.name}@{at_s}s>{then.name}", is_default=False, settings=self.settings,
                             description=f"{self.description}; from {at_s} s: {then.description}",
                             cc_kind=self.cc_kind, build=self.build, files=self.files + then.files,
                             then=then, moves_at_s=int(at_s))

    @classmethod
    def of(cls, *, name: str, cc_kind: str, build_vars: Mapping[str, str] | None = None,
           run_vars: Mapping[str, str] | None = None, files: tuple[str, ...] = (), description: str = "",
           members: tuple["Configuration", ...] = (), is_default: bool = False) -> "Configuration":
        """From variable mappings (in their order)."""
        return cls(name=name, is_default=is_default, settings=pairs_of(run_vars), description=description,
                   cc_kind=cc_kind, build=pairs_of(build_vars), members=tuple(members), files=tuple(files))

    @classmethod
    def portfolio(cls, *, name: str, members: "tuple[Configuration, ...] | list[Configuration]", description: str,
                  is_default: bool = False) -> "Configuration":
        """A portfolio of ``members``, the first the -M main (whose build and variables it carries), the
        rest -S secondaries; its files are its members'."""
        first = members[0]
        return cls(name=name, is_default=is_default, settings=first.settings, description=description,
                   cc_kind=first.cc_kind, build=first.build, members=tuple(members),
                   files=tuple(f for m in members for f in m.files))

    @property
    def build_vars(self) -> dict[str, str]:
        """The compile-time variables."""
        return dict(self.build)

    @property
    def run_vars(self) -> dict[str, str]:
        """The run-time variables."""
        return dict(self.settings)

    env = run_vars

    @property
    def compiler(self) -> str:
        """The compiler that builds it: afl-clang-fast or autotune cc."""
        return compiler_name(self.cc_kind)

    @property
    def tuned(self) -> "Configuration":
        """The configuration the race tuned: itself, or a portfolio's first secondary (its main is
        AFL++'s default in every portfolio the race builds)."""
        return self.members[1] if len(self.members) > 1 else self

    def to_race_dict(self) -> dict[str, Any]:
        """As race.json records a contestant."""
        d = {"name": self.name, "is_default": self.is_default, "settings": dict(self.settings),
             "description": self.description, "cc_kind": self.cc_kind, "build": dict(self.build)}
        if self.members:
            d["members"] = [m.to_race_dict() for m in self.members]
        if self.then is not None:
            d["then"], d["moves_at_s"] = self.then.to_race_dict(), self.moves_at_s
        return d

    def to_compare_dict(self) -> dict[str, Any]:
        """As compare.json and portfolio.json record a configuration."""
        d = {"name": self.name, "cc_kind": self.cc_kind, "build_vars": dict(self.build),
             "run_vars": dict(self.settings), "files": list(self.files), "description": self.description}
        if self.members:
            d["members"] = [m.to_compare_dict() for m in self.members]
        if self.then is not None:
            d["then"], d["moves_at_s"] = self.then.to_compare_dict(), self.moves_at_s
        return d

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "Configuration":
        """Either record (race.json's contestants sort their variables by name, as they always did)."""
        members = tuple(cls.from_dict(m) for m in d.get("members", ()))
        if "run_vars" in d or "build_vars" in d:
            c = cls.of(name=str(d["name"]), cc_kind=str(d["cc_kind"]), build_vars=d.get("build_vars"),
                       run_vars=d.get("run_vars"), files=tuple(d.get("files") or ()),
                       description=str(d.get("description", "")), members=members)
        else:
            c = cls(name=str(d["name"]), is_default=bool(d["is_default"]), settings=pairs_of(d["settings"], sort=True),
                    description=str(d.get("description", "")), cc_kind=str(d.get("cc_kind", CC_AUTOTUNE)),
                    build=pairs_of(d.get("build"), sort=True), members=members)
        if d.get("then"):
            c = replace(c, then=cls.from_dict(d["then"]), moves_at_s=int(d["moves_at_s"]))
        return c


def check_serves(config: Configuration, *, what: str) -> None:
    """AutotuneError when ``config``'s autotune cc build cannot serve its run-time metric."""
    if config.cc_kind != CC_AUTOTUNE:
        return
    metric = config.run_vars.get(METRIC_VAR, "edge")
    kind = config.build_vars.get(KIND_VAR) or DEFAULT_KIND
    if metric not in METRICS:
        raise AutotuneError(f"{what}: unknown metric {metric!r}", fix=f"use one of: {', '.join(METRICS)}")
    if not serves(config.build_vars, metric):
        raise AutotuneError(f"{what}: a {kind} build cannot serve the metric {metric}",
                            fix=f"build it with {KIND_VAR}={kind_for(metric).name} (or full, which serves every "
                                "metric), or give it a metric its build serves")
