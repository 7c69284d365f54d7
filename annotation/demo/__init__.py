"""The demo project a new user explores: a small benchmark for each benchmark plugin with a demo (the
five seeds' styles, images drawn here); ``DemoBuilder`` is what a plugin's demo function fills."""

from annotation.demo.build import DemoBuilder, DemoReport, build_demo

__all__ = ["DemoBuilder", "DemoReport", "build_demo"]
