"""The bugs yardstick of `autotune compare --yardstick bugs` (and the race): what a campaign judged by
bugs needs beside the edge yardstick.

- the trials run with fatal canaries (``AUTOTUNE_CANARY_FATAL=1`` in the target's environment): a
  trigger aborts, afl-fuzz saves the input as a crash with its ``time:``, and nothing after the
  first trigger of a run is lost (issue 38: non-fatal canaries count once per process in a
  persistent loop);
- edges are still measured by the pcguard yardstick (AFL++'s default build, or our census build
  without afl-clang-fast), and that same binary, built from the target's sources with their
  canaries, is the replay build that attributes every kept input to its bugs;
- a target without canaries is refused before any afl-fuzz runs; so is a seed that triggers a bug
  (afl-fuzz 4.04c stops on a crashing seed in its dry run).
"""

from __future__ import annotations

from pathlib import Path
from typing import Mapping, Sequence

from autotune.bugs.page import FATAL_VAR, has_canaries, replay
from autotune.errors import AutotuneError
from autotune.paths import kernels_dir

CHOICE = "bugs"  # autotune compare --yardstick bugs
EDGE_CHOICE = "pcguard"  # the edge yardstick measured beside the bugs
CAMPAIGN_ENV = {FATAL_VAR: "1"}  # a trigger aborts: afl-fuzz keeps it as a crash, with its time
PLOT_NAME = "bugs.png"


def require_canaries(binary: str | Path) -> None:
    """AutotuneError naming the fix when ``binary`` has no AUTOTUNE_BUG site compiled in."""
    if not has_canaries(binary):
        raise AutotuneError(
            f"the target has no known-bug canaries compiled in ({binary} carries no AUTOTUNE_BUG site), so "
            "--yardstick bugs has nothing to measure",
            fix=f"put AUTOTUNE_BUG(NAME, condition) at each bug's site (#include \"canary.h\", compiled with "
                f"-I{kernels_dir()}), or measure by edges: --yardstick pcguard")


def check_seeds(binary: str | Path, seeds: Sequence[Path], *, env: Mapping[str, str] | None = None) -> None:
    """AutotuneError when a seed triggers a bug: with fatal canaries afl-fuzz would stop on it."""
    bad = [(r.path.name, sorted(r.triggered)) for r in replay(binary, list(seeds), env=env) if r.triggered]
    if bad:
        listing = ", ".join(f"{name} ({', '.join(b)})" for name, b in bad[:5])
        raise AutotuneError(f"{len(bad)} seeds trigger a known bug: {listing}; with fatal canaries afl-fuzz 4.04c "
                            "stops on a crashing seed before it fuzzes",
                            fix="take those seeds out of the corpus (a bug the seeds trigger is found at time 0 "
                                "by every configuration and separates none)")


def with_campaign_env(env: Mapping[str, str]) -> dict[str, str]:
    """A configuration's run variables with the campaign's fatal canaries."""
    return {**env, **CAMPAIGN_ENV}
