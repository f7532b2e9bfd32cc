"""`python -m engine_service [flags]`: run the engine server (same as `domino serve engine`)."""
from __future__ import annotations

import sys

from engine_service.server import main

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
