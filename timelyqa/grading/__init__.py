"""The grader's parts, under timelyqa.rewards: they import nothing of timelyqa outside this folder, only each other.

A reward file loaded by path where timelyqa is not installed (verl's own environment) loads this folder beside it
under a name of its own, so every import here is relative.
"""
