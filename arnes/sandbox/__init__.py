"""OS confinement for shell commands: one protocol (base.py), backends (bubblewrap, Landlock, off),
and choose.py picking the one that works here."""
