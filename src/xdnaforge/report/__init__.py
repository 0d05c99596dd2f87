"""BUILD_REPORT.md and its JSON twin, rendered from the records only (jinja2, templates/)."""
