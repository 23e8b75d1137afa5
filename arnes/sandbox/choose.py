"""Which sandbox runs here: the one place that knows every backend, so the seam (base.py) knows none."""

from __future__ import annotations

from collections.abc import Callable

from arnes.errors import ConfigError
from arnes.sandbox.base import NoSandbox, Sandbox, SandboxMode, SandboxSpec
from arnes.sandbox.bubblewrap import Bubblewrap
from arnes.sandbox.landlock import LandlockSandbox


def choose_sandbox(mode: SandboxMode, spec: SandboxSpec) -> Sandbox:
    """`auto` takes the first backend that works here; a named one must work or it is an error."""
    if mode == "off":
        return NoSandbox(spec)
    backends: dict[str, tuple[Callable[[], str | None], Callable[[SandboxSpec], Sandbox]]] = {
        "bubblewrap": (Bubblewrap.unavailable, Bubblewrap),
        "landlock": (LandlockSandbox.unavailable, LandlockSandbox),
    }
    names = ["bubblewrap", "landlock"] if mode == "auto" else [mode]
    problems = []
    for name in names:
        unavailable, build = backends[name]
        problem = unavailable()
        if problem is None:
            return build(spec)
        problems.append(f"{name}: {problem}")
    if mode == "auto":
        return NoSandbox(spec)
    raise ConfigError(f"--sandbox {mode} cannot run here ({'; '.join(problems)}); use --sandbox auto or off")
