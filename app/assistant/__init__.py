"""tomo in Slack's place for AI apps (docs/how-tomo-works.md#ai-app): the suggested prompts of
its messages tab and the titles of the DM threads it answers."""
