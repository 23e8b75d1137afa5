"""Teams of agents: a graph of nodes (arnes or external coding CLIs) with read-only roles that are
enforced, not requested, and a timeline that records which node wrote to the tree."""
