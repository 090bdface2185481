"""Running the gateway: settings, the composition root (app), serving under aiohttp or gunicorn, the supervisor, the pwc-mcp CLI, demo and smoke."""
