"""Edit formats (DESIGN §15): how a model without reliable tool calls hands over its files."""
