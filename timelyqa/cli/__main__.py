"""`python -m timelyqa.cli`: the `timelyqa` command run from a checkout."""

from timelyqa.cli import app

app()
