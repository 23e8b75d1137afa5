"""Terminal rendering of the event stream."""
