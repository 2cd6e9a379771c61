"""Transient drivers and command-line tools."""
