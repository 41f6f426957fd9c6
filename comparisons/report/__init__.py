"""The report half: reads run folders, calls the statistics (comparisons.stats) and writes what people read: tables,
figures, the pages (a single split's, a partition design's, a benchmark's), i18n.

It reads only the run folder (comparisons.run_folder) and never imports comparisons.run. Each file is named for the
page or table it makes (docs/architecture.md lists which computes and which draws)."""
