"""bench/run.py's parts, one per thing it measures (see bench/README.md)."""
