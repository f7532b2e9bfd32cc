"""`python -m clients.bench ...`: the same as `domino bench ...`."""
import sys

from clients.bench import main

sys.exit(main(sys.argv[1:]))
