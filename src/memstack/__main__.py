"""``python -m memstack``: the ``memstack`` command, for a client that should not depend on ``PATH`` (an MCP client
starting ``memstack mcp`` runs this interpreter with ``-m memstack``; ``memstack mcp --print-config`` prints it)."""

from memstack.cli import main

if __name__ == "__main__":
    main(prog_name="memstack")
