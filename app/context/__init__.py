"""What a prompt knows, shared by judgment, reply and memory: the `builder` of a conversation's
context, stored messages as chat (`chat`), the memories a prompt recalls within its budget
(`memories`), the notes of tomo's notebook it shows (`notes`), and the `directory` of channels
and people with their names."""
