"""The ``clawseed-edge`` command, one module per command group."""
