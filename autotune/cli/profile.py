"""`autotune profile`: this host's caches (or a reference host's), as a table, JSON or TOML."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from autotune.cli.common import command, out, print_json
from autotune.cli.options import JsonOpt, ProcfsRootOpt, SysfsRootOpt
from autotune.errors import AutotuneError


@command("profile")
def profile_cmd(
    json_out: JsonOpt = False,
    save: Annotated[Path | None, typer.Option("--save", help="Write the profile as TOML to PATH.",
                                              metavar="PATH")] = None,
    sysfs_root: SysfsRootOpt = Path("/sys"),
    procfs_root: ProcfsRootOpt = Path("/proc"),
    list_: Annotated[bool, typer.Option("--list", help="List the bundled reference profiles.")] = False,
    show: Annotated[str | None, typer.Option("--show", metavar="NAME",
                                             help="Show a reference profile by name, or a profile TOML file by path.")] = None,
) -> None:
    """Profile the host's caches (size of one instance, ways, line, sets, sharing), cores, huge
    pages and the host settings afl-fuzz checks; or show a reference host's profile."""
    from autotune.profile import detect_host, list_reference_profiles, reference_profile, resolve_profile, save_profile
    from autotune.profile.render import reference_table, render_profile

    if list_:
        if show or save:
            raise AutotuneError("--list cannot be combined with --show or --save", fix="use one of them")
        names = list_reference_profiles()
        if json_out:
            print_json(names)
        else:
            out.print(reference_table([reference_profile(n) for n in names]))
        return
    if show:
        profile = resolve_profile(show)
    else:
        for opt, root in (("--sysfs-root", sysfs_root), ("--procfs-root", procfs_root)):
            if not root.is_dir():
                raise AutotuneError(f"{opt} {root} is not a directory", fix=f"give the root of a {opt[2:-5]} tree")
        profile = detect_host(sysfs_root=sysfs_root, procfs_root=procfs_root)
    if save:
        save_profile(profile, save)
    if json_out:
        print_json(profile.to_dict())
    else:
        out.print(render_profile(profile))
        if save:
            out.print(f"saved to {save}")
