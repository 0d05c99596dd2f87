"""The code that changes the system, only with consent: installing audited packages and
rolling back, the consent rule itself (--yes, root), and the kernel-upgrade hooks."""
