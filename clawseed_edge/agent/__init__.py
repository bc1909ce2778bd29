"""The turn engine: registry, hooks, SecurityPolicy, dispatchers, parser, history, prompt."""
