"""Rules on the file's shape: the frontmatter markers, its YAML, and what sits above it."""
