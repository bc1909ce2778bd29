"""pytest plugin (entry point ``pytest11``) that offers clawseed-edge's fixtures to any test suite.

Installing clawseed-edge makes these fixtures available in every pytest run, with no conftest:
the agent fixtures (a scripted provider, an agent builder) and the hardware fixtures (a mock pin
factory, a wired simulated board) and ``sim_i2c`` (simulated sensor banks).
"""

pytest_plugins = [
    "clawseed_edge.testing.agent_fixtures",
    "clawseed_edge.testing.hardware_fixtures",
    "clawseed_edge.testing.sensor_fixtures",
]
