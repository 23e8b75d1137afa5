"""arnes: a local coding agent for the terminal.

The model is the brain; arnes is the body around it: tools, a loop, permissions and a trace.
Nothing heavy is imported here so that `arnes --help` starts fast.
"""

__version__ = "0.1.0"
