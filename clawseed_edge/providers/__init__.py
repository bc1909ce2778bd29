"""Model providers: Ollama, Anthropic, OpenAI-compatible; reliability and routing. Depends on api only."""
