"""Claims on answering a message: what a claim's status says (status), taking one (taking), and its
end or release (ending)."""
