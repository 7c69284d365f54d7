"""The human side of judging: annotators and roles, rating scales as data, assignments with overlap,
blind rating views, ratings that remember the task revision they saw, and adjudication.

Statistics over these rows live in ``evaluation.agreement``; this package never imports it.
"""

from annotation.review.errors import ReviewError

__all__ = ["ReviewError"]
