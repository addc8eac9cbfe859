"""Running a Python script in its own process group under a timeout (fork and Ctrl-C tests).

On timeout the whole group is killed, forked children included, so a hang fails the test
without leaving processes behind."""
from __future__ import annotations

import os
import signal
import subprocess


class Hung(Exception):
    """The process did not exit within the timeout (its whole process group was killed)."""


def run_isolated(args, timeout, **kwargs) -> subprocess.CompletedProcess:
    proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True, **kwargs)
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        kill_group(proc)
        out, err = proc.communicate()
        raise Hung(f"no exit within {timeout} s; stderr: {err[-2000:]}") from None
    finally:
        kill_group(proc)       # children it left behind (a forked child that hung)
    return subprocess.CompletedProcess(args, proc.returncode, out, err)


def kill_group(proc) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
