"""Fixed vocabularies of authoring and review, in a module that imports nothing: the command line
offers them as choices while building its options, and must not import the domain (and SQLAlchemy
behind it) just to print ``--help`` (bench/bench_startup.py)."""

TASK_STATUSES = ("draft", "submitted", "verified", "rejected")
ANNOTATOR_ROLES = ("annotator", "reviewer", "admin")
SCALE_LEVELS = ("nominal", "ordinal", "interval")
TARGET_KINDS = ("trajectory", "event", "checkpoint_result", "block_question", "image_question", "task", "verdict")
PREFERENCE_CHOICES = ("a", "b", "tie")  # what a person picks between the two answers shown
