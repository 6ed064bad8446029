"""The command line: one thin module per command, each calling a typed core function."""
