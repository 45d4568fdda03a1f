"""Rules on the Python body against the manifest (PT030-PT049), fed by one AST pass."""
