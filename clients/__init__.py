"""What a third party installs to call the engine: the `domino` command line and the conformance runner."""
