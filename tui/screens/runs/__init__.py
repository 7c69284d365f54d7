"""Run screens: launcher and live monitor, trajectory viewer."""
