"""The LLM layer: one client for any OpenAI-compatible endpoint, versioned prompts, structured answers, a disk cache."""
