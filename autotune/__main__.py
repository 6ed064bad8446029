from autotune.cli.main import run

run()
