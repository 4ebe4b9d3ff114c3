"""Rules of this family are added here (see validator/rules/__init__.py)."""
