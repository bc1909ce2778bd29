"""Configuration: the TOML schema, loading with errors that name file and key, assembly."""
