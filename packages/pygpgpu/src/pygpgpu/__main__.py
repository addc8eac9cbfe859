"""``python -m pygpgpu``: the same as the ``pygpgpu`` command."""
from pygpgpu.cli import main

if __name__ == "__main__":      # importing the module (a docs generator walking the package) runs nothing
    raise SystemExit(main())
