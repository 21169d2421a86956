"""Hypothesis generators of scenarios: connector configs, record streams and values, fault
schedules, and what a drawn scenario can test (a file it closes, a fault that can fire)."""
