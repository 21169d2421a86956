"""How a verdict is reached: the claims a target makes, the verdicts and witnesses, the decoders
of a sink's objects, and why a run tested nothing; the checkers themselves are in checks/."""
