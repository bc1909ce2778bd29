"""Test doubles and fixtures for clawseed-edge and for users' hardware-in-the-loop tests."""
