"""The last stage: check a tuned configuration against the real AFL++ and in CI.

- :mod:`validate` (``autotune validate``): builds the target with afl-cc and `autotune cc`, replays
  the probe's corpus with afl-showmap and fuzzes with afl-fuzz, predicted vs measured side by side;
- :mod:`preflight` (``autotune preflight``): a short re-probe and the checks of :mod:`checks`,
  findings ok / warning / error, exit 0 fits, 1 could not run, 2 does not fit;
- :mod:`tuned` reads the tuned directory, :mod:`envfile` its env files, :mod:`afl` runs AFL++,
  :mod:`target` builds the target (with a build record), :mod:`predict` the predicted occupancy.
"""
