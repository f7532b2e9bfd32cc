"""`python -m bench ...`: the same as `domino bench ...`."""
import sys

from bench import main

if sys.argv[1:2] == ["webhooks"]:  # issue 38's webhook figures (bench/webhooks.py: its own arguments)
    from bench import webhooks

    sys.exit(webhooks.main(sys.argv[2:]))
sys.exit(main(sys.argv[1:]))
