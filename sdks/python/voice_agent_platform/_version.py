"""The SDK's version: pyproject.toml, the User-Agent and the CHANGELOG say the same."""

VERSION = "1.4.0"
