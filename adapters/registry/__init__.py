"""Schema Registries: their protocol and errors (api.py), a real one's client (client.py), the simulation's
in-memory one (memory.py; over HTTP, memory_http.py), the snapshot an observation carries (snapshot.py)."""
