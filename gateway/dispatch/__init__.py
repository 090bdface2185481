"""Where calls run: the one admission-and-dispatch path of every surface and the dispatchers (embedded thread pool, Redis workers)."""
