"""One episode: a sandboxed agent, the tool server and the recording inference proxy."""
