"""Annotators and their roles: annotators rate, reviewers also adjudicate, admins do everything."""

from __future__ import annotations

from sqlmodel import Session, select

from annotation.review.errors import ReviewError
from store.models import Annotator

ROLES = ("annotator", "reviewer", "admin")
CAN_ADJUDICATE = frozenset({"reviewer", "admin"})


def add_annotator(session: Session, name: str, role: str = "annotator") -> Annotator:
    """Create an annotator, or change the role of an existing one (names are unique)."""
    name = (name or "").strip()
    if not name:
        raise ReviewError("an annotator needs a name")
    if role not in ROLES:
        raise ReviewError(f"role must be one of {', '.join(ROLES)}; got {role!r}")
    person = session.exec(select(Annotator).where(Annotator.name == name)).first()
    if person is None:
        person = Annotator(name=name, role=role)
        session.add(person)
    else:
        person.role = role
    session.flush()
    return person


def get_annotator(session: Session, name: str) -> Annotator:
    person = session.exec(select(Annotator).where(Annotator.name == name)).first()
    if person is None:
        known = ", ".join(session.exec(select(Annotator.name).order_by(Annotator.name)).all()) or "none yet"
        raise ReviewError(f"no annotator named {name!r} (known: {known}); add one with "
                          f"`chainmark annotators add {name}`")
    return person


def list_annotators(session: Session) -> list[Annotator]:
    return list(session.exec(select(Annotator).order_by(Annotator.name)).all())


def require_reviewer(person: Annotator) -> None:
    if person.role not in CAN_ADJUDICATE:
        raise ReviewError(f"{person.name} is an {person.role}; only reviewers and admins may adjudicate "
                          f"(`chainmark annotators add {person.name} --role reviewer`)")
