"""One module per area of the command line; each is imported only when its command runs."""
