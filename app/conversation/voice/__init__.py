"""How much tomo says on its own: the own-voice limits and the modes people set per channel."""
