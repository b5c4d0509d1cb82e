"""What the home is: devices built from node data, rooms, the names people give them."""
