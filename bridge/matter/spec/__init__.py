"""What the Matter specification says: the cluster catalogue, wire commands, events, data."""
