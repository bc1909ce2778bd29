"""Every way in: each channel (the gateway first) is a subpackage; what they share sits here."""
