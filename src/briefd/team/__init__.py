"""What a team learns from its agents: usage feedback and the usage report (T2, T6), the query
log with its privacy rules and service counters (T3, T6, I4), knowledge gaps (T3), drift
against the code (T4) and link suggestions (T5)."""
