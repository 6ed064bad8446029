"""`autotune compare`: configurations side by side under the real afl-fuzz, by one yardstick
(autotune.trials), with the statistics of Klees et al. (CCS 2018) (autotune.stats)."""

from autotune.compare.compare import CompareResult, ConfigOutcome, PairOutcome, run_compare
from autotune.compare.config import ConfigSpec, parse_config, parse_configs
from autotune.configuration import Configuration

__all__ = ["CompareResult", "ConfigOutcome", "PairOutcome", "run_compare", "Configuration", "ConfigSpec", "parse_config",
           "parse_configs"]
