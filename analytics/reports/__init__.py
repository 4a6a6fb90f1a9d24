"""Reports built from queries: data only; templates and delivery render and send them."""
