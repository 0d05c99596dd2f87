"""What a run leaves on disk: the build/ and artifacts/ layout, the JSON records, failure.json,
locks, doit's state file, and disk errors as one line."""
