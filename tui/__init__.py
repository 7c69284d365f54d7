"""The Textual app and the CLI. Only this package may import Textual, and only when the TUI opens."""
