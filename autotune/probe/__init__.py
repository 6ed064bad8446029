"""`autotune probe`: a short crash-proof campaign that takes an exact census of coverage keys.

- :mod:`client` talks to the harness's probe server (docs/RUNTIME.md "The probe protocol");
- :mod:`mutator` havoc mutations, :mod:`seeds` the bounded seed corpus;
- :mod:`campaign` the loop (``run_probe``), :mod:`census` the analysis (BigMap's collision rate:
  autotune.vocabulary), :mod:`estimators` the Chao estimate of the total keys;
- :mod:`result` the ``probe.json`` document and ``load_probe`` for later stages.
"""

__all__ = ["ProbeResult", "load_probe", "run_probe"]


def __getattr__(name):  # each pulls in numpy and the campaign machinery only when used (the CLI's
    # options name autotune.probe.defaults without loading them)
    if name in ("ProbeResult", "load_probe"):
        from autotune.probe import result

        return getattr(result, name)
    if name == "run_probe":
        from autotune.probe.campaign import run_probe

        return run_probe
    raise AttributeError(name)
