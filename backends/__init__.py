"""Backends: one folder per framework, all behind the contract in `backends.base`."""
