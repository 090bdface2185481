"""Serving the API: one aiohttp process or gunicorn workers, and the listening socket."""
