"""Memory: SQLite store with hybrid FTS5 + sqlite-vec recall, sessions. Depends on api only."""
