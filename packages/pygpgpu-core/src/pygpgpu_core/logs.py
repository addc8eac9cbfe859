"""PyGPGPU's loggers and warnings.

Loggers are children of ``pygpgpu``: ``pygpgpu.translate`` (translation, generated-source cache),
``pygpgpu.opencl``, ``pygpgpu.cuda``, ``pygpgpu.hip`` (program builds, binary cache hits and
misses with their keys), ``pygpgpu.launch`` (launch geometry). They log at DEBUG, so ordinary
``logging.basicConfig(level=logging.DEBUG)`` shows them. ``PYGPGPU_DEBUG=1`` only switches that
on for ``pygpgpu``: DEBUG level and a stderr handler that stays quiet once the application has
configured logging itself (so nothing is printed twice). A build slower than
``SLOW_BUILD_SECONDS`` says so at INFO, once per build.

Nothing here runs on a warm launch: callers log on cold paths only.
"""
from __future__ import annotations

import logging
import os
import sys
import warnings
from types import FrameType
from typing import Any, Callable

from .errors import PyGPGPUWarning

__all__ = ["ROOT", "SLOW_BUILD_SECONDS", "get_logger", "log_build", "logged_launcher", "warn", "user_stacklevel"]

ROOT = "pygpgpu"
SLOW_BUILD_SECONDS = 1.0
_configured = False


class _QuietWhenConfigured(logging.Filter):
    """The PYGPGPU_DEBUG handler defers to the application's own handlers on the root logger."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not logging.getLogger().handlers


def _configure_from_env() -> None:
    global _configured
    _configured = True
    if os.environ.get("PYGPGPU_DEBUG", "").strip() in ("", "0"):
        return
    logger = logging.getLogger(ROOT)
    handler = logging.StreamHandler()
    handler.setFormatter(logging.Formatter("%(name)s: %(message)s"))
    handler.addFilter(_QuietWhenConfigured())
    logger.addHandler(handler)
    logger.setLevel(logging.DEBUG)


def get_logger(name: str) -> logging.Logger:
    """``pygpgpu.<name>``; the first call applies ``PYGPGPU_DEBUG``."""
    if not _configured:
        _configure_from_env()
    return logging.getLogger(f"{ROOT}.{name}")


def log_build(log: logging.Logger, what: str, where: str, seconds: float, key: str = "") -> None:
    """A finished compile: DEBUG always, INFO when it took longer than ``SLOW_BUILD_SECONDS``."""
    if seconds >= SLOW_BUILD_SECONDS:
        log.info("building %s for %s took %.1f s; the binary is cached, so later runs load it", what, where, seconds)
    elif log.isEnabledFor(logging.DEBUG):
        log.debug("built %s for %s in %.1f ms%s", what, where, seconds * 1e3, f" (cache key {key})" if key else "")


def user_stacklevel() -> int:
    """The ``stacklevel`` for ``warnings.warn`` called by this function's caller that names the
    first frame outside PyGPGPU (and importlib): the user's own line."""
    level = 2
    frame: FrameType | None = sys._getframe(2)    # 2: the caller of the function that warns
    while frame is not None and frame.f_globals.get("__name__", "").startswith(("pygpgpu", "importlib")):
        if not _skipped_by_warnings(frame):
            level += 1
        frame = frame.f_back
    return level


def _skipped_by_warnings(frame: FrameType) -> bool:
    """Whether ``warnings.warn`` itself leaves ``frame`` out when it counts ``stacklevel``: it
    skips importlib's bootstrap frames (those of an ``import`` statement), so counting them too
    would point past the user's line."""
    filename = frame.f_code.co_filename
    return "importlib" in filename and "_bootstrap" in filename


def warn(message: str, category: "type[Warning]" = PyGPGPUWarning) -> None:
    """``warnings.warn`` attributed to the user's line that led here."""
    warnings.warn(message, category, stacklevel=user_stacklevel())


def logged_launcher(launch: Callable[..., Any], kernel: str, where: str) -> Callable[..., Any]:
    """``launch(global, local, args)`` that first logs the geometry on ``pygpgpu.launch``.
    Only put in place when DEBUG is on as a kernel is first prepared: plain runs keep ``launch``."""
    log = get_logger("launch")

    def launch_and_log(global_size: Any, local_size: Any, args: Any) -> Any:
        log.debug("launch %s on %s: global %s, local %s", kernel, where, global_size,
                  "automatic" if local_size is None else local_size)
        return launch(global_size, local_size, args)

    return launch_and_log
