"""The adaptation pieces, one behaviour each (see arnes/adapt/profiles for which run when)."""
