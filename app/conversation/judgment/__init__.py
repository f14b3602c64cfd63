"""Whether tomo joins a conversation nobody answered: the judgment job and how its model's answer
is read."""
