"""Subcommands other than running a task: each module takes parsed global args and its own argv."""
