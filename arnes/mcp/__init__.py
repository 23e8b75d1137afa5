"""MCP servers (DESIGN §13): their settings, a client on the official SDK, and their tools.

Only `settings` is imported at start-up; the SDK loads when a server is actually started.
"""
