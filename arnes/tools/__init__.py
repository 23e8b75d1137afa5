"""Tools the model can call: each is small, validated by pydantic, and errors are feedback."""
