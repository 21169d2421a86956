"""Playing scenarios: the runner of one scenario on one target, how runs share a warm stack, the
session of a run or a gate (named, saved and generated scenarios), the model as a target, and a
user's config checked."""
