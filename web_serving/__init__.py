"""Serving an aiohttp app, shared by the gateway and the catalog: a leaf that imports neither.

Both services listen the same way: they check the address before anything starts (one clear
line for a busy port instead of a raw ``[Errno 98]`` after start-up), serve one process until
SIGTERM/SIGINT, and accept connections with their own request handler (a subclass of aiohttp's,
which answers a request it cannot parse in the service's JSON shape). What differs (the error
shape, the header deadline, the hints in a listen error) stays in each service.
"""
