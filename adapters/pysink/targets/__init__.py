"""The Python sink as a sinkcheck target: on a real broker (target.py), simulated in memory
with a manual clock (simulation.py), and its faulty variants for the kill matrix (variants.py)."""
