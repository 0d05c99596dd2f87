"""Reading and judging .deb files: the streaming reader (ar, compressed tar streams, xz
blocks, tar headers, control file, ELF run paths), the audit rules, and the comparison of two
builds' packages. Never unpacks to disk; the rules are pure."""
