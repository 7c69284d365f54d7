"""Who is acting, in the standard library only: the audit trail names them, blind mode hides from them,
and listings that never load SQLAlchemy (``AppContext.reading``) ask too."""

from __future__ import annotations

import getpass


def acting_user(actor: str | None = None) -> str:
    """Who the audit names: the given actor, else the configured user, else the OS login."""
    from store.settings import current

    return actor or current().user or _login()


def _login() -> str:
    """The OS user: from the usual variables, else the password database (no terminal needed, unlike
    ``os.getlogin``), so the audit names a person even when ``$USER`` is unset (cron, containers)."""
    try:
        return getpass.getuser()
    except (OSError, KeyError):  # no variable and no passwd entry for this uid
        return "system"
