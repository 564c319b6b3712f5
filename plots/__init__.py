"""FCT-slowdown and CCT analysis and figures for rdma-lb runs (``python -m plots``)."""

from .errors import InputError

__all__ = ["InputError"]
