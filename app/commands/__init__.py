"""The `/tomo` command: what each command does (`actions`), the words people type (`words`),
and the answers in English or Japanese (`answers`). Its HTTP side is app.routes.commands."""
