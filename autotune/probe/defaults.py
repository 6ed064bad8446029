"""The probe's defaults, each written once (the CLI, the pipeline and the campaign import them).
Standard library only, so a command's option definitions can name them without loading the probe.

- ``DEFAULT_PROBE_TIME_S``: the probe campaign's length (``--probe-time``): on the demo and libyaml
  the havoc loop reached most of its keys within it, and a new user's `autotune run` stays short.
- ``DEFAULT_MAX_INPUT``, ``DEFAULT_CAPACITY``, ``DEFAULT_TIMEOUT_MS``: the probe server's largest
  input, census table size per metric and per-input time limit (autotune.probe.protocol's).
"""

from __future__ import annotations

DEFAULT_PROBE_TIME_S = 60.0
DEFAULT_MAX_INPUT = 1 << 20
DEFAULT_CAPACITY = 1 << 18
DEFAULT_TIMEOUT_MS = 1000
