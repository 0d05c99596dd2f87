"""Reading and judging .deb files: the streaming reader, its formats, and the audit's rules."""
