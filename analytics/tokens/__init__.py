"""Tokens: offline tiktoken vocabularies, batched counting, token pieces for display,
language detection and the token-tax arithmetic.

Pure computation and package data only: no warehouse, no HTTP, no Django views.
"""
