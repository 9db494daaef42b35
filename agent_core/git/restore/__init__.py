"""Putting the working tree back to a checkpoint: path by path, with every object checked against its id first."""
