"""The only place processes start: run() with a rebuilt environment, logs and timeouts, the
PID namespace that holds a step's process tree, the sandbox argv, interruption, progress."""
