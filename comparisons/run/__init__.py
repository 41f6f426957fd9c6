"""The run half: planning, the runner, executors (local, Ray), the worker, measurement, the serving probe.

It writes the run folder (comparisons.run_folder) and never imports comparisons.report."""
