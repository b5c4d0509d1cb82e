"""Making tools from devices: cluster maps, converters, the generator."""
