"""`python -m bench ...`: the same as `domino bench ...`."""
import sys

from bench import main

sys.exit(main(sys.argv[1:]))
