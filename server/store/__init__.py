"""The SQLite store (no Flask): schema, surveys and their lifecycle, responses, invitations, accounts."""
