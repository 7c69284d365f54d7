"""Annotators and their roles: annotators rate, reviewers also adjudicate, admins do everything."""

from __future__ import annotations

import hashlib
import secrets
from typing import Any

from sqlmodel import Session, select

from annotation.review.errors import ReviewError
from store.models import Annotator, AuditEvent
from annotation.vocab import ANNOTATOR_ROLES

ROLES = ANNOTATOR_ROLES
CAN_ADJUDICATE = frozenset({"reviewer", "admin"})
CAN_RUN = frozenset({"reviewer", "admin"})
"""Who may start, resume and cancel model runs (which spend on endpoints and change what is scored)."""


def add_annotator(session: Session, name: str, role: str = "annotator") -> Annotator:
    """Create an annotator; adding an existing one with the same role changes nothing. A different
    role is refused: a role change (a promotion above all) is said explicitly with ``set_role``, never
    slipped in by adding a name twice."""
    name, role = _checked(name, role)
    person = session.exec(select(Annotator).where(Annotator.name == name)).first()
    if person is None:
        person = Annotator(name=name, role=role)
        session.add(person)
        session.flush()
    elif person.role != role:
        raise ReviewError(
            f"{name} is already an annotator with role {person.role}; adding does not change roles. "
            f"To make them {role}: `chainmark annotators set-role {name} {role}`"
        )
    return person


def set_role(session: Session, name: str, role: str) -> tuple[Annotator, str]:
    """Change an existing annotator's role (an audit row says who changed it, from what). Returns the person and the old role."""
    name, role = _checked(name, role)
    person = get_annotator(session, name)
    old = person.role
    if old != role:
        person.role = role
        session.flush()
        audit_person(session, person, {"role": old}, {"role": role})
    return person, old


def _checked(name: str, role: str) -> tuple[str, str]:
    name = (name or "").strip()
    if not name:
        raise ReviewError("an annotator needs a name")
    if role not in ROLES:
        raise ReviewError(f"role must be one of {', '.join(ROLES)}; got {role!r}")
    return name, role


def get_annotator(session: Session, name: str) -> Annotator:
    person = session.exec(select(Annotator).where(Annotator.name == name)).first()
    if person is None:
        known = ", ".join(session.exec(select(Annotator.name).order_by(Annotator.name)).all()) or "none yet"
        raise ReviewError(
            f"no annotator named {name!r} (known: {known}); add one with `chainmark annotators add {name}`"
        )
    return person


def audit_person(session: Session, person: Annotator, before: dict[str, Any], after: dict[str, Any]) -> None:
    """An audit row for a change to who may do what (a role, a serve login). Written here, not by the
    automatic hook: a person's row holds their token's hash, which the trail must not copy."""
    session.add(
        AuditEvent(
            actor=session.info.get("actor", "system"),
            action="update",
            entity="annotator",
            entity_id=person.id,
            before={"name": person.name, **before},
            after={"name": person.name, **after},
        )
    )
    session.flush()


def token_hash(token: str) -> str:
    """What is stored of a serve token (and compared at login): its sha256."""
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


def issue_serve_token(session: Session, name: str) -> str:
    """A new login token for ``chainmark serve`` (replacing any earlier one); returned once, stored hashed."""
    person = get_annotator(session, name)
    had = person.serve_token_hash is not None
    token = secrets.token_urlsafe(24)
    person.serve_token_hash = token_hash(token)
    session.flush()
    audit_person(
        session, person, {"serve_login": "set" if had else "none"}, {"serve_login": "replaced" if had else "issued"}
    )
    return token


def revoke_serve_token(session: Session, name: str) -> bool:
    """Remove the person's serve login; True when they had one."""
    person = get_annotator(session, name)
    had = person.serve_token_hash is not None
    person.serve_token_hash = None
    session.flush()
    if had:
        audit_person(session, person, {"serve_login": "set"}, {"serve_login": "revoked"})
    return had


def serve_accounts(session: Session) -> list[tuple[str, str]]:
    """(name, token sha256) of everyone with a serve login."""
    rows = session.exec(
        select(Annotator)
        .where(Annotator.serve_token_hash.is_not(None))  # type: ignore[union-attr]
        .order_by(Annotator.name)
    ).all()
    return [(p.name, str(p.serve_token_hash)) for p in rows]


def list_annotators(session: Session) -> list[Annotator]:
    return list(session.exec(select(Annotator).order_by(Annotator.name)).all())


def run_refusal(session: Session, name: str) -> str | None:
    """Why ``name`` may not start, resume or cancel runs, or None when they may. A name that is no
    annotator is the database's own user (whoever set it up and works in it alone), not a team role."""
    person = session.exec(select(Annotator).where(Annotator.name == name)).first()
    if person is None or person.role in CAN_RUN:
        return None
    return (
        f"{person.name} is an {person.role}; only reviewers and admins may start, resume or cancel runs "
        f"(`chainmark annotators set-role {person.name} reviewer`)"
    )


def require_reviewer(person: Annotator) -> None:
    if person.role not in CAN_ADJUDICATE:
        raise ReviewError(
            f"{person.name} is an {person.role}; only reviewers and admins may adjudicate "
            f"(`chainmark annotators set-role {person.name} reviewer`)"
        )
