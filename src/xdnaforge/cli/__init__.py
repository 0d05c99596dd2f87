"""The `xdnaforge` console command and what doit itself is taught: the project directory, the
task list, refused doit verbs, shell completion and the man page; the tasks are dodo.py's."""
