"""The names of the files autotune writes for the fuzzer and the stages' evidence, defined once:
emit writes them, the recommendation lists them, preflight, validate and compare read them. Nothing
of the package is imported here."""

from __future__ import annotations

AFL_BUILD_ENV = "afl-build.env"  # afl-cc's variables (AFL++'s own build)
AFL_RUN_ENV = "afl-run.env"  # afl-fuzz's variables
AFL_BUILD_REBUILT_ENV = "afl-build-rebuilt.env"  # afl-cc of an AFL++ rebuilt with a larger MAP_SIZE_POW2
AUTOTUNE_BUILD_ENV = "autotune-build.env"  # autotune cc's variables (the build kind)
AUTOTUNE_RUN_ENV = "autotune-run.env"  # our runtime's variables, for the stock afl-fuzz

TUNE_ENV_FILES = (AFL_BUILD_ENV, AFL_RUN_ENV, AUTOTUNE_RUN_ENV, AFL_BUILD_REBUILT_ENV)  # emit.write's
RACE_ENV_FILES = (AFL_BUILD_ENV, AFL_RUN_ENV, AUTOTUNE_BUILD_ENV, AUTOTUNE_RUN_ENV)  # the race's (emit.configuration)
ENV_FILES = (AUTOTUNE_BUILD_ENV, AUTOTUNE_RUN_ENV, AFL_BUILD_ENV, AFL_RUN_ENV, AFL_BUILD_REBUILT_ENV)  # every one, ours first

RECOMMENDATION_JSON = "recommendation.json"  # the one recommendation (autotune.recommendation), beside its evidence:
REPORT_JSON = "report.json"  # tune's (autotune.tune.result)
RACE_JSON = "race.json"  # the race's (autotune.race.document)
