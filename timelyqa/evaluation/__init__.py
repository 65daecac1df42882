"""The parts of scoring a model on a release (timelyqa.evaluate): predictions read, rows graded, the report."""
