"""Debian package files: reading them (members, tar walks, ELF facts), the rules that judge
them, comparing two builds of them, and writing them back normalised."""
