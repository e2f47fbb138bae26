"""The Jinja templates of :mod:`deniable.server.web` (a package only so that they ship inside
``deniable.server`` and are found the same way installed and in a checkout)."""
