"""Measuring commands behind ``memstack eval …``: each prints one JSON object as its last line.

Evaluation data lives outside the project and is passed with ``--data``; nothing here reads files on import.
"""
