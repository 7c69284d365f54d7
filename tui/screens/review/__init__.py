"""Review screens: rating queue, adjudication queue, agreement dashboard."""
