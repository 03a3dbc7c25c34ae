"""memstack as an MCP server: memory tools for any MCP client, over stdio or streamable HTTP (``memstack mcp``)."""

from memstack.mcp.server import McpScope, build_server, http_app

__all__ = ["McpScope", "build_server", "http_app"]
