"""What turns a model's "done" into a checked result: verify, features, ladder, handoff, teams, evals."""
