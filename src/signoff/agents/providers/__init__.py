"""Model providers behind one small interface (see base.py): scripted and replay agents that run
offline, and HTTP providers for OpenAI-compatible servers and the Anthropic Messages API."""
