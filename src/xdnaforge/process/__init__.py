"""Starting and holding processes: the only layer that runs commands (run.py), contains their
trees (containment.py, keeper.py) and stops them."""
