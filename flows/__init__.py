"""Prefect flows: thin shells that run the stages of timelyqa, publish and spiders as tasks."""
