"""Page views, one module per page family."""
