"""One module per external tool: argv builders, pure parsers, thin runners over run.run()."""
