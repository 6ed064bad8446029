"""Rich tables for a host profile and for the list of reference profiles."""

from __future__ import annotations

from rich.console import Group
from rich.table import Table
from rich.text import Text

from autotune.profile.model import CacheLevel, HostProfile

_SEVERITY_STYLE = {"ok": "green", "advice": "cyan", "warning": "yellow", "error": "bold red"}


def fmt_bytes(n: int | None, *, exact: bool = True) -> str:
    """Bytes in the largest binary unit that divides them exactly: 49152 -> '48 KiB'.

    With ``exact=False`` the largest unit is used with one decimal (memory sizes).
    """
    if n is None:
        return "?"
    for unit, size in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= size and n % size == 0:
            return f"{n // size} {unit}"
        if not exact and n >= size:
            break
    for unit, size in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= size:
            return f"{n / size:.1f} {unit}"
    return f"{n} B"


def _q(value) -> str:
    return "?" if value is None else str(value)


def _sources(cache: CacheLevel) -> str:
    distinct = sorted(set(cache.sources.values()), key=list(cache.sources.values()).index)
    plain = [s for s in distinct if "(" not in s] or distinct
    return ", ".join(plain) if plain else "?"


def cache_table(profile: HostProfile) -> Table:
    table = Table(title="caches (size of one instance)", title_justify="left", show_edge=False)
    keys = [(c.level, c.kind) for c in profile.caches]
    hybrid = len(set(keys)) < len(keys)  # several shapes at one level: say which CPUs each serves
    for col in ("cache", "size", "inst", "ways", "line", "sets", "shared by", *(("CPUs",) if hybrid else ()),
                "scope", "source"):
        table.add_column(col, justify="right" if col in ("size", "inst", "ways", "line", "sets") else "left",
                         no_wrap=col != "source", min_width=8 if col == "size" else None)
    for c in profile.caches:
        shared = c.shared_cpu_list if c.shared_cpu_list is not None else "?"
        if c.sharing_cpus is not None:
            shared += f" ({c.sharing_cpus})"
        table.add_row(c.name, fmt_bytes(c.size_bytes), _q(c.instances), _q(c.ways),
                      fmt_bytes(c.line_bytes) if c.line_bytes else "?", _q(c.sets), shared,
                      *((_q(c.cpus),) if hybrid else ()), c.scope, _sources(c))
    if not profile.caches:
        table.add_row("none known", *[""] * (len(table.columns) - 1))
    return table


def host_table(profile: HostProfile) -> Table:
    table = Table(title=f"host: {profile.name}", title_justify="left", show_header=False, show_edge=False)
    table.add_column("what")
    table.add_column("value")
    table.add_row("cpu", f"{_q(profile.brand)} ({_q(profile.arch)})")
    topo = f"{_q(profile.packages)} package(s), {_q(profile.cores)} cores, {_q(profile.threads)} threads"
    topo += f" ({_q(profile.threads_per_core)} per core"
    topo += f", SMT {profile.smt})" if profile.smt else ")"
    table.add_row("topology", topo)
    if profile.online_cpus:
        table.add_row("online CPUs", profile.online_cpus)
    table.add_row("memory", fmt_bytes(profile.memory_bytes, exact=False))
    huge = f"THP enabled={_q(profile.thp_enabled)} defrag={_q(profile.thp_defrag)}"
    if profile.hugepages is not None:
        pages = ", ".join(f"{fmt_bytes(p['page_bytes'])}: {p['reserved']} reserved" for p in profile.hugepages)
        huge += f"; hugetlb {pages or 'none'}"
    table.add_row("huge pages", huge)
    table.add_row("source", profile.citation)
    for note in profile.notes:
        table.add_row("note", note)
    return table


def checks_text(profile: HostProfile) -> Text | None:
    """One line per finding (severity, check, message) and its fix indented below."""
    if profile.checks is None:
        return None
    text = Text("host checks\n", style="italic")
    for f in profile.checks:
        text.append(f"{f.severity:>7} ", style=_SEVERITY_STYLE[f.severity])
        text.append(f"{f.check}: {f.message}\n")
        if f.fix:
            text.append(f"{'':8}fix: {f.fix}\n", style="dim")
    counts = {s: sum(1 for f in profile.checks if f.severity == s) for s in ("error", "warning", "advice")}
    text.append(f"verdict: {counts['error']} error(s), {counts['warning']} warning(s), {counts['advice']} advice")
    return text


def render_profile(profile: HostProfile) -> Group:
    parts = [host_table(profile), Text(""), cache_table(profile)]
    checks = checks_text(profile)
    if checks is not None:
        parts += [Text(""), checks]
    return Group(*parts)


def reference_table(profiles: list[HostProfile]) -> Table:
    table = Table(title=f"{len(profiles)} reference profiles (autotune profile --show NAME)",
                  title_justify="left", show_edge=False)
    for col in ("name", "cpu", "cores", "L1", "L2", "L3", "source"):
        table.add_column(col, no_wrap=col in ("name", "L1", "L2", "L3"),
                         justify="right" if col in ("cores", "L1", "L2", "L3") else "left")
    for p in profiles:
        levels = []
        for level in (1, 2, 3):
            found = p.caches_at(level)
            levels.append("/".join(fmt_bytes(c.size_bytes) for c in found) if found else "-")
        table.add_row(p.name, _q(p.brand), _q(p.cores), *levels, _short_citation(p.citation))
    return table


def _short_citation(citation: str) -> str:
    """'Sarafov, Markvica, ...: Title...; Table 1, row 'xeon'' -> 'Sarafov: Table 1'."""
    first = citation.split(",")[0].split(":")[0].strip()
    if ";" not in citation:
        return citation
    where = citation.rsplit(";", 1)[1].split(", row")[0].split(" (")[0].strip()
    return f"{first}: {where}"
