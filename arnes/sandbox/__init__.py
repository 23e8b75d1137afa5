"""OS confinement for shell commands: one protocol, three backends (bubblewrap, Landlock, off)."""

from arnes.sandbox.base import Sandbox, SandboxSpec, choose_sandbox

__all__ = ["Sandbox", "SandboxSpec", "choose_sandbox"]
