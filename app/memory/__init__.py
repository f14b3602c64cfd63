"""Memory: the periodic job that writes memories of the workspace, its channels and threads
(`refresh`), which ones a pass rewrites and from what prompt (`plans`), what they are made of
(`sources`), and what people can see and erase (`control`: `/tomo memory`, `/tomo forget`)."""
