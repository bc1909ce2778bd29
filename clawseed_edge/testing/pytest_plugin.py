"""pytest plugin (entry point ``pytest11``) that offers clawseed-edge's fixtures to any test suite."""
