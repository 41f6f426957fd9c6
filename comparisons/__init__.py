"""Orchestration: CLI, one worker process per run, measurement, reports, figures; the course wing in comparisons/course/.

The orchestrating process imports no deep-learning framework; each worker imports one backend.
"""
