"""The agent loop, its events and the trace."""
