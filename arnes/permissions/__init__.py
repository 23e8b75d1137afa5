"""Where the agent may read and write: decisions, real paths, approvers."""
