"""`python -m arnes.sandbox.landlock_exec WORKSPACE -- CMD...`: restrict this process, then exec CMD.

An empty WORKSPACE means a read-only agent: nothing but /tmp and /dev is writable.
"""

from __future__ import annotations

import os
import sys


def main(argv: list[str]) -> None:
    import landlock

    workspace, rest = argv[0], argv[argv.index("--") + 1 :]
    access = landlock.FSAccess
    read = access.READ_FILE | access.READ_DIR | access.EXECUTE
    ruleset = landlock.Ruleset()
    ruleset.allow("/", rules=read)
    writable = [p for p in (workspace, "/tmp", "/dev") if p]
    ruleset.allow(*[p for p in writable if os.path.exists(p)], rules=access.all())
    ruleset.apply()
    os.execvp(rest[0], rest)


if __name__ == "__main__":
    main(sys.argv[1:])
