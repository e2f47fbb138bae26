"""The offline analyst path (no database, no Flask): definition → responses CSV → dataset → estimates → output."""
