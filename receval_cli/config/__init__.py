"""The config: its pydantic model, YAML loading, conventions, presets, JSON Schema."""
