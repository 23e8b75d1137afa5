"""Rewind (DESIGN §17): checkpoints of the workspace before every user turn, and taking them back.

The layers, bottom up: `store` keeps file contents (deduplicated, compressed, in packs) and each
session's journal in the user's state folder, never in the workspace; `scan` says what the
workspace holds now; `journal` replays a session's checkpoints; `checkpoints` is what a session
calls; `plan` works out what a rewind would change and what it must not overwrite; `apply` does it.
Nothing here imports the agent, the tools or the UI.
"""
