"""aftershock explore: stale-view, unobserved-state and crash bugs found without a
hand-written scenario."""
