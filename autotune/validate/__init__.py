"""`autotune validate`: a tuned directory under the real AFL++, predicted against measured.

- :mod:`validate` (``run_validate``): builds the target three ways (AFL++'s default, afl-clang-fast
  under afl-build.env, `autotune cc`; autotune.target), replays the probe's corpus and fuzzes each,
  and writes ``validate.json``;
- :mod:`afl_runs` the afl-showmap and time-boxed afl-fuzz runs of one variant;
- :mod:`predict` the map occupancy the probe's census predicts;
- :mod:`render` the side-by-side table.
"""

from autotune.validate.validate import ValidateResult, VariantResult, run_validate

__all__ = ["ValidateResult", "VariantResult", "run_validate"]
