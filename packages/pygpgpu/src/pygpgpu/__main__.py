"""``python -m pygpgpu``: the same as the ``pygpgpu`` command."""
from pygpgpu.cli import main

raise SystemExit(main())
