"""What to tell a person whose model did not answer: the same words in one-shot runs and at the prompt."""

from __future__ import annotations


def no_model_hint(provider: str, model: str, where: str, error: str) -> str:
    return (
        f"arnes: no answer from the model. Tried provider {provider!r}, model {model!r} at {where}: {error}\n"
        "To configure a model:\n"
        "  - Ollama (default): run `ollama serve` and `ollama pull qwen2.5-coder:7b`\n"
        "  - Anthropic: export ANTHROPIC_API_KEY=... and use --provider anthropic\n"
        "  - any OpenAI-compatible server (vLLM, llama.cpp, OpenRouter, OpenAI): "
        "--provider openai --base-url URL --model NAME (key in OPENAI_API_KEY)\n"
        '  - or put them in .arnes/settings.json under "model"; `arnes demo` runs with no model at all.'
    )
