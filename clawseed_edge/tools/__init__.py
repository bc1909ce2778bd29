"""Built-in tools (memory, files, shell, HTTP). Depends on api only."""
