"""emit: env files for afl-cc / afl-fuzz / our runtime, report.json, report.md, the plot and
recommendation.json (autotune.recommendation)."""
