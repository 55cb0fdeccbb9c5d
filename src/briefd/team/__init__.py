"""What a team learns from its agents: usage feedback (T2), the query log and service
counters (T3, I4), and link suggestions (T5). Gaps and drift reports belong here too."""
