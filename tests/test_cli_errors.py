"""The CLI's own failures: a command module that cannot be imported stops it loudly."""

from __future__ import annotations


def test_a_missing_command_module_fails_loudly():
    """cli/main.py imports every module of COMMANDS; one that cannot be imported is a broken
    install and stops the CLI with its name, never a command silently left out."""
    import subprocess
    import sys

    code = ("import importlib.abc, sys\n"
            "class Block(importlib.abc.MetaPathFinder):\n"
            "    def find_spec(self, name, path, target=None):\n"
            "        if name == 'autotune.cli.status':\n"
            "            raise ModuleNotFoundError(f'No module named {name!r}', name=name)\n"
            "sys.meta_path.insert(0, Block())\n"
            "import autotune.cli.main\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.returncode != 0 and "autotune.cli.status" in proc.stderr
    from autotune.cli.main import COMMANDS, app

    from typer.testing import CliRunner

    listed = CliRunner().invoke(app, ["--help"]).output
    assert all(f" {name} " in listed for name in COMMANDS), listed  # every command, groups (bugs) included
