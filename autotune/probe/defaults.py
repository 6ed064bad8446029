"""The probe's defaults, each written once (the CLI, the pipeline and the campaign import them).
Standard library only, so a command's option definitions can name them without loading the probe.

- ``DEFAULT_PROBE_TIME_S``: the probe campaign's length (``--probe-time``): on the demo and libyaml
  the havoc loop reached most of its keys within it, and a new user's `autotune run` stays short.
"""

from __future__ import annotations

DEFAULT_PROBE_TIME_S = 60.0
