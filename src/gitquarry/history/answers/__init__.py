"""Answers built from search results: budgets, cursors, blame, commit views."""
