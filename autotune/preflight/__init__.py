"""The CI check: does a tuned configuration still fit the target, its corpus and this host?

- :mod:`preflight` (``autotune preflight``): a short re-probe and the checks of :mod:`checks`,
  findings ok / warning / error, exit 0 fits, 1 could not run, 2 does not fit;
- :mod:`tuned` reads the tuned directory (also for autotune.validate), :mod:`envfile` its env
  files, :mod:`findings` the finding type, :mod:`render` the table.
"""
