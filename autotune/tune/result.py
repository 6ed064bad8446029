"""The tune document (report.json): inputs, space, objective settings, every trial, the choice."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from autotune.tune.space import AFL_DEFAULT_MAP_POW2

SCHEMA_VERSION = 1
AFL_DEFAULT_MAP_SLOTS = 1 << AFL_DEFAULT_MAP_POW2


@dataclass(frozen=True)
class TuneResult:
    target: str
    inputs: dict[str, Any]
    space: dict[str, Any]
    settings: dict[str, Any]  # objective settings
    backend: str
    calls: int
    seed: int
    trials: list[dict[str, Any]]  # Trial.to_dict() in call order
    best: dict[str, Any]  # Evaluation.to_dict()
    no_rebuild_best: dict[str, Any] | None  # best evaluated flat / 64 KiB / 8-bit (AFL++ as installed)
    measured: int
    cache_hits: int
    elapsed_s: float
    host: dict[str, Any] | None = None
    curves: dict[str, Any] = field(default_factory=dict)  # for the plot/report: collision and cost curves
    confirmation: dict[str, Any] | None = None  # Confirmation.to_dict(): the repeats behind the choice
    schema_version: int = SCHEMA_VERSION

    @property
    def best_config(self) -> dict[str, Any]:
        return self.best["config"]

    @property
    def needs_afl_rebuild(self) -> bool:
        """AFL++'s own CLASSIC/NGRAM/CTX instrumentation would need a map larger than 2^16."""
        return int(self.best_config["map_slots"]) > AFL_DEFAULT_MAP_SLOTS

    def rebuild_note(self) -> str:
        """What an afl-cc build of the best needs. AFL++'s maps are flat: the afl-cc equivalent of a
        two-level map is a flat map of the same hash space (its index size)."""
        bc = self.best_config
        pow2 = int(bc["map_slots"]).bit_length() - 1
        what = (f"its index has 2^{pow2} entries, so an afl-cc build with {bc['metric']} (AFL++'s maps are flat) "
                f"would need a flat 2^{pow2} map" if bc["layout"] == "twolevel"
                else f"an afl-cc build with {bc['metric']} would need a 2^{pow2} map")
        return f"{what} (AFL++ rebuilt with MAP_SIZE_POW2={pow2})"

    def convergence(self) -> list[float]:
        out, best = [], float("-inf")
        for t in self.trials:
            best = max(best, float(t["score_bits"]))
            out.append(best)
        return out

    def calls_to_best(self) -> int:
        target = float(self.best["score_bits"])
        for t in self.trials:
            if float(t["score_bits"]) >= target:
                return int(t["call"])
        return len(self.trials)

    def to_dict(self) -> dict[str, Any]:
        return {
            "schema_version": self.schema_version, "kind": "tune", "target": self.target,
            "best": self.best, "no_rebuild_best": self.no_rebuild_best,
            "needs_afl_rebuild": self.needs_afl_rebuild,
            "afl_map_size_pow2": int(self.best_config["map_slots"]).bit_length() - 1,
            "calls": self.calls, "seed": self.seed, "backend": self.backend, "measured": self.measured,
            "cache_hits": self.cache_hits, "elapsed_s": round(self.elapsed_s, 3),
            "calls_to_best": self.calls_to_best(), "convergence": [round(v, 6) for v in self.convergence()],
            "settings": self.settings, "space": self.space, "inputs": self.inputs, "trials": self.trials,
            "curves": self.curves, "host": self.host, "confirmation": self.confirmation,
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "TuneResult":
        return cls(target=d["target"], inputs=d["inputs"], space=d["space"], settings=d["settings"],
                   backend=d["backend"], calls=d["calls"], seed=d["seed"], trials=d["trials"], best=d["best"],
                   no_rebuild_best=d.get("no_rebuild_best"), measured=d["measured"], cache_hits=d["cache_hits"],
                   elapsed_s=d["elapsed_s"], host=d.get("host"), curves=d.get("curves", {}),
                   confirmation=d.get("confirmation"),
                   schema_version=d["schema_version"])
