"""The Makefile's explicit pins agree with requirements/constraints.txt (pip refuses a disagreement,
so a drift would break `make test` on a fresh machine), and dask and distributed stay a pair."""
from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _constraints() -> dict:
    pins = {}
    for line in (ROOT / "requirements" / "constraints.txt").read_text().splitlines():
        m = re.match(r"([A-Za-z0-9_.-]+)==(\S+)", line.strip())
        if m:
            pins[m.group(1).lower().replace("_", "-")] = m.group(2)
    return pins


def test_makefile_pins_match_the_constraints():
    pins = _constraints()
    found = re.findall(r'"?([A-Za-z0-9_.-]+)(?:\[[a-z,]+\])?==([0-9][^"\s]*)"?', (ROOT / "Makefile").read_text())
    assert found, "the Makefile pins nothing"
    for name, version in found:
        assert pins[name.lower().replace("_", "-")] == version, name


def test_dask_and_distributed_are_a_pair():
    pins = _constraints()
    assert pins["dask"] == pins["distributed"]
