"""Writing and posting a reply: the job, its prompt, the tool rounds and their progress, posting
whole or streamed, the thread's history, the 'on it' sign."""
