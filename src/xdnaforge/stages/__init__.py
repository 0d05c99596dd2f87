"""Stages: one module per command that reads or writes a target's records."""
