"""The worker agent: a program of its own (distribution ``quire-worker``, worker/pyproject.toml) that speaks the
worker protocol to Core over HTTP. Besides the standard library and its processors' libraries it imports only
``quire_wire``, the protocol's vocabulary; nothing of Core or Django."""
