"""The loaders and frozen models of what the user writes: recipes, matrices, patch series,
site.yaml (with its fleet and environment entries), proofs and kernel ranges. Validation
collects every problem with its file, line and key path; nothing here runs a process."""
