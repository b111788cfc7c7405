"""Money, tokens and quotas: the shipped price table and the cost of an attempt, what the project
spent today, which budget is exhausted, and when pacing pauses (issue 16 part 1)."""
