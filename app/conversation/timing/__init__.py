"""When a conversation's judgment or reply runs: the quiet wait and its policy, the channel's pace,
the conversations tomo takes part in (follow-ups), and the timers set again after a restart."""
