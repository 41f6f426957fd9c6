"""Orchestration: CLI, one worker process per run, measurement, reports, figures, course modules.

The orchestrating process imports no deep-learning framework; each worker imports one backend.
"""
