"""The run half: the runner, executors (local, Ray), the worker, measurement (the serving probe with it).

It writes the run folder (comparisons.run_folder) and never imports comparisons.report."""
