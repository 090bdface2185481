"""Read queries over the catalog database: papers, entities, taxonomy and public-metadata lookups."""
