"""Table and property tests of the pure core (no cluster needed)."""
