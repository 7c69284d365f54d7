"""Agreement studies: statistics over rater × target matrices built from HumanRating and Verdict rows.

``stats`` is pure numpy (plus the ``krippendorff`` package); ``matrix`` reads the store; ``summary``,
``disagreements``, ``rankings`` and ``study`` turn matrices into reports. Nothing here imports
``annotation``: rows are read straight from ``store.models``.
"""
