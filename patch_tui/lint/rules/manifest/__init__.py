"""Rules on the manifest's fields (PT004, PT010-PT025)."""
