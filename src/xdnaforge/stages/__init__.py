"""The stages of a target's pipeline (fetch, build, package, audit, report, ...): each an edge
module that reads the previous stage's record, does its work and writes its own record."""
