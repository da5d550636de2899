"""Each protocol the harness runs (lock, occ, nbcc, explore), as one registered object."""
