"""Matter layer: client adapter, device model, cluster maps, tool generator, bridge."""
