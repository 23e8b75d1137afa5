"""What arnes itself does on the host with a workspace it does not trust: read and write its files
(files.py, over the no-link primitives of nofollow.py) and run git (git.py)."""
