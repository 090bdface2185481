"""The `pwc` command-line tool for the Papers With Code catalog (sync, no Redis, no aiohttp).

Contract: ``docs/cli-contract.md`` (version 0.4.1 of the public CLI).
"""

__version__ = "0.4.1"
API_CONTRACT_VERSION = "v1"

__all__ = ["API_CONTRACT_VERSION", "__version__"]
