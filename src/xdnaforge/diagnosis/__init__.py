"""Diagnosis: reading logs for known failures (knowledge, classify, readers, log_verdict,
errnos, upstream) and measuring how well that generalises on real logs (evaluate)."""
