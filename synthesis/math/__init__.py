"""Math candidate verification (see `verifier`): LaTeX, parsing, steps, answers, equivalence."""
