"""Qualification of (ClusterProfile, profile value) subjects: descriptor, states, board."""
