"""The chain a validator reads and writes: a protocol, the Bittensor SDK implementation and a local one."""
