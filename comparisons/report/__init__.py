"""The report half: tables, verdicts, learning curves, figures, the page, i18n, tracking.

It reads only the run folder (comparisons.run_folder) and never imports comparisons.run."""
