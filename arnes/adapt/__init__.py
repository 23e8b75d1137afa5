"""The model-adaptation layer (DESIGN §15): every behaviour that adapts arnes to a weak model.

The loop knows it only through `agent.steering.Steering`; profiles (llm/profiles.py) say which
pieces run. Each piece acts at one moment and returns a decision as data.
"""
