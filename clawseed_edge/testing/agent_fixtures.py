"""pytest fixtures for agent tests (scripted provider, agent builder)."""
