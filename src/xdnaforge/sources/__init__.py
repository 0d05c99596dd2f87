"""Pinned source trees and what they say: object caches and worktrees with their
submodules, patch series applied without fuzz, and CMake files read without CMake (the survey)."""
