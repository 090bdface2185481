"""The catalog database: its schema, numbered migrations, bulk-load mode and provenance record."""
