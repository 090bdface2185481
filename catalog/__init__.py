"""Self-hosted Papers With Code catalog API: SQLite store, dump importer and aiohttp server."""
