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


class Isolated:
    """``with Isolated(args, env=...) as p:`` a process in its own group: ``p.expect_line(text,
    timeout)`` waits for a stdout line containing ``text``; ``p.finish(timeout)`` returns
    (returncode, stdout, stderr) or raises Hung. The group is always killed at the end."""

    def __init__(self, args, **kwargs):
        self.proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                     start_new_session=True, **kwargs)
        self.lines: list = []

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        kill_group(self.proc)
        self.proc.wait()

    def expect_line(self, text: str, timeout: float) -> str:
        import selectors
        import time
        deadline = time.monotonic() + timeout
        with selectors.DefaultSelector() as sel:
            sel.register(self.proc.stdout, selectors.EVENT_READ)
            while time.monotonic() < deadline:
                if not sel.select(timeout=max(0.0, deadline - time.monotonic())):
                    break
                line = self.proc.stdout.readline()
                if not line:
                    break
                self.lines.append(line)
                if text in line:
                    return line
        kill_group(self.proc)
        raise Hung(f"no line with {text!r} within {timeout} s; stdout: {''.join(self.lines)[-1000:]}; "
                   f"stderr: {self.proc.stderr.read()[-2000:]}")

    def send(self, sig) -> None:
        self.proc.send_signal(sig)

    def finish(self, timeout: float):
        try:
            out, err = self.proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            kill_group(self.proc)
            out, err = self.proc.communicate()
            raise Hung(f"no exit within {timeout} s; stderr: {err[-2000:]}") from None
        return self.proc.returncode, "".join(self.lines) + out, err


def run_json_script(tmp_path, filename: str, text: str, args, timeout):
    """Write ``text`` to ``tmp_path / filename``, run it in its own process group with its own cache
    folder and return the JSON its last stdout line holds; a hang or a failed run fails the test."""
    import json
    import sys

    import pytest

    script = tmp_path / filename
    script.write_text(text)
    env = dict(os.environ, PYGPGPU_CACHE_DIR=str(tmp_path / "cache"))
    try:
        proc = run_isolated([sys.executable, str(script), *args], timeout, env=env, cwd=tmp_path)
    except Hung as exc:
        pytest.fail(f"{' '.join(args)}: the process hung: {exc}")
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])
