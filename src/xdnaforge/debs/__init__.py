"""Reading and judging .deb files: the streaming reader (ar, compressed tar streams, xz
blocks, tar headers, control file, ELF run paths), the audit rules, the comparison of two
builds' packages, and writing a built package back normalised. The reader never unpacks to
disk; the rules are pure."""
