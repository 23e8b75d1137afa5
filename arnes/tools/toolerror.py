"""The error a tool raises for the model to act on. Part of the Tool seam (base.py exports it),
defined on its own so modules below the seam (ripgrep.py) can raise it too."""


class ToolError(Exception):
    """A failure the model can act on: the message says what happened and what to do next."""
