"""Prompts, pure: the cascade and the model choice (select), the template context (context),
and Jinja2 rendering with project overrides (render)."""
