"""One place wires the process: it alone builds the object graph (the web process, the job worker,
their start-up and shutdown); nothing below imports it."""
