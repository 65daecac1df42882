"""timelyqa: question-answer datasets whose answers change with the world."""
