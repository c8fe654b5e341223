"""The built-in Python providers: one module per provider family, each with a PROVIDERS list."""
