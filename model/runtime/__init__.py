"""The simulation runtime every protocol runs on: the kernel and its effects, clocks, faults, the
simulated object store, the storage client's retry policy and the history."""
