"""emit: env files for afl-cc / afl-fuzz / our runtime, report.json, report.md and the plot."""
