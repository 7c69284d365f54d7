"""Driver scripts run in the reference's own Python (as files, not imported by chainmark)."""
