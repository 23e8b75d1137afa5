"""`python -m arnes` runs the same entry point as the console script."""

from arnes.cli import main

raise SystemExit(main())
