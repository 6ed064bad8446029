"""The compiler wrapper: `autotune cc` / `autotune c++` (console scripts autotune-cc, autotune-c++).

Use it as ``CC``/``CXX`` of a real build system. Every invocation runs the real compiler with
the user's arguments unchanged, plus:

- always: the coverage instrumentation of the build kind ``AUTOTUNE_CC_INSTRUMENT``, as the
  registry autotune.buildkinds gives it (its flags, and its own pass plugin, ``KIND_PLUGINS``; the
  table: docs/BUILD_KINDS.md). ``full`` (default, ``INSTRUMENT_FLAGS``): SanitizerCoverage guards
  for the block ids, function entry/exit hooks for call context, and ``-g`` (every metric, the
  census); the cheaper kinds serve fewer metrics: ``blocks`` (no hooks), ``guard`` (clang's inline
  8-bit counters, made NeverZero by ``kernels/plugin/autotune_counters.cpp`` as AFL++'s PCGUARD
  counts), ``edge`` and ``ngram`` (our pass ``kernels/plugin/autotune_edges.cpp``, counting
  inline as AFL++'s CLASSIC and NGRAM-N: see below);
- when the invocation links a program: the runtime archive (whole, so its constructors are
  kept), ``LINK_LIBS`` and the build kind for the runtime (``kind_marker``); and, unless the user
  asked for a sanitizer, ``NO_SANITIZER_RT``;
- when ``-fsanitize=fuzzer`` is given: it is removed and, when linking, the driver object
  (``main()`` for an ``LLVMFuzzerTestOneInput`` harness) is linked, as libFuzzer's flag does.
  ``-fsanitize=fuzzer-no-link`` is removed too: the wrapper instruments every compile anyway.

The edge kind's pass instruments the blocks AFL++'s CLASSIC instruments (every block of a one-block
function; elsewhere each block with a predecessor that has more than one successor), after the
select plugin split the selects: ``idx = (cur ^ prev) & mask; map[idx]++`` (8-bit, NeverZero, as
CLASSIC in AFL++ 4.04c), ``prev = cur >> 1``. ``cur`` is the block's compile-time id, the low 32
bits of ``mix64(FNV-1a-64(source file name, NUL, function name) ^ seed ^ index * 0x9e3779b97f4a7c15)``
(seed ``0x6175746f74756e65``, "autotune"; index: the block's position in its function), so the
same sources built by the same commands get the same ids. ``prev`` is a thread-local the runtime
zeroes at each execution; ``map`` and ``mask`` are globals it points at afl-fuzz's map (mask = map
size - 1). The runtime refuses another metric, layout, width, overflow policy, key hash or seed
for such a build (kernels/cov_config.c ``edge_config_check``).

The ngram kind (``AUTOTUNE_CC_INSTRUMENT=ngram AUTOTUNE_CC_NGRAM=N``, N from 2 to 8, required) is the
same pass on the same blocks with the same ids, map and counters, keyed by the last N instrumented
blocks: ``idx = (cur ^ (p1 >> 1) ^ ... ^ (p(N-1) >> 1)) & mask`` with p1 the previous block's id. That
is AFL++'s NGRAM-N key (``AFL_LLVM_INSTRUMENT=NGRAM-N``: the current id xor the xor of the previous
N-1 ids shifted right by one) and our runtime's ngram-N under ``AUTOTUNE_KEY_HASH=afl``, not the
runtime's default exact key (a rolling polynomial of 64-bit mixes: a 64-bit multiply and a table
read per block, what the inline kind exists to avoid); it is the key whose cost issue 13 compares
against NGRAM-N's. The pass keeps the xor of the window beside the window (``autotune_ngram_hist``),
so a block updates it with the one id that leaves instead of xor-reducing the window. AFL++ allows
N up to 16 and so does the pass; the runtime names the metrics ngram-2 .. ngram-8, so the wrapper
takes 2 .. 8. The runtime serves such a build only ``AUTOTUNE_METRIC=ngram-N`` of its N (the
default when unset) and refuses the rest as for the edge kind.

The ctx kind (``AUTOTUNE_CC_INSTRUMENT=ctx AUTOTUNE_CC_CTX=ctx|caller|ctx-2|ctx-4|ctx-8``, required) is
the same pass on the same blocks, keyed by the edge and its function's call context:
``idx = (cur ^ prev ^ X) & mask``, X the xor of the function ids of its K nearest instrumented callers
(all of them for ctx, one for caller), read once when the function is entered; each function with
calls hands its callees their state before each call and stores its own back before it returns. That
is AFL++'s CTX, CALLER and CTX-K key and our runtime's ctx-like key under ``AUTOTUNE_KEY_HASH=afl``,
without a runtime call per block or per call (the full kind's function hooks). The runtime serves such a
build only the metric it was built for and refuses the rest as for the edge kind.

``AUTOTUNE_CC_INDEX=1`` (any inline kind) makes the pass count each key through the runtime's
two-level map instead of a flat map: the key's entry in the index (``key & (H - 1)``, H from
``AUTOTUNE_INDEX_SIZE`` at run time) holds its dense slot + 1, a key not seen yet calls the runtime once
to get the next slot, and afl-fuzz scans only the dense counters (``AUTOTUNE_MAP_SIZE``): collisions
only in the index, which may be large, at a flat map's per-block cost plus one load. Such a build runs
``AUTOTUNE_LAYOUT=twolevel`` only.

Compile-only invocations (``-c``, ``-S``, ``-E``, ``-M``, ``-MM``, ``-fsyntax-only``), invocations
without inputs (``--version``, ``-print-*``) and shared/relocatable links (``-shared``, ``-r``)
get no runtime: a shared library's guards resolve against the program that loads it.

The compiler is clang/clang++ (or a versioned clang-N); ``AUTOTUNE_CC``/``AUTOTUNE_CXX`` override
it with another clang (gcc is refused: see ``INSTRUMENT_FLAGS``). This module is imported by
every configure probe: it imports nothing heavy (no typer/rich).
"""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING, Literal, Mapping, NamedTuple, Sequence

from autotune.buildkinds import BUILD_KINDS, DEFAULT_KIND, INDEX_VAR, KIND_VAR
from autotune.buildkinds import KINDS as KINDS_BY_NAME
from autotune.errors import AutotuneError
from autotune.llvm import ENTER_FIRST, Toolchain, clang_major, find_toolchain, hook_order
from autotune.vocabulary import METRIC_SPECS

if TYPE_CHECKING:  # configure calls the wrapper hundreds of times: import only what a run needs
    from pathlib import Path

Mode = Literal["link", "compile", "preprocess", "info"]

# Guards give the block ids; entry/exit hooks after inlining give the call stack as AFL++'s CTX
# sees it (its pass runs on the optimised IR, so inlined calls are not contexts). kernels/cov.h
# implements both. gcc has no trace-pc-guard (only trace-pc, keyed by return address, which
# the runtime does not implement), so the wrapper needs clang.
# Build kinds (AUTOTUNE_CC_INSTRUMENT): what each instruments, its pass plugin and which metrics its
# runtime serves are autotune.buildkinds's registry (kernels/cov.h cov_metric_check refuses the
# others with the fix). Compile and link with one kind. The names below are views of it.
KINDS: dict[str, tuple[str, ...]] = {k.name: k.flags for k in BUILD_KINDS}
INSTRUMENT_FLAGS: tuple[str, ...] = KINDS[DEFAULT_KIND]
# The inline kinds (our own pass counts into a flat map: artifacts.pass_plugin), not SanitizerCoverage.
INLINE_KINDS: tuple[str, ...] = tuple(k.name for k in BUILD_KINDS if k.inline)
# The kinds with a pass plugin of their own (its kernels/ source), loaded for every compile of the kind,
# after the select plugin: the inline kinds' instrumentation; the guard kind's NeverZero rewrite of
# clang's inline 8-bit counters (255 + 1 = 1, as AFL++'s PCGUARD counts: clang's wrap to 0, so a block
# hit 256 times would read as not hit).
KIND_PLUGINS: dict[str, str] = {k.name: k.plugin for k in BUILD_KINDS if k.plugin}


def build_kind(env: Mapping[str, str]) -> str:
    """The build kind AUTOTUNE_CC_INSTRUMENT names (default full); AutotuneError for another value."""
    kind = env.get(KIND_VAR, "") or DEFAULT_KIND
    if kind not in KINDS:
        raise AutotuneError(f"{KIND_VAR}={kind} is not a build kind",
                            fix=f"set {KIND_VAR} to one of {', '.join(KINDS)} (or unset it: {DEFAULT_KIND})")
    return kind


def kind_param(env: Mapping[str, str], kind: str) -> str | None:
    """The value of the kind's compile-time parameter (the ngram kind's N, ``AUTOTUNE_CC_NGRAM``; the ctx
    kind's metric, ``AUTOTUNE_CC_CTX``), None for a kind without one; AutotuneError when it is missing or
    not one of its values, or when another kind's parameter is given (it would not apply)."""
    for other in BUILD_KINDS:
        p = other.param
        if p is not None and p is not KINDS_BY_NAME[kind].param and env.get(p.var, ""):
            owners = " or ".join(k.name for k in BUILD_KINDS if k.param is p)
            raise AutotuneError(f"{p.var}={env[p.var]} applies to {KIND_VAR}={owners} only, not {kind}",
                                fix=f"unset {p.var}, or set {KIND_VAR}={owners}")
    p = KINDS_BY_NAME[kind].param
    if p is None:
        return None
    value = env.get(p.var, "")
    if p.metric(value) is None:
        got = f"{p.var}={value}" if value else f"{p.var} is not set"
        raise AutotuneError(f"{KIND_VAR}={kind} needs {p.needs}: {got}",
                            fix=f"set {p.var} to {p.choice}, e.g. {p.var}={p.example} as AFL++'s "
                                f"{METRIC_SPECS[p.metric(p.example)].afl_instrument}")
    return value


def kind_marker(kind: str) -> str:
    """The link flag that tells the runtime its build kind (kernels/cov_ids.c cov_build_kind)."""
    return f"-Wl,--defsym=autotune_instrument_kind=autotune_kind_{kind}"


def kind_link_flags(kind: str) -> tuple[str, ...]:
    """What a program link of ``kind`` takes besides the runtime: its linker script, if it has one (the
    guard kind's counters on pages of their own, kernels/guard_counters.ld), then its marker."""
    script = KINDS_BY_NAME[kind].link_script
    if script is None:
        return (kind_marker(kind),)
    from autotune.paths import kernels_dir  # start-up: see TYPE_CHECKING above

    return (f"-Wl,-T,{kernels_dir() / script}", kind_marker(kind))


# The link flag that tells the runtime the compiler put a function's entry hook before its entry
# block's guard (autotune.llvm.hook_order; kernels/cov_thread.c); the guard-first order needs none.
ENTER_FIRST_MARKER = "-Wl,--defsym=autotune_hook_order=autotune_order_enter_first"
HOOKED_KINDS = frozenset(k.name for k in BUILD_KINDS if k.hooked)
LINK_LIBS: tuple[str, ...] = ("-lpthread", "-ldl")
# clang links UBSan's standalone runtime (whole, with its signal handlers and its weak
# __sanitizer_cov_* stubs) into any program linked with -fsanitize-coverage and no sanitizer.
# Our runtime is the coverage runtime: links without a sanitizer of the user's skip it.
NO_SANITIZER_RT = "-fno-sanitize-link-runtime"

# Options whose value is the next argument (so that value is not an input file).
_TAKES_VALUE = frozenset({
    "-o", "-I", "-D", "-U", "-L", "-l", "-x", "-MF", "-MT", "-MQ", "-MJ", "-include", "-imacros",
    "-isystem", "-iquote", "-idirafter", "-iprefix", "-iwithprefix", "-iwithprefixbefore",
    "-isysroot", "-iframework", "-isystem-after", "-ivfsoverlay", "-Xlinker", "-Xclang",
    "-Xassembler", "-Xpreprocessor", "-Xanalyzer", "-mllvm", "-target", "-arch", "-T", "-u", "-z",
    "-e", "-B", "-F", "-G", "-aux-info", "--param", "-resource-dir", "-working-directory",
    "-serialize-diagnostics", "-dylib_file", "-install_name", "--sysroot",
})
_COMPILE_ONLY = frozenset({"-c", "-S", "-fsyntax-only"})
_PREPROCESS_ONLY = frozenset({"-E", "-M", "-MM"})
_NO_RUNTIME = frozenset({"-shared", "-r", "-nostdlib"})
# Invocations that print something and exit without linking, even with inputs.
_INFO = frozenset({"--version", "--help", "-dumpversion", "-dumpfullversion", "-dumpmachine"})
_INFO_PREFIX = ("-print-", "--print-")


class Invocation(NamedTuple):
    """What a compiler command line does, as far as the wrapper cares."""

    args: tuple[str, ...]  # the user's arguments without the fuzzer sanitizer entries
    mode: Mode
    fuzzer: bool  # -fsanitize=fuzzer (link the driver)
    no_runtime: bool  # -shared / -r / -nostdlib: a link that must not get the runtime
    has_lang: bool  # -x was given (so appended files need -x none)
    sanitizers: bool  # the user asked for a sanitizer (other than fuzzer): keep clang's runtimes


def _strip_fuzzer(arg: str) -> tuple[str | None, bool | None]:
    """Remove fuzzer/fuzzer-no-link from a -f[no-]sanitize= list: (remaining arg or None, fuzzer)."""
    prefix, _, values = arg.partition("=")
    parts = values.split(",")
    kept = [p for p in parts if p not in ("fuzzer", "fuzzer-no-link")]
    fuzzer: bool | None = None
    if "fuzzer" in parts:
        fuzzer = prefix == "-fsanitize"
    rest = f"{prefix}={','.join(kept)}" if kept else None
    return rest, fuzzer


def _expand_response_files(args: Sequence[str], depth: int = 0) -> list[str]:
    """Replace each readable ``@file`` by its arguments (as clang reads them), so that flags in it
    are seen (and ``-fsanitize=fuzzer`` in it removed). A missing file stays for clang to report."""
    if depth > 8 or not any(a.startswith("@") for a in args):
        return list(args)
    import shlex

    out: list[str] = []
    for a in args:
        if a.startswith("@") and os.path.isfile(a[1:]):
            with open(a[1:], encoding="utf-8", errors="surrogateescape") as fh:
                out.extend(_expand_response_files(shlex.split(fh.read()), depth + 1))
        else:
            out.append(a)
    return out


def parse_args(args: Sequence[str]) -> Invocation:
    """Classify a compiler command line (without argv[0])."""
    args = _expand_response_files(args)
    kept: list[str] = []
    fuzzer = False
    inputs = 0
    compile_only = preprocess_only = no_runtime = has_lang = info = sanitizers = False
    i = 0
    while i < len(args):
        a = args[i]
        if a.startswith(("-fsanitize=", "-fno-sanitize=")):
            rest, fz = _strip_fuzzer(a)
            if fz is not None:
                fuzzer = fz
            if rest is not None:
                kept.append(rest)
                sanitizers = sanitizers or rest.startswith("-fsanitize=")
            i += 1
            continue
        kept.append(a)
        if a in _TAKES_VALUE and i + 1 < len(args):
            if a == "-x":
                has_lang = True
            kept.append(args[i + 1])
            i += 2
            continue
        if a.startswith("-x") and len(a) > 2:
            has_lang = True
        elif a in _COMPILE_ONLY:
            compile_only = True
        elif a in _PREPROCESS_ONLY:
            preprocess_only = True
        elif a in _NO_RUNTIME:
            no_runtime = True
        elif a in _INFO or a.startswith(_INFO_PREFIX):
            info = True
        elif a == "-" or not a.startswith(("-", "@")):
            inputs += 1  # a source, object, archive or linker script
        i += 1
    if preprocess_only:
        mode: Mode = "preprocess"
    elif compile_only:
        mode = "compile"
    elif inputs == 0 or info:
        mode = "info"
    else:
        mode = "link"
    return Invocation(args=tuple(kept), mode=mode, fuzzer=fuzzer, no_runtime=no_runtime, has_lang=has_lang,
                      sanitizers=sanitizers)


def rewrite(inv: Invocation, *, toolchain: Toolchain, runtime: Path | None, driver: Path | None,
            kind: str = DEFAULT_KIND, plugin: Path | None = None, kind_plugin: Path | None = None,
            enter_first: bool = False, early: bool = False) -> list[str]:
    """The full argv of the real compiler for a parsed invocation.

    ``runtime`` and ``driver`` are the artefacts to link (see :func:`link_needs`); ``kind`` the
    build kind (``KINDS``); ``plugin`` the select-splitting pass plugin (see :func:`plugin_needed`);
    ``kind_plugin`` the build kind's own pass plugin (``KIND_PLUGINS``), loaded after it (the edge
    kind's pass then runs after the select splitting: both run at the end of the optimisation
    pipeline, in load order; the guard kind's runs right after clang's SanitizerCoverage).
    ``enter_first``: the compiler puts entry hooks before entry guards (``ENTER_FIRST_MARKER``).
    ``early``: the select plugin runs SanitizerCoverage at OptimizerEarly (:func:`plugin_stage`), so
    clang's own pass gets the allowlist that matches nothing.
    """
    argv = [toolchain.path, *KINDS[kind]]
    if early:
        from autotune.paths import kernels_dir  # start-up: see TYPE_CHECKING above

        argv.append(f"-fsanitize-coverage-allowlist={kernels_dir() / SANCOV_NONE}")
    if inv.mode != "info":
        argv += FUZZING_DEFINES
    if inv.mode in ("compile", "link"):
        argv += FUZZING_CODEGEN
    if plugin is not None:
        argv.append(f"-fpass-plugin={plugin}")
    if kind_plugin is not None:
        argv.append(f"-fpass-plugin={kind_plugin}")
    if inv.mode == "link" and not inv.sanitizers:
        argv.append(NO_SANITIZER_RT)
    if driver is not None:
        argv.append(str(driver))  # before any -x, so it is taken as an object file
    argv.extend(inv.args)
    if runtime is not None:
        if inv.has_lang:
            argv += ["-x", "none"]
        argv += ["-Wl,--whole-archive", str(runtime), "-Wl,--no-whole-archive", *LINK_LIBS, *kind_link_flags(kind)]
        if enter_first:
            argv.append(ENTER_FIRST_MARKER)
    return argv


def link_needs(inv: Invocation) -> tuple[bool, bool]:
    """(link the runtime?, link the driver?) for a parsed invocation."""
    runtime = inv.mode == "link" and not inv.no_runtime
    return runtime, runtime and inv.fuzzer


# What AFL++'s afl-clang-fast adds to every compile besides its instrumentation, so a target built by
# autotune cc is the same program as AFL++'s default build of it: the macro by which code skips
# checks a fuzzer cannot pass (lz4 skips its frame magic and header checksums under it; OSS-Fuzz
# and honggfuzz set it too), and loop unrolling (hit counts per block as in AFL++'s build). The
# user's own flags come later and win (-U..., -fno-unroll-loops).
FUZZING_DEFINES: tuple[str, ...] = ("-DFUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION=1",)
FUZZING_CODEGEN: tuple[str, ...] = ("-funroll-loops",)

SELECTS_VAR = "AUTOTUNE_CC_SELECTS"


def check_index(env: Mapping[str, str], kind: str) -> bool:
    """Whether ``AUTOTUNE_CC_INDEX=1`` asks the inline kind ``kind`` to count through the two-level
    map's index; AutotuneError for another value, or for a kind that does not count inline."""
    value = env.get(INDEX_VAR, "") or "0"
    if value not in ("0", "1"):
        raise AutotuneError(f"{INDEX_VAR}={value} is not 0 or 1",
                            fix=f"set {INDEX_VAR}=1 (count through a two-level map's index) or 0 (a flat map)")
    if value == "1" and not KINDS_BY_NAME[kind].inline:
        raise AutotuneError(f"{INDEX_VAR}=1 applies to the inline kinds ({KIND_VAR}={' or '.join(INLINE_KINDS)}), "
                            f"not {kind}", fix=f"unset {INDEX_VAR}, or set {KIND_VAR} to an inline kind")
    return value == "1"


# From this LLVM on, AFL++'s PCGUARD pass runs at the OptimizerEarly extension point (before it, at
# OptimizerLast, where clang runs SanitizerCoverage), and so does its CLASSIC/NGRAM pass; the select
# plugin then runs SanitizerCoverage there for the kinds that count its points
# (kernels/plugin/autotune_selects.cpp), and clang's own pass gets an allowlist that matches nothing
# (SANCOV_NONE).
EARLY_SANCOV_LLVM = 16
SANCOV_NONE = "plugin/sancov_none.txt"

# Where the select plugin runs (plugin_stage), told to it in the compiler's environment.
PLUGIN_STAGE_VAR = "AUTOTUNE_CC_PLUGIN_STAGE"
STAGE_SANCOV_EARLY = "sancov-early"  # the kind's SanitizerCoverage, then selects counted, at OptimizerEarly
STAGE_EARLY = "early"  # split selects at OptimizerEarly (where the inline kinds' pass counts)
STAGE_LAST = "last"  # split selects at OptimizerLast, before clang's SanitizerCoverage


def counts_sancov(kind: str) -> bool:
    """Whether ``kind`` counts SanitizerCoverage's points (full, blocks: trace-pc-guard; guard: inline
    8-bit counters)."""
    return any(f.startswith("-fsanitize-coverage=") for f in KINDS[kind])


# clang's spellings of a SanitizerCoverage allowlist / ignorelist (blocklist, whitelist and
# blacklist are its older names, still accepted)
SANCOV_LIST_FLAGS: tuple[str, ...] = tuple(f"-fsanitize-coverage-{n}" for n in (
    "allowlist", "ignorelist", "blocklist", "whitelist", "blacklist"))


def user_sancov_lists(inv: Invocation) -> bool:
    """The user gave SanitizerCoverage an allowlist or ignorelist: only clang's own pass reads them, so
    such a compile keeps SanitizerCoverage at OptimizerLast (the select plugin's would ignore them)."""
    return any(a.startswith(SANCOV_LIST_FLAGS) for a in inv.args)


def plugin_stage(inv: Invocation, kind: str, major: int | None) -> str:
    """Where the select plugin runs for a compile of ``kind`` by clang ``major`` (the one decision;
    the plugin reads it from ``AUTOTUNE_CC_PLUGIN_STAGE``): from LLVM 16 on, SanitizerCoverage at
    PCGUARD's stage for the kinds that count its points, unless the compile gives its own
    allow/ignorelist (STAGE_LAST: clang's pass, which reads it); the inline kinds' selects where
    their pass counts (STAGE_EARLY); up to LLVM 15 always STAGE_LAST."""
    if major is None or major < EARLY_SANCOV_LLVM:
        return STAGE_LAST
    if not counts_sancov(kind):
        return STAGE_EARLY
    return STAGE_LAST if user_sancov_lists(inv) else STAGE_SANCOV_EARLY


def plugin_needed(inv: Invocation, env: Mapping[str, str], kind: str = DEFAULT_KIND, *, early: bool = False) -> bool:
    """Whether the invocation loads the select-splitting pass plugin: every compile, unless
    ``AUTOTUNE_CC_SELECTS=0``; for the edge kind only when ``AUTOTUNE_CC_SELECTS=1``; with ``early``
    (:func:`plugin_stage` is STAGE_SANCOV_EARLY) every compile, since the plugin then runs
    SanitizerCoverage too (and counts selects and comparisons kept as values only as
    ``AUTOTUNE_CC_SELECTS`` says: there it counts them as AFL++ 5.02c's PCGUARD does, two counters
    chosen by a select of their addresses, without splitting them: kernels/plugin/autotune_selects.cpp).

    AFL++'s PCGUARD (its default) counts both sides of every scalar select; SanitizerCoverage
    counts blocks only (lz4: 5,765 guards against PCGUARD's 7,050; 7,004 with the plugin's 644
    selects split), and a campaign without that feedback kept 28 % fewer inputs there. The guard,
    blocks and full kinds get it, so the probe's census (a full build) and a guard build count the
    same points. ``AUTOTUNE_CC_SELECTS=0`` leaves selects alone (like-for-like with AFL++'s
    CLASSIC/NGRAM modes, which do not count them). The edge kind is CLASSIC's coverage at CLASSIC's
    cost, and CLASSIC does not count selects: a split select costs a branch and two counted blocks
    where CLASSIC's code has a conditional move (the demo's crc8 loop, 8 selects a byte: 1.39x
    CLASSIC's instructions per execution with them split, 0.985x without), so it splits them only
    when asked. So does the ngram kind (NGRAM-N does not count selects either)."""
    default = "1" if KINDS_BY_NAME[kind].splits_selects else "0"
    value = env.get(SELECTS_VAR, default) or default
    if value not in ("0", "1"):
        raise AutotuneError(f"{SELECTS_VAR}={value} is not 0 or 1",
                            fix=f"set {SELECTS_VAR}=1 (count both sides of selects; the default except for "
                                f"{KIND_VAR}={' or '.join(INLINE_KINDS)}) or 0")
    return (value == "1" or early) and inv.mode in ("compile", "link")


class Command(NamedTuple):
    """What a wrapper invocation runs: the real compiler's argv and its environment (the pass plugins
    read the build kind, its parameter and PLUGIN_STAGE_VAR from it)."""

    argv: list[str]
    env: dict[str, str]


def plan(args: Sequence[str], *, cxx: bool, env: Mapping[str, str]) -> Command:
    """The real compiler's argv and environment for a wrapper invocation (``env``: the wrapper's);
    builds the runtime artefacts if needed."""
    kind = build_kind(env)
    kind_param(env, kind)  # checked here: the pass reads it (and INDEX_VAR) from the compiler's environment
    check_index(env, kind)
    toolchain = find_toolchain(cxx=cxx, env=env)
    inv = parse_args(args)
    need_rt, need_driver = link_needs(inv)
    runtime = driver = None
    if need_rt:
        from autotune.runtime import artifacts  # only links pay for it and the cache lookup

        runtime = artifacts.runtime_archive()
        driver = artifacts.driver_object() if need_driver else None
    plugin = kind_plugin = None
    stage = STAGE_LAST
    out_env = {k: v for k, v in env.items() if k != PLUGIN_STAGE_VAR}
    if inv.mode in ("compile", "link"):
        from autotune.runtime import artifacts  # start-up: see TYPE_CHECKING above

        splits = plugin_needed(inv, env, kind)
        if splits or counts_sancov(kind):  # else no plugin: the compile needs no clang --version
            stage = plugin_stage(inv, kind, clang_major(toolchain.path))
            if splits or stage == STAGE_SANCOV_EARLY:
                plugin = artifacts.select_plugin(toolchain.path)
                out_env[PLUGIN_STAGE_VAR] = stage
        if kind in KIND_PLUGINS:
            kind_plugin = artifacts.pass_plugin(KIND_PLUGINS[kind], toolchain.path)
    enter_first = False
    if runtime is not None and kind in HOOKED_KINDS:
        enter_first = hook_order(toolchain.path) == ENTER_FIRST
    argv = rewrite(inv, toolchain=toolchain, runtime=runtime, driver=driver, kind=kind, plugin=plugin,
                   kind_plugin=kind_plugin, enter_first=enter_first, early=stage == STAGE_SANCOV_EARLY)
    return Command(argv, out_env)


def run(args: Sequence[str], *, cxx: bool, prog: str) -> int:
    """Replace this process with the real compiler; on a wrapper error print one line, return 1."""
    env = dict(os.environ)
    try:
        argv, env = plan(args, cxx=cxx, env=env)
    except AutotuneError as exc:
        fix = f" (fix: {exc.fix})" if exc.fix else ""
        sys.stderr.write(f"{prog}: error: {exc.message}{fix}\n")
        return exc.exit_code
    sys.stdout.flush()
    sys.stderr.flush()
    try:
        os.execve(argv[0], argv, env)
    except OSError as exc:
        sys.stderr.write(f"{prog}: error: cannot run {argv[0]}: {exc.strerror}\n")
        return 1
    return 0  # pragma: no cover - execve does not return


def main_cc() -> None:
    sys.exit(run(sys.argv[1:], cxx=False, prog="autotune-cc"))


def main_cxx() -> None:
    sys.exit(run(sys.argv[1:], cxx=True, prog="autotune-c++"))
