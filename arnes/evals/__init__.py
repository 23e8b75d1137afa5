"""The built-in eval set: small tasks, each with a scripted trajectory that solves it."""
