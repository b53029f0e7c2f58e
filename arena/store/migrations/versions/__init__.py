"""The revisions, oldest first by their numbered ids."""
