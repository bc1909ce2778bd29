"""pytest fixtures for hardware-in-the-loop tests on mock pins."""
