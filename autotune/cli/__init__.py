"""The command line: one thin module per command, each calling a typed core function.

``autotune --help`` imports every command module (cli/main.py), so a command module imports at its top
only what is cheap to load; the stage a command runs (numpy, and most of the package) is imported
inside the command's function, when the command runs (issue 56)."""
