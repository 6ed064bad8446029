"""The configurations a comparison runs, from ``--config`` arguments: ``[NAME=]SPEC``.

SPEC is one of
- ``default``: AFL++'s default build (afl-clang-fast, no AFL_LLVM_* variable: PCGUARD), no run
  variables: the baseline the project is judged against;
- ``runtime``: the `autotune cc` build with our runtime's defaults (no AUTOTUNE_* variable);
- an env file (autotune tune's, or the user's own), read by ``autotune.envfile``:
  * a file with an ``AUTOTUNE_*`` variable (``autotune-run.env``): the `autotune cc` build, the
    file's variables at run time; the build kind (``AUTOTUNE_CC_INSTRUMENT``) from the file itself
    or from the ``autotune-build.env`` beside it (the race writes one);
  * ``afl-build.env``: afl-clang-fast under the file's ``AFL_*`` variables, and at run time the
    variables of the ``afl-run.env`` beside it, when there is one;
  * ``BUILD.env+RUN.env``: afl-clang-fast under BUILD's ``AFL_*`` variables, RUN's at run time;
    when either file sets an ``AUTOTUNE_*`` variable (the race's ``autotune-build.env`` +
    ``autotune-run.env``), the `autotune cc` build under the ``AUTOTUNE_CC_*`` ones instead;
  * any other file: if it sets an ``AFL_LLVM_*`` variable, a build file as afl-build.env (alone);
    else a run file on AFL++'s default build (``afl-run.env``).
NAME labels the configuration (default: ``default``, ``runtime``, or ``<parent>/<stem>`` of the file).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Mapping

from autotune.cc import KIND_VAR
from autotune.configuration import CC_AFL, CC_AUTOTUNE, CC_VAR_PREFIX, Configuration
from autotune.envfile import read_env_file
from autotune.errors import AutotuneError
from autotune.filenames import AFL_BUILD_ENV, AFL_RUN_ENV, AUTOTUNE_BUILD_ENV
from autotune.target import build_vars_of

_NAME = re.compile(r"^[A-Za-z0-9_.-]+$")
# a configuration a comparison runs (autotune.configuration, the one configuration type), built from
# variable mappings
ConfigSpec = Configuration.of


def as_portfolio(name: str, members: list[Configuration]) -> Configuration:
    """A portfolio of ``members`` (the first the main) named ``name``."""
    if len(members) < 2:
        raise AutotuneError(f"portfolio {name!r} has {len(members)} instance", fix="give it two configurations or more")
    return Configuration.portfolio(name=name, members=members,
                                   description=f"portfolio of {len(members)} afl-fuzz instances (-M {members[0].name}, "
                                               "then -S " + ", ".join(m.name for m in members[1:])
                                               + "), one output directory")


# a secondary that moves: FIRST@SECONDSs>THEN (e.g. default@900s>B.env+R.env)
_MOVES = re.compile(r"^(?P<first>[^>]+)@(?P<at>\d+)s>(?P<then>.+)$")


def parse_portfolio(arg: str) -> Configuration:
    """``NAME=SPEC,SPEC[,...]`` (each SPEC as --config takes it, the first the main instance; a
    secondary's may be ``FIRST@SECONDSs>THEN``, one that moves from FIRST to THEN that far into the
    campaign)."""
    name, eq, rest = arg.partition("=")
    if not eq or not _NAME.match(name):
        raise AutotuneError(f"--portfolio {arg!r}: expected NAME=SPEC,SPEC[,...]",
                            fix="e.g. --portfolio diverse=race/autotune-run.env,ngram4.env")
    members = []
    for j, p in enumerate(q for q in rest.split(",") if q.strip()):
        moves = _MOVES.match(p.strip())
        if moves is None:
            if "@" in p and ">" in p:
                raise AutotuneError(f"--portfolio {arg!r}: {p!r} is not FIRST@SECONDSs>THEN",
                                    fix="e.g. default@900s>race/autotune-build.env+race/autotune-run.env")
            members.append(parse_config(p))
            continue
        if j == 0:
            raise AutotuneError(f"--portfolio {arg!r}: the main instance ({p}) cannot move",
                                fix="move a secondary: NAME=MAIN,FIRST@SECONDSs>THEN")
        members.append(parse_config(moves["first"]).moved(then=parse_config(moves["then"]), at_s=int(moves["at"])))
    return as_portfolio(name, members)


def with_instances(configs: list[Configuration], instances: int) -> list[Configuration]:
    """Every plain configuration as a portfolio of ``instances`` copies of itself (AFL++'s recipe: one
    main, the rest secondaries with its variations); ``instances`` 1 leaves them as they are."""
    if instances < 1:
        raise AutotuneError(f"--instances {instances}", fix="give --instances 1 or more")
    if instances == 1:
        return configs
    return [c if c.members else as_portfolio(c.name, [c] * instances) for c in configs]


def _label(path: Path) -> str:
    parent = path.resolve().parent.name
    return f"{parent}/{path.stem}" if parent else path.stem


def _existing(path: Path, arg: str) -> Path:
    if not path.is_file():
        raise AutotuneError(f"--config {arg}: {path} is not a file",
                            fix="give default, runtime, an env file, or BUILD.env+RUN.env")
    return path


def _split_cc(values: Mapping[str, str]) -> tuple[dict[str, str], dict[str, str]]:
    """autotune cc's compile-time variables (AUTOTUNE_CC_*, sorted by name) and the rest (in order)."""
    cc = {k: values[k] for k in sorted(values) if k.startswith(CC_VAR_PREFIX)}
    return cc, {k: v for k, v in values.items() if k not in cc}


def parse_config(arg: str) -> Configuration:
    name, eq, spec = arg.partition("=")
    if not eq or "/" in name or not _NAME.match(name):
        name, spec = "", arg
    spec = spec.strip()
    if not spec:
        raise AutotuneError(f"--config {arg!r} is empty", fix="give default, runtime, or an env file")
    if spec == "default":
        return Configuration.of(name=name or "default", cc_kind=CC_AFL,
                          description="AFL++ default: afl-clang-fast (PCGUARD), no variables")
    if spec == "runtime":
        return Configuration.of(name=name or "runtime", cc_kind=CC_AUTOTUNE,
                          description="autotune cc build, our runtime's defaults")
    if "+" in spec and not Path(spec).is_file():
        b, _, r = spec.partition("+")
        bpath, rpath = _existing(Path(b), arg), _existing(Path(r), arg)
        bvals, rvals = dict(read_env_file(bpath).values), dict(read_env_file(rpath).values)
        if any(k.startswith("AUTOTUNE_") for k in (*bvals, *rvals)):  # the race's pair: autotune cc
            afl = sorted(k for k in bvals if k.startswith("AFL_LLVM_"))
            if afl:
                raise AutotuneError(f"--config {arg}: {bpath.name} sets {afl[0]} (an afl-clang-fast build) "
                                    "and the pair sets AUTOTUNE_ variables (our runtime)",
                                    fix="give an afl-build.env with its afl-run.env, or an autotune-build.env "
                                        "with its autotune-run.env")
            cc_vars, run_vars = _split_cc(rvals)
            cc_vars = {**_split_cc(bvals)[0], **cc_vars}
            return Configuration.of(name=name or _label(rpath), cc_kind=CC_AUTOTUNE, build_vars=cc_vars,
                              run_vars=run_vars, files=(str(bpath), str(rpath)),
                              description=f"autotune cc build under {bpath.name}, stock afl-fuzz under {rpath.name}")
        return Configuration.of(name=name or _label(bpath), cc_kind=CC_AFL, build_vars=build_vars_of(bvals),
                          run_vars=rvals, files=(str(bpath), str(rpath)),
                          description=f"afl-clang-fast under {bpath.name}, afl-fuzz under {rpath.name}")
    path = _existing(Path(spec), arg)
    values = dict(read_env_file(path).values)
    if any(k.startswith("AUTOTUNE_") for k in values):
        files = (str(path),)
        # the wrapper's compile-time variables (the build kind, the ngram kind's N, selects)
        build_vars, values = _split_cc(values)
        beside = path.with_name(AUTOTUNE_BUILD_ENV)
        if not build_vars and beside.is_file() and beside != path:
            build_vars = _split_cc(read_env_file(beside).values)[0]
            files = (str(beside), str(path))
        kind = f" ({KIND_VAR}={build_vars[KIND_VAR]})" if KIND_VAR in build_vars else ""
        return Configuration.of(name=name or _label(path), cc_kind=CC_AUTOTUNE, build_vars=build_vars, run_vars=values,
                          files=files, description=f"autotune cc build{kind}, stock afl-fuzz under {path.name}")
    if path.name == AFL_BUILD_ENV or any(k.startswith("AFL_LLVM_") for k in values):
        run_path = path.with_name(AFL_RUN_ENV) if path.name == AFL_BUILD_ENV else None
        run_vars = dict(read_env_file(run_path).values) if run_path and run_path.is_file() else {}
        files = (str(path),) + ((str(run_path),) if run_vars or (run_path and run_path.is_file()) else ())
        return Configuration.of(name=name or _label(path), cc_kind=CC_AFL, build_vars=build_vars_of(values),
                          run_vars=run_vars, files=files,
                          description=f"afl-clang-fast under {path.name}"
                                      + (f", afl-fuzz under {run_path.name}" if len(files) > 1 else ""))
    return Configuration.of(name=name or _label(path), cc_kind=CC_AFL, run_vars=values, files=(str(path),),
                      description=f"AFL++ default build, afl-fuzz under {path.name}")


def parse_configs(args: list[str]) -> list[Configuration]:
    if not args:
        raise AutotuneError("no configuration to compare", fix="give --config default --config FILE.env ...")
    configs = [parse_config(a) for a in args]
    names = [c.name for c in configs]
    dup = sorted({n for n in names if names.count(n) > 1})
    if dup:
        raise AutotuneError(f"two configurations are named {dup[0]!r}",
                            fix=f"label them: --config NAME={dup[0]} ...")
    return configs
