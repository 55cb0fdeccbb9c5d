"""Evaluation (V1, V2): golden query sets and BEIR datasets through the real search path."""
