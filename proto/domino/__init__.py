"""Generated protobuf packages for the domino.v1 contract (built from proto/)."""
