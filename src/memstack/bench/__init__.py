"""Measuring commands behind ``memstack bench …``; each prints one JSON object as its last line with ``--json``."""
