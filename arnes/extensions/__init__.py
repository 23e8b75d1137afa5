"""Extensions a user brings along (DESIGN §13): skills, custom commands, agent definitions, hooks.

Each kind lives in its own module; this package holds what they share: where the files are
(`locations`) and how a Markdown file's YAML front matter is read (`frontmatter`).
"""
