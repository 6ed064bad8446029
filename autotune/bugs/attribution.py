"""A trial's time-to-bug: everything afl-fuzz kept (queue, crashes, hangs) replayed through a canary
build of the target (autotune.bugs.page.sweep: crashes and hangs one a process, the queue many to a
process, split where a batch shows something new), each bug's first *reach* and first *trigger*
taken from the kept inputs' ``time:`` (milliseconds since the campaign's start; seeds ``time:0``).

- time-to-reach: the earliest kept input (any kind) that reached the bug;
- time-to-trigger: the earliest kept input that triggered it. In a campaign with fatal canaries a
  trigger is a crash, so this is the earliest crash triggering it; a queue or hang input that
  triggers (a canary build that is not the one fuzzed) counts too;
- a bug never reached (triggered) is *censored* at the trial's length: the survival statistics
  (autotune.bugs.survival) read ``None`` so.

An input whose name has no ``time:`` counts at the trial's end, one stamped after the trial's end at
the end (afl-fuzz stops a little after -V): both are counted in ``late_inputs``.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Mapping, Sequence

from autotune.afl_output import KeptInput
from autotune.bugs.page import BATCH, InputBugs, SweepStats, sweep

SCHEMA_VERSION = 1
EVENTS = ("trigger", "reach")


@dataclass(frozen=True)
class InputHit:
    """One kept input that reached or triggered a bug (inputs reaching none are not kept)."""

    kind: str  # queue, crashes, hangs
    name: str
    time_ms: int | None
    instance: str
    reached: tuple[str, ...]
    triggered: tuple[str, ...]
    crashed: bool

    def to_dict(self) -> dict:
        return {"kind": self.kind, "name": self.name, "time_ms": self.time_ms, "instance": self.instance,
                "reached": list(self.reached), "triggered": list(self.triggered), "crashed": self.crashed}

    @classmethod
    def from_dict(cls, d: Mapping) -> "InputHit":
        return cls(kind=str(d["kind"]), name=str(d["name"]), time_ms=None if d.get("time_ms") is None
                   else int(d["time_ms"]), instance=str(d.get("instance", "default")),
                   reached=tuple(d.get("reached", ())), triggered=tuple(d.get("triggered", ())),
                   crashed=bool(d.get("crashed", False)))


@dataclass(frozen=True)
class BugTimes:
    reach_s: float | None  # None: never reached in the trial (censored at its length)
    trigger_s: float | None

    def time(self, event: str) -> float | None:
        return self.reach_s if event == "reach" else self.trigger_s

    def to_dict(self) -> dict:
        return {"reach_s": self.reach_s, "trigger_s": self.trigger_s}

    @classmethod
    def from_dict(cls, d: Mapping) -> "BugTimes":
        return cls(reach_s=None if d.get("reach_s") is None else float(d["reach_s"]),
                   trigger_s=None if d.get("trigger_s") is None else float(d["trigger_s"]))


@dataclass(frozen=True)
class TrialBugs:
    """One trial's bugs: per bug its first reach and trigger, and the inputs behind them."""

    seconds: float  # the trial's length: a bug not seen by then is censored there
    bugs: dict[str, BugTimes]
    inputs: int  # kept inputs replayed
    crashes: int  # kept crashes
    crashes_without_bug: int  # crashes that triggered no canary (another fault of the target)
    late_inputs: int  # inputs without time: or stamped after the trial's end (counted at its end)
    # the inputs behind the figures: every input that triggered a bug, and the first to reach each bug
    # (not every input that reached one: on the demo nearly every kept input does, thousands a trial)
    hits: tuple[InputHit, ...] = field(default=())
    binary: str = ""
    schema_version: int = SCHEMA_VERSION
    # bugs a batch of the sweep reached or triggered that no input of it did on its own (the harness
    # kept state between inputs): attributed to none, named so a reader knows (page.SweepStats)
    unexplained: tuple[str, ...] = ()

    def triggered(self) -> frozenset[str]:
        return frozenset(n for n, b in self.bugs.items() if b.trigger_s is not None)

    def reached(self) -> frozenset[str]:
        return frozenset(n for n, b in self.bugs.items() if b.reach_s is not None)

    def to_dict(self) -> dict:
        return {"schema_version": self.schema_version, "seconds": self.seconds, "binary": self.binary,
                "inputs": self.inputs, "crashes": self.crashes, "crashes_without_bug": self.crashes_without_bug,
                "late_inputs": self.late_inputs, "bugs": {n: b.to_dict() for n, b in sorted(self.bugs.items())},
                "hits": [h.to_dict() for h in self.hits],
                **({"unexplained": list(self.unexplained)} if self.unexplained else {})}

    @classmethod
    def from_dict(cls, d: Mapping) -> "TrialBugs":
        if int(d.get("schema_version", 0)) != SCHEMA_VERSION:
            raise ValueError(f"trial bugs schema_version {d.get('schema_version')!r}, expected {SCHEMA_VERSION}")
        return cls(seconds=float(d["seconds"]), bugs={n: BugTimes.from_dict(b) for n, b in d["bugs"].items()},
                   inputs=int(d["inputs"]), crashes=int(d["crashes"]), crashes_without_bug=int(d["crashes_without_bug"]),
                   late_inputs=int(d["late_inputs"]), hits=tuple(InputHit.from_dict(h) for h in d.get("hits", ())),
                   binary=str(d.get("binary", "")), unexplained=tuple(d.get("unexplained", ())))


def _when_s(time_ms: int | None, seconds: float) -> float:
    """An input's time in seconds, at the trial's end when it has none or is stamped after it."""
    if time_ms is None:
        return float(seconds)
    return min(time_ms / 1000.0, float(seconds))


def hits_of(kept: Sequence[KeptInput], replays: Sequence[InputBugs]) -> tuple[InputHit, ...]:
    """The kept inputs (paired with their replays, in the same order) that reached or triggered a bug."""
    if len(kept) != len(replays):
        raise ValueError(f"{len(kept)} kept inputs but {len(replays)} replays")
    return tuple(InputHit(kind=k.kind, name=k.path.name, time_ms=k.time_ms, instance=k.instance,
                          reached=tuple(sorted(r.reached)), triggered=tuple(sorted(r.triggered)), crashed=r.crashed)
                 for k, r in zip(kept, replays) if r.reached or r.triggered)


def attribute(*, hits: Sequence[InputHit], seconds: float, inputs: int, crashes: int, crashes_without_bug: int,
              late_inputs: int, binary: str = "") -> TrialBugs:
    """Each bug's first reach and trigger over ``hits`` (pure: the figures from the recorded hits)."""
    reach: dict[str, float] = {}
    trig: dict[str, float] = {}
    for h in hits:
        t = _when_s(h.time_ms, seconds)
        for n in h.reached:
            reach[n] = min(t, reach.get(n, t))
        for n in h.triggered:
            trig[n] = min(t, trig.get(n, t))
            reach[n] = min(t, reach.get(n, t))  # a trigger is a reach (the canary counts both)
    bugs = {n: BugTimes(reach_s=reach.get(n), trigger_s=trig.get(n)) for n in sorted(reach)}
    return TrialBugs(seconds=float(seconds), bugs=bugs, inputs=inputs, crashes=crashes,
                     crashes_without_bug=crashes_without_bug, late_inputs=late_inputs, hits=decisive(hits, seconds),
                     binary=binary)


def decisive(hits: Sequence[InputHit], seconds: float) -> tuple[InputHit, ...]:
    """The hits a trial keeps: every one that triggered a bug, and the earliest to reach each bug (ties
    by name), in the order given."""
    first: dict[str, InputHit] = {}
    for h in sorted(hits, key=lambda h: (_when_s(h.time_ms, seconds), h.name)):
        for n in h.reached:
            first.setdefault(n, h)
    keep = {id(h) for h in hits if h.triggered} | {id(h) for h in first.values()}
    return tuple(h for h in hits if id(h) in keep)


def attribute_trial(*, binary: str | Path, kept: Sequence[KeptInput], seconds: float,
                    env: Mapping[str, str] | None = None, timeout_s: float = 5.0,
                    stats: SweepStats | None = None, batch: int = BATCH) -> TrialBugs:
    """Replay a trial's kept inputs through the canary build ``binary``; its time-to-bug figures.

    The sweep runs the inputs in the order ``decisive`` ranks them (time, then name), so the first
    input it finds reaching a bug is the one a replay of every input on its own would keep; ``batch``
    1 runs every input on its own (``replay_check``'s reference)."""
    order = sorted(range(len(kept)), key=lambda i: (_when_s(kept[i].time_ms, seconds), kept[i].path.name, i))
    alone = [pos for pos, i in enumerate(order) if kept[i].kind != "queue"]
    stats = stats if stats is not None else SweepStats()
    found = sweep(binary, [kept[i].path for i in order], env=env, timeout_s=timeout_s, alone=alone, stats=stats,
                  batch=batch)
    picked = sorted(found, key=lambda pos: order[pos])  # the kept order, as a replay of all gives it
    limit_ms = seconds * 1000
    tb = attribute(hits=hits_of([kept[order[p]] for p in picked], [found[p] for p in picked]), seconds=seconds,
                   inputs=len(kept), crashes=sum(1 for k in kept if k.kind == "crashes"),
                   crashes_without_bug=sum(1 for p in alone if kept[order[p]].kind == "crashes"
                                           and not found[p].triggered),
                   late_inputs=sum(1 for k in kept if k.time_ms is None or k.time_ms > limit_ms), binary=str(binary))
    return replace(tb, unexplained=tuple(sorted(stats.unexplained)))


def replay_check(recorded: TrialBugs, kept: Sequence[KeptInput], *, env: Mapping[str, str] | None = None,
                 timeout_s: float = 5.0) -> tuple[TrialBugs, list[str]]:
    """The sweep's exactness on one recorded trial: its kept inputs replayed again through the same
    canary build, every one on its own (a process and a fresh page each), and how the figures
    ``recorded`` (the sweep's) differ from that replay's; an empty list when they agree.

    The sweep itself names state that makes a batch show a bug no single input shows (``unexplained``);
    what only this check sees is state that *hides* a reach or trigger in a batch, so that a bug's
    first input comes later in the sweep than on its own."""
    if not recorded.binary:
        raise ValueError("the recorded trial names no canary build (its bugs' binary is empty)")
    own = attribute_trial(binary=recorded.binary, kept=kept, seconds=recorded.seconds, env=env,
                          timeout_s=timeout_s, batch=1)
    return own, differences(recorded, own)


def differences(a: TrialBugs, b: TrialBugs) -> list[str]:
    """What differs between two attributions of one trial's kept inputs, ``a`` against ``b``, one
    line each: a bug's times, the counts, the decisive inputs, the bugs left unexplained."""
    def when(t: BugTimes | None) -> str:
        if t is None:
            return "never reached"
        return ", ".join(f"{e} {'never' if t.time(e) is None else f'{t.time(e):.3f} s'}" for e in ("reach", "trigger"))

    out = [f"{n}: {when(a.bugs.get(n))} against {when(b.bugs.get(n))}"
           for n in sorted(set(a.bugs) | set(b.bugs)) if a.bugs.get(n) != b.bugs.get(n)]
    counts = ("seconds", "inputs", "crashes", "crashes_without_bug", "late_inputs")
    out += [f"{k}: {getattr(a, k)} against {getattr(b, k)}" for k in counts if getattr(a, k) != getattr(b, k)]

    def keyed(t: TrialBugs) -> dict[tuple[str, str, str], InputHit]:
        return {(h.instance, h.kind, h.name): h for h in t.hits}

    ha, hb = keyed(a), keyed(b)
    for k in sorted(set(ha) | set(hb)):
        if ha.get(k) != hb.get(k):
            x, y = ha.get(k), hb.get(k)
            out.append(f"input {'/'.join(k)}: {_hit_text(x)} against {_hit_text(y)}")
    if a.unexplained != b.unexplained:
        out.append(f"unexplained: {', '.join(a.unexplained) or 'none'} against {', '.join(b.unexplained) or 'none'}")
    return out


def _hit_text(h: InputHit | None) -> str:
    if h is None:
        return "not decisive"
    return (f"reached {', '.join(h.reached) or 'none'}, triggered {', '.join(h.triggered) or 'none'}"
            f"{', crashed' if h.crashed else ''}")
