"""Claims on answering a message (docs/how-tomo-works.md#reply), which a reply takes before it
posts so that a message is answered once: what a claim's status says (`status`), taking a
claim or an owed one over (`taking`), and ending it or letting it go (`ending`)."""
