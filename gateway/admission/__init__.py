"""Who may ask what: Host/Origin policy, client identity, the limits, CORS and the ordered admission checks of POST /mcp."""
