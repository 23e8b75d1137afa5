"""Headless runs in Claude Code's protocol (DESIGN §12, §16): the JSON outputs, and stdin as its
Agent SDKs write it (user messages and control requests, `--input-format stream-json`)."""
