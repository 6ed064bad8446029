"""The llvm-cov yardstick (``llvm-cov-branches``): the target's clang source-based coverage build
(:mod:`build`, with the replay main ``replay_main.c``), its LLVM tools (:mod:`tools`), inputs
replayed in batches that survive crashes and hangs (:mod:`replay`), profiles merged and read by
llvm-cov (:mod:`profiles`), and one trial's coverage over time (:mod:`measure`)."""

from autotune.trials.llvmcov.build import build_coverage
from autotune.trials.llvmcov.measure import measure_llvmcov
from autotune.trials.llvmcov.profiles import CoverageTotals, export_totals, merge_profiles
from autotune.trials.llvmcov.replay import ReplayResult, replay_batches
from autotune.trials.llvmcov.tools import LlvmTools, find_llvm_tools

__all__ = ["build_coverage", "measure_llvmcov", "CoverageTotals", "export_totals", "merge_profiles", "ReplayResult",
           "replay_batches", "LlvmTools", "find_llvm_tools"]
