"""The demo project a new user explores: five small benchmarks in the seeds' styles, images drawn here."""

from annotation.demo.build import DemoReport, build_demo

__all__ = ["DemoReport", "build_demo"]
