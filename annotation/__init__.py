"""Authoring domain: tasks, chains, checkpoints, validation, review workflow, formats. No Textual here."""
