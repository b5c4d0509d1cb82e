"""The mesh layer: node identity, signed capability gossip, zeroconf discovery, routing."""
