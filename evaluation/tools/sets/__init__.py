"""The built-in tool sets, one module each; registering is cheap (schemas only, no heavy imports)."""

from __future__ import annotations


def register_all() -> None:
    from evaluation.tools.registry import register_set
    from evaluation.tools.sets import agentic_mme, atp, gta, vtc

    register_set("gta", gta.build)
    register_set("agentic-mme", agentic_mme.build)
    register_set("vtc", vtc.build)
    register_set("atp", atp.build)
