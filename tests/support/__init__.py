"""Test helpers shared by all test areas (database fixtures, scripted servers, image makers)."""
