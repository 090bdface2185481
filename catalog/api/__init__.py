"""The catalog's HTTP API: the aiohttp app, its routes, parameters and JSON responses."""
