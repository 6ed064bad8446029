"""tune's defaults, each written once (the CLI, the pipeline, the race and preflight import them).

Standard library only, so a command's option definitions can name them without loading tune.
Why each value (autotune.tune.objective's docstring has the objective they parametrise):

- ``DEFAULT_MAX_COLLISION_RATE`` (c_max = 0.02): BigMap's Table II (Ahmed et al., DSN 2021)
  puts the small FuzzBench targets (zlib 0.55 % .. libjpeg 2.2 %) at about 2 % at AFL's 64 KiB
  map: tune asks every metric for at least the precision AFL's default gives a small target.
- ``DEFAULT_SENSITIVITY_WEIGHT`` (w_s = 0.25): a 16x richer metric is worth halving the
  throughput (our judgement; the papers give no exchange rate).
- ``DEFAULT_PENALTY_BITS`` (P = 10): the bounded penalty above c_max.
- ``DEFAULT_CALLS``: optimiser calls; ``DEFAULT_CONFIRM`` / ``DEFAULT_CONFIRM_REPEATS``: the
  confirmation round's leaders and repeats (autotune.tune.confirm).
- ``DEFAULT_MAP_POW2``: the map sizes tune searches, 2^13..2^27 slots (8 KiB .. 128 MiB of
  8-bit counters), inside what the runtime accepts (autotune.vocabulary.HASH_SLOTS_POW2).
- ``DEFAULT_MAX_COUNTER_OVERFLOW``: the share of keys whose counter may wrap in one execution, the
  limit the race's search and preflight hold a configuration to (tune has no such limit: it weighs
  overflow in its objective). Sarafov et al. (FUZZING 2024, Sec. 4) found 15-50 % of 8-bit slots
  overflowing on OSS-Fuzz corpora; 5 % keeps well clear of that.
"""

from __future__ import annotations

DEFAULT_MAX_COLLISION_RATE = 0.02
DEFAULT_SENSITIVITY_WEIGHT = 0.25
DEFAULT_PENALTY_BITS = 10.0
DEFAULT_CALLS = 40
DEFAULT_CONFIRM = 5
DEFAULT_CONFIRM_REPEATS = 3
MIN_MAP_POW2, MAX_MAP_POW2 = 13, 27
DEFAULT_MAP_POW2: tuple[int, int] = (MIN_MAP_POW2, MAX_MAP_POW2)
DEFAULT_MAX_COUNTER_OVERFLOW = 0.05
