"""Plugins' language servers (Claude Code's LSP support): settings, the wire, the hub, the LSP tool."""
