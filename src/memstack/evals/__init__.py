"""Measuring commands behind ``memstack eval …``: each reads outside data given with ``--data``."""
