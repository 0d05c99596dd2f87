"""Fleet: thin adapters to engines labs already run (aptly, LAVA, GitHub Actions) and the
report that merges many hosts' records. Nothing here schedules jobs itself."""
