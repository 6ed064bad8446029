"""afl-fuzz trials and the yardstick every configuration is measured by (see docs/DESIGN.md, "Trials
and the yardstick"): :func:`run_trial` (one afl-fuzz), :func:`measure` (replay its kept inputs through the
yardstick), :func:`run_trials` (several side by side, one per core)."""

from autotune.afl_output import KeptInput, PlotData, kept_inputs, read_plot_data
from autotune.trials.runner import host_cores, interleaved, run_trial, run_trials
from autotune.trials.trial import TrialResult, TrialSpec, aflpp_versions, trial_env
from autotune.trials.coverage import (
    KIND_CENSUS,
    KIND_LLVMCOV,
    KIND_PCGUARD,
    Yardstick,
    YardstickCoverage,
    coverage_curve,
)
from autotune.trials.yardstick import choose_yardstick, measure, yardstick_for_binary

__all__ = ["KeptInput", "PlotData", "kept_inputs", "read_plot_data", "host_cores", "interleaved", "run_trials",
           "TrialResult", "TrialSpec", "aflpp_versions", "run_trial", "trial_env", "KIND_CENSUS", "KIND_LLVMCOV", "KIND_PCGUARD",
           "Yardstick", "YardstickCoverage", "choose_yardstick", "coverage_curve", "measure", "yardstick_for_binary"]
