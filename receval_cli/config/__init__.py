"""The config: its pydantic model, YAML loading, conventions, presets, JSON Schema, the
`init` starter and column sniffing."""
