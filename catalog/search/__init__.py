"""Paper search: keyword (FTS5/BM25), semantic vectors, the query vocabulary and passages."""
