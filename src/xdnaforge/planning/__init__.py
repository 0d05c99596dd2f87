"""Planning: pure decisions about what would run and why (plans, verdicts, candidate recipes)."""
