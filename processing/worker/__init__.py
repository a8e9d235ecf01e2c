"""The worker agent: a separate program that speaks HTTP to Core. It imports nothing from Django apps."""
