"""One module per pipeline stage (fetch, deps, build, download, package, audit, report, rebuild,
survey, prove, matrix, validate, track): each reads the records it needs, does its work through the
layers below and writes its record atomically."""
