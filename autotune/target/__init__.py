"""Building the target, for every stage (probe, run, validate, preflight, compare, race) and the tests.

- :mod:`recipe`: ``TargetSpec``, what to build (the demo, harness sources, or an OSS-Fuzz style
  build script), from the commands' options (``make_spec``);
- :mod:`build`: ``build(spec=, cc_kind=, build_vars=, env=)``, the recipe built by `autotune cc`,
  afl-clang-fast or plain clang, cached by a digest of everything that goes into it;
- :mod:`record`: the build record beside each binary (``<binary>.build.json``);
- :mod:`harness`: the probe's harness (a given binary or the recipe's `autotune cc` build), the
  demo's, and the in-process wrapper build of the tests' programs.
"""

from autotune.target.build import CC_KINDS, build
from autotune.target.harness import build_harness, demo_harness, probe_harness
from autotune.target.recipe import DEFAULT_CFLAGS, TargetSpec, demo_spec, make_spec
from autotune.target.record import build_vars_of, read_record, sha256_file

__all__ = ["CC_KINDS", "DEFAULT_CFLAGS", "TargetSpec", "build", "build_harness", "build_vars_of", "demo_harness",
           "demo_spec", "make_spec", "probe_harness", "read_record", "sha256_file"]
