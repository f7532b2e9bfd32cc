"""`python -m api_gateway [flags]`: run the gateway (same as `domino serve gateway`)."""
from __future__ import annotations

import sys

from api_gateway.server import main

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
