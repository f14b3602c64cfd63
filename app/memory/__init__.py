"""Memory: the periodic job that writes memories of the workspace, its channels and threads
(`refresh`), which ones a pass rewrites and from what prompt (`plans`), what they are made of
(`sources`), what people can see and erase (`control`: `/tomo memory`, `/tomo forget`), and
the notes tomo writes itself (`notebook`)."""
