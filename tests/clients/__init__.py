"""The clients in other languages, run by their own test runners against a real server."""
