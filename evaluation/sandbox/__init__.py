"""The one OS-level sandbox for model-written code (code mode, GTA Solver/Plot, anything later)."""

from evaluation.sandbox.backend import ENV_BWRAP, Backend
from evaluation.sandbox.folders import work_folder
from evaluation.sandbox.launch import Job, Limits, Outcome, SandboxUnavailable, find_backend, run
from evaluation.sandbox.outputs import OutputFile, read_regular_file, scan_outputs

__all__ = [
    "ENV_BWRAP",
    "Backend",
    "Job",
    "Limits",
    "Outcome",
    "OutputFile",
    "SandboxUnavailable",
    "find_backend",
    "read_regular_file",
    "run",
    "scan_outputs",
    "work_folder",
]
